"""The recipe tests' warm interpreter (`tests.recipes.warm_python`) runs a command line as ``python`` would, so a
recipe resolves to the same config with it as with the real interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from strata.report.recipe_config import resolve_recipe
from tests.recipes import warm_python
from tests.recipes.resolved import REPO, resolve


def run(*argv: str, cwd: Path, stdin: str = "", **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([*warm_python.command().split(), *argv], cwd=cwd, env={**os.environ, **env}, input=stdin,
                          capture_output=True, text=True, timeout=60, check=False)


def test_a_command_line_gets_the_callers_folder_environment_arguments_and_streams(tmp_path) -> None:
    code = ("import os, sys; print(os.getcwd(), os.environ['PROBE'], sys.argv[1:], sys.stdin.read()); "
            "print('to stderr', file=sys.stderr); sys.exit(3)")
    result = run("-c", code, "a", "b", cwd=tmp_path, stdin="piped", PROBE="set")
    assert (result.returncode, result.stdout, result.stderr) == (3, f"{tmp_path} set ['a', 'b'] piped\n",
                                                                 "to stderr\n")
    result = run("-m", "json.tool", "--compact", cwd=tmp_path, stdin='{"a": [1, 2]}')
    assert (result.returncode, result.stdout) == (0, '{"a":[1,2]}\n'), result.stderr


def test_a_module_is_found_from_the_callers_folder_and_an_error_is_a_traceback(tmp_path) -> None:
    (tmp_path / "local_probe.py").write_text("import sys\nprint(__name__)\nraise ValueError('boom')\n")
    result = run("-m", "local_probe", cwd=tmp_path)
    assert result.returncode == 1 and result.stdout == "__main__\n"
    assert result.stderr.rstrip().endswith("ValueError: boom")


def test_other_command_lines_run_the_real_interpreter(tmp_path) -> None:
    result = run("--version", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.strip() == f"Python {sys.version.split()[0]}"


def test_a_recipe_resolves_to_the_same_config_as_with_the_real_interpreter() -> None:
    recipe = "train-strata-alfworld-text-qwen2.5-1.5b.sh"
    assert resolve(recipe) == resolve_recipe(REPO / "recipes" / recipe, env={"PY": sys.executable})
