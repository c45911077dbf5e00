"""Shared fixtures: assets are built once per test session in a temporary folder."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "disabled")

# Mutation runs (scripts/mutation.sh) start one pytest session per mutant, each in a process forked from one
# that has run the tests once. With STRATA_TEST_ASSET_CACHE set to a folder, the costly session assets are
# built there once and kept in this module, so a mutant costs its own tests, not a tokenizer or model rebuild.
_ASSET_CACHE = os.environ.get("STRATA_TEST_ASSET_CACHE")
_MEMO: dict[str, Any] = {}


def _once(name: str, make: Callable[[], Any]) -> Any:
    """``make()`` for this session, or only once per process when STRATA_TEST_ASSET_CACHE is set."""
    if not _ASSET_CACHE:
        return make()
    if name not in _MEMO:
        _MEMO[name] = make()
    return _MEMO[name]


def _folder(name: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh temporary folder, or a fixed one under STRATA_TEST_ASSET_CACHE (kept across sessions)."""
    return Path(_ASSET_CACHE) / name if _ASSET_CACHE else tmp_path_factory.mktemp(name)


def pytest_configure(config: pytest.Config) -> None:
    """The session's folder of resolved recipes (`tests.recipes.resolved`), made by the process that runs
    first: plain pytest, or xdist's controller, whose workers inherit the variable and share the folder."""
    from tests.recipes.resolved import CACHE_VARIABLE

    if CACHE_VARIABLE not in os.environ:
        os.environ[CACHE_VARIABLE] = tempfile.mkdtemp(prefix="strata-recipes-")
        config.stash[_RECIPE_CACHE_OWNER] = True


def pytest_unconfigure(config: pytest.Config) -> None:
    from tests.recipes.resolved import CACHE_VARIABLE

    if config.stash.get(_RECIPE_CACHE_OWNER, False):
        shutil.rmtree(os.environ.pop(CACHE_VARIABLE), ignore_errors=True)


_RECIPE_CACHE_OWNER = pytest.StashKey[bool]()


@pytest.fixture
def gpu_run_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """For a test of a GPU run's checks: no ``VERL_PLATFORM`` in this process's environment, so only the test's
    config decides the platform. A trainer run earlier in the same process leaves ``VERL_PLATFORM=cpu`` there
    (`strata.trainer.main.use_configured_platform` exports it for verl, which fixes its platform on first use)."""
    monkeypatch.delenv("VERL_PLATFORM", raising=False)


@pytest.fixture(scope="session")
def asset_once() -> Callable[[str, Callable[[], Any]], Any]:
    """``asset_once(name, make)``: a session asset that mutation runs build once and share (see ``_once``)."""
    return _once


@pytest.fixture(scope="session")
def asset_folder(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``asset_folder(name)``: where an ``asset_once`` asset is written (kept across mutation runs' sessions)."""
    return lambda name: _folder(name, tmp_path_factory)


@pytest.fixture(scope="session")
def qwen_tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the real Qwen2.5-Instruct tokenizer (rebuilt offline)."""
    from strata.assets import build_qwen25_tokenizer

    return _once("qwen25-tokenizer", lambda: build_qwen25_tokenizer(_folder("qwen25-tokenizer", tmp_path_factory)))


@pytest.fixture(scope="session")
def qwen_tokenizer(qwen_tokenizer_dir: Path):
    from transformers import AutoTokenizer

    return _once("qwen25-tokenizer-loaded", lambda: AutoTokenizer.from_pretrained(qwen_tokenizer_dir))


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Qwen2ForCausalLM (seed 0) with the Qwen2.5 tokenizer, saved as safetensors."""
    from strata.assets import build_tiny_model

    return _once("tiny-qwen2", lambda: build_tiny_model(_folder("tiny-qwen2", tmp_path_factory), seed=0))
