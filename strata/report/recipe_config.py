"""Resolve a recipe script to the configuration it would train with, exactly as ``DRY_RUN=1`` shows it.

A recipe (``recipes/train-*.sh``, ``recipes/evaluate-*.sh``, each declared by a ``# strata-recipe:`` line
that `strata.recipes.check_recipe` reads before anything runs) sets its variables and calls
``python -m strata.trainer.main ... "$@"``; with ``DRY_RUN=1`` the trainer composes and validates the config,
prints it as YAML after :data:`strata.trainer.main.RESOLVED_CONFIG_MARKER` and exits, and the recipes skip
what follows the trainer.
Running the script itself, rather than re-reading its arguments, keeps its variables, working folder and
helper scripts (the evaluation recipes run the training ones) as the user runs them. ``config-diff`` and the
recipe tests both resolve recipes here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from strata.recipes import RecipeError, check_recipe
from strata.trainer.main import RESOLVED_CONFIG_MARKER

RESOLVE_TIMEOUT_S = 300
_SHELL_SHEBANG = re.compile(r"^#!.*\b(ba|z|da|k)?sh\b")
_WARNING = re.compile(r"warn", re.IGNORECASE)


def is_recipe(path: str | Path) -> bool:
    """A shell script: a ``.sh`` name, or an existing file whose first line is a shell shebang.

    This only says a source is meant as a recipe (rather than a config file or name);
    :func:`resolve_recipe` still refuses one that does not declare itself (`strata.recipes.check_recipe`).
    """
    path = Path(path)
    if path.suffix == ".sh":
        return True
    try:
        with path.open("rb") as file:
            first_line = file.readline(200).decode("utf-8", errors="replace")
    except OSError:
        return False
    return bool(_SHELL_SHEBANG.match(first_line))


def last_error_line(output: str) -> str:
    """The line of a failed run's output that says what went wrong.

    The last non-blank line that is neither indented (a traceback's code lines) nor a warning: the
    exception line of a Python traceback, ``strata: ...`` from a config error, or bash's own complaint.
    """
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    for line in reversed(lines):
        if not line[0].isspace() and not _WARNING.search(line):
            return line
    return lines[-1].strip() if lines else "(it printed nothing)"


def resolve_recipe(
    recipe: str | Path,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout_s: float = RESOLVE_TIMEOUT_S,
) -> dict[str, Any]:
    """The resolved config of ``bash RECIPE ARGS`` under ``DRY_RUN=1``, as a nested dict.

    Args:
        recipe: the recipe script.
        args: what the user would pass after it (Hydra overrides, or an evaluation recipe's CHECKPOINT SEED).
        env: extra environment variables (``MODEL``, ``OUT``, ...). ``PY`` defaults to this interpreter, so
            the recipe runs the strata installed here.
        timeout_s: how long the dry run may take (it imports verl, ~15 s).

    Raises:
        RecipeError: ``recipe`` is no strata recipe (no such file, or no ``# strata-recipe:`` line: see
            `strata.recipes.check_recipe`, checked before anything runs), or the dry run failed (the message
            quotes its error line), timed out, or printed no resolved mapping.
    """
    path = Path(recipe)
    check_recipe(path)  # read, not run: a Makefile or the demo script must never reach bash
    run_env = {**os.environ, "DRY_RUN": "1", **(env or {})}
    run_env.setdefault("PY", sys.executable)
    what = f"{path}: its dry run (DRY_RUN=1 bash {path})"
    try:
        result = subprocess.run(["bash", str(path), *args], env=run_env, capture_output=True, text=True,
                                timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise RecipeError(f"{what} did not finish in {timeout_s:g} s") from None
    output = result.stdout + result.stderr
    if result.returncode != 0:
        # Some recipes pipe the trainer through `tee`, which puts its errors on stdout.
        reason = last_error_line(result.stderr if result.stderr.strip() else result.stdout)
        raise RecipeError(f"{what} failed with exit status {result.returncode}: {reason}", output)
    _, marker, printed = result.stdout.partition(RESOLVED_CONFIG_MARKER)
    if not marker:
        raise RecipeError(f"{what} printed no resolved config: not a strata recipe "
                          f"(a recipe runs `$PY -m strata.trainer.main ${{DRY_RUN:+--dry-run}} ...`)", output)
    try:
        config = yaml.safe_load(printed)
    except yaml.YAMLError as error:
        raise RecipeError(f"{what} printed a config that is not YAML: {error}".replace("\n", " "), output) from None
    if not isinstance(config, dict) or not config:
        raise RecipeError(f"{what} printed no config keys after {RESOLVED_CONFIG_MARKER!r}", output)
    return config
