"""A recipe edited while a run reads it: bash reads a script as it goes, so a file rewritten in place under a
running recipe used to be read on from the old byte offset once the trainer returned, and whatever stood there
ran (a run of the learning benchmark ended with exit 127 that way, its outcomes unwritten). Every recipe is one
brace group that ends in ``exit``: bash reads the whole group before it runs any of it."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.recipes.resolved import REPO

SCRIPTS = sorted((REPO / "recipes").glob("*.sh")) + [REPO / "recipes" / "lib" / "evaluate-strata-alfworld.sh"]
BLOCK_START = "{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does"

# The recipe's Python: `-c` answers the history-window question; the "trainer" rewrites the recipe in place (the
# same file, as an editor that saves in place does) with lines that would each leave a mark if they ran.
FAKE_PYTHON = """#!/usr/bin/env bash
if [ "$1" = -c ]; then echo 2; exit 0; fi
lines=$(wc -l < "$RECIPE_UNDER_TEST")
for _ in $(seq $((4 * lines))); do echo "touch '$MARK'"; done > "$RECIPE_UNDER_TEST.lines"
cat "$RECIPE_UNDER_TEST.lines" > "$RECIPE_UNDER_TEST"
"""


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_recipe_is_one_block_that_ends_in_exit(script: Path) -> None:
    lines = script.read_text().rstrip("\n").split("\n")
    assert lines[-2:] == ["exit", "}"], script.name
    assert lines[lines.index("set -euo pipefail") - 1] == BLOCK_START, script.name


def test_a_recipe_rewritten_while_it_runs_ends_as_it_was_read(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "recipes" / "lib").mkdir(parents=True)
    recipe = repo / "recipes" / "train-strata-alfworld-agent-cpu.sh"
    shutil.copy(REPO / "recipes" / recipe.name, recipe)
    shutil.copy(REPO / "recipes" / "lib" / "dry-run.sh", repo / "recipes" / "lib" / "dry-run.sh")
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "agent.json").write_text('{"recipe": {"history_window": 2}}')
    python = tmp_path / "python"
    python.write_text(FAKE_PYTHON)
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    mark = tmp_path / "ran-the-edited-file"
    env = {**os.environ, "PY": str(python), "AGENT": str(agent), "OUT": str(tmp_path / "run"),
           "RECIPE_UNDER_TEST": str(recipe), "MARK": str(mark)}
    env.pop("DRY_RUN", None)
    done = subprocess.run(["bash", str(recipe)], env=env, capture_output=True, text=True, timeout=60)
    assert recipe.read_text().startswith("touch ")  # the file was rewritten under the run
    assert done.returncode == 0, done.stderr[-2000:]
    assert not mark.exists()
