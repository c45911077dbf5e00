"""Workflow fixtures: the real ALFWorld engine on the bundled games, the real Qwen2.5 tokenizer."""

from __future__ import annotations

import pytest

from strata.envs.alfworld.bundled import bundled_data_path
from strata.envs.alfworld.discovery import load_split
from strata.envs.pool import EnvPool


@pytest.fixture(scope="session")
def bundled_valid_tasks(asset_once, asset_folder):
    return asset_once("games", lambda: load_split(bundled_data_path(asset_folder("games")), "valid_seen"))


@pytest.fixture(scope="module")
def env_pool():
    with EnvPool(num_workers=1, step_timeout_s=60, max_steps=50) as pool:
        yield pool
