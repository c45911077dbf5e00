"""Recipes resolved as the trainer would run them (``DRY_RUN=1``), once per test session.

Each resolution runs the recipe with a warm interpreter (`tests.recipes.warm_python`: ~3 s instead of ~12 s of
imports and composing), and several test files check the same recipes, so results are cached by recipe and
arguments; callers must not modify what they get. `make test`
runs the fast tests on two xdist workers, so the cache is a folder both share (`CACHE_VARIABLE`, made by
tests/conftest.py for the session), one JSON file per resolution, written under a lock by whichever worker
asks first. The resolution itself is the library's (`strata.report.recipe_config`), the one `strata
config-diff` uses.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
from pathlib import Path

from strata.report.recipe_config import RecipeError, resolve_recipe
from strata.trainer.run_processes import marked_processes
from tests.recipes import warm_python

REPO = Path(__file__).resolve().parents[2]
RECIPES = sorted(p.name for p in (REPO / "recipes").glob("*.sh"))
EVALUATION_ARGS = ("/ckpt/global_step_150", "3")
"""What every test passes an evaluation recipe (checkpoint, seed): one set, so each recipe resolves once."""
CACHE_VARIABLE = "STRATA_TEST_RECIPE_CACHE"


def recipe_args(recipe: str) -> tuple[str, ...]:
    """The positional arguments the tests give ``recipe``: `EVALUATION_ARGS` for an evaluation recipe."""
    return EVALUATION_ARGS if recipe.startswith("evaluate") else ()


OUTPUT_FOLDERS = ("outputs", "checkpoints", "data", "eval")
"""Where a recipe writes by default, relative to the repository (its OUT, CKPT, DATA and evaluation folders)."""


def repository_outputs() -> set[str]:
    """The repository's top-level entries, and every entry of its `OUTPUT_FOLDERS` two levels deep."""
    entries = {p.name for p in REPO.iterdir()}
    for folder in OUTPUT_FOLDERS:
        if (REPO / folder).is_dir():
            entries |= {str(p.relative_to(REPO)) for p in (REPO / folder).glob("*/*")}
            entries |= {str(p.relative_to(REPO)) for p in (REPO / folder).iterdir()}
    return entries


MARK_VARIABLE = "STRATA_TEST_DRY_RUN"
"""Set to the resolution's key in the recipe's environment: every process the recipe starts inherits it, so one
still running after the recipe returned is found by it (`processes_marked`)."""


def processes_marked(mark: str) -> list[str]:
    """``PID command`` of the running processes whose environment has ``MARK_VARIABLE=mark``."""
    found = []
    for pid in sorted(marked_processes(f"{MARK_VARIABLE}={mark}")):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ended meanwhile
            continue
        found.append(f"{pid} {command[:80]}")
    return found


@functools.cache
def resolve(recipe: str, *args: str, **variables: str) -> dict:
    """``recipes/RECIPE`` with ``args`` (and environment ``variables``, e.g. SPLIT) resolved.

    Every resolution is also a check that a dry run writes nothing and starts nothing (recipes/lib/dry-run.sh): the
    recipe's ``OUT`` and ``ASSETS`` are fresh paths, which must not exist once it has run (its model, task lists,
    log, folders); the repository's default output folders must not change (`repository_outputs`); and no process
    it started may outlive it (a Ray node, a backgrounded job)."""
    folder = Path(os.environ[CACHE_VARIABLE]) / "resolved"  # per session: a kept folder would serve stale recipes
    folder.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256(json.dumps([recipe, *args, sorted(variables.items())]).encode()).hexdigest()[:16]
    done = folder / f"{key}.json"
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker waits for this resolution instead of repeating it
        if done.is_file():
            return json.loads(done.read_text())
        written = {name: folder / "written-by-dry-run" / key / name.lower() for name in ("OUT", "ASSETS")}
        env = {"PY": warm_python.command(), **{name: str(path) for name, path in written.items()}, **variables,
               MARK_VARIABLE: key}
        before = repository_outputs()
        try:
            config = resolve_recipe(REPO / "recipes" / recipe, args, env=env)
        except RecipeError as error:
            raise AssertionError(f"{error}\n{error.output[-3000:]}") from None
        made = [f"{name}={path}" for name, path in written.items() if path.exists()]
        assert not made, f"DRY_RUN=1 bash recipes/{recipe} wrote {', '.join(made)}: a dry run must write nothing"
        changed = sorted(repository_outputs() ^ before)
        assert not changed, f"DRY_RUN=1 bash recipes/{recipe} changed {changed[:5]} in the repository"
        left = processes_marked(key)
        assert not left, f"DRY_RUN=1 bash recipes/{recipe} left processes running: {left}; a dry run starts nothing"
        partial = done.with_suffix(".partial")
        partial.write_text(json.dumps(config))
        partial.replace(done)
        return config
