"""Integration fixtures: a cheap ALFWorld agent that plays, built once per session; and a safety net that removes
shared memory a trainer run left behind."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from strata.trainer.shared_memory import remove_leftovers, shared_segments
from tests.integration.trainer_runs import TEST_AGENT


@pytest.fixture(scope="session")
def playing_agent(asset_once: Callable[[str, Callable[[], Any]], Any],
                  asset_folder: Callable[[str], Path]) -> Path:
    """The built agent's folder (`strata.assets.alfworld_agent` layout: ``model/``, ``train.parquet``,
    ``valid_seen.parquet``, ``agent.json``), built from nothing once per session."""
    from strata.assets.alfworld_agent import MANIFEST, AgentRecipe, build_alfworld_agent

    recipe = AgentRecipe(**TEST_AGENT)

    def build(root: Path) -> Path:
        manifest = root / MANIFEST  # written last: a folder with it is complete
        if manifest.is_file() and json.loads(manifest.read_text())["recipe"] == json.loads(json.dumps(asdict(recipe))):
            return root  # kept under STRATA_TEST_ASSET_CACHE by an earlier session
        began = time.perf_counter()
        root = build_alfworld_agent(root, recipe)
        logging.getLogger(__name__).warning("test agent built in %.0f s", time.perf_counter() - began)
        return root

    return asset_once("alfworld-agent", lambda: build(asset_folder("alfworld-agent")))


@pytest.fixture(scope="module", autouse=True)
def remove_leftover_shared_memory() -> Iterator[None]:
    """A safety net for runs that did not end by themselves (a test's timeout, a killed trainer): remove the
    segments a module's runs created and left behind (those present before stay)."""
    before = shared_segments()
    yield
    remove_leftovers(before, wait_s=0.0)
