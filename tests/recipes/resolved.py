"""Recipes resolved as the trainer would run them (``DRY_RUN=1``), once per test session.

Each resolution starts a Python process that imports verl (~15 s), and several test files check the same
recipes, so results are cached by recipe and arguments; callers must not modify what they get.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import yaml

from strata.trainer.main import RESOLVED_CONFIG_MARKER

REPO = Path(__file__).resolve().parents[2]
RECIPES = sorted(p.name for p in (REPO / "recipes").glob("*.sh"))


@functools.cache
def resolve(recipe: str, *args: str) -> dict:
    env = dict(os.environ, DRY_RUN="1", PY=sys.executable, OUT=str(REPO / "outputs/dry-run"))
    result = subprocess.run(["bash", str(REPO / "recipes" / recipe), *args], env=env, capture_output=True,
                            text=True, timeout=300, cwd=REPO)
    assert result.returncode == 0, result.stderr[-3000:]
    return yaml.safe_load(result.stdout.split(RESOLVED_CONFIG_MARKER, 1)[1])
