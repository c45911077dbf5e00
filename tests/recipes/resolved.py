"""Recipes resolved as the trainer would run them (``DRY_RUN=1``), once per test session.

Each resolution starts a Python process that imports verl (~15 s), and several test files check the same
recipes, so results are cached by recipe and arguments; callers must not modify what they get. The
resolution itself is the library's (`strata.report.recipe_config`), the one `strata config-diff` uses.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from strata.report.recipe_config import RecipeError, resolve_recipe

REPO = Path(__file__).resolve().parents[2]
RECIPES = sorted(p.name for p in (REPO / "recipes").glob("*.sh"))


@functools.cache
def resolve(recipe: str, *args: str) -> dict:
    """``recipes/RECIPE`` with ``args`` resolved; the tiny recipe's files go to ``outputs/dry-run``."""
    env = {"PY": sys.executable, "OUT": str(REPO / "outputs/dry-run")}
    try:
        return resolve_recipe(REPO / "recipes" / recipe, args, env=env)
    except RecipeError as error:
        raise AssertionError(f"{error}\n{error.output[-3000:]}") from None
