"""Fixtures for the environment tests: real engine, generated games, no mocks.

Importing alfworld creates ``$ALFWORLD_DATA`` (default ``~/.cache/alfworld``); when it is unset the tests
point it at a temporary folder first. A real data folder someone has set is left alone (only read).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

_SCRATCH = None if "ALFWORLD_DATA" in os.environ else tempfile.mkdtemp(prefix="strata-alfworld-data-")
if _SCRATCH:
    os.environ["ALFWORLD_DATA"] = _SCRATCH


@pytest.fixture(scope="session", autouse=True)
def _remove_alfworld_scratch() -> Iterator[None]:
    yield
    if _SCRATCH:
        shutil.rmtree(_SCRATCH, ignore_errors=True)


@pytest.fixture(scope="session")
def bundled_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled games, unpacked into a temporary cache."""
    from strata.envs.alfworld.bundled import bundled_data_path

    return bundled_data_path(cache_dir=tmp_path_factory.mktemp("strata-cache"))


@pytest.fixture(scope="session")
def engine():
    """One in-process engine, reused across games (as the workers do)."""
    from strata.envs.alfworld.engine import AlfworldEngine

    return AlfworldEngine()


@pytest.fixture(scope="session")
def put_games_root(tmp_path_factory: pytest.TempPathFactory, engine) -> Path:
    """Six games in the data-2.1.1 grammar ("put X in/on Y"), one per task type."""
    from strata.envs.alfworld.gen.generate import generate_split

    root = tmp_path_factory.mktemp("games-2.1.1")
    generate_split(root, "valid_seen", 6, seed=7, grammar_version="2.1.1", engine=engine)
    return root
