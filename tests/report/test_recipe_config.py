"""Recipe scripts resolved as ``DRY_RUN=1`` resolves them, on small scripts that stand in for the trainer.

The real recipes are resolved in tests/recipes (through tests/recipes/resolved.py, which uses this module)
and by the config-diff CLI tests; these check the contract without importing verl.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from strata.report.recipe_config import RecipeError, is_recipe, last_error_line, resolve_recipe
from strata.trainer.main import RESOLVED_CONFIG_MARKER


def script(tmp_path: Path, body: str, name: str = "recipe.sh") -> Path:
    path = tmp_path / name
    path.write_text(f"#!/usr/bin/env bash\n# strata-recipe: train\nset -euo pipefail\n{body}\n")
    return path


def test_the_dry_run_sees_dry_run_this_python_and_the_arguments(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("PY", raising=False)
    recipe = script(tmp_path, f"echo noise before\necho '{RESOLVED_CONFIG_MARKER}'\n"
                              "echo \"dry_run: '$DRY_RUN'\"\necho \"python: $PY\"\necho \"args: [$*]\"\n"
                              "echo \"model: $MODEL\"")
    config = resolve_recipe(recipe, ["a=1", "b=2"], env={"MODEL": "m"})
    assert config == {"dry_run": "1", "python": sys.executable, "args": ["a=1 b=2"], "model": "m"}


def test_a_python_named_by_the_user_wins(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PY", "/opt/py")
    recipe = script(tmp_path, f"echo '{RESOLVED_CONFIG_MARKER}'\necho \"python: $PY\"")
    assert resolve_recipe(recipe) == {"python": "/opt/py"}


@pytest.mark.parametrize(("body", "message"), [
    ("echo hello", "printed no resolved config: not a strata recipe"),
    (f"echo '{RESOLVED_CONFIG_MARKER}'", "printed no config keys"),
    (f"echo '{RESOLVED_CONFIG_MARKER}'\necho '- a list'", "printed no config keys"),
    ("echo 'Traceback (most recent call last):' >&2\necho '  File \"x.py\", line 1' >&2\n"
     "echo 'ValueError: boom' >&2\necho 'UserWarning: later noise' >&2\nexit 3",
     "failed with exit status 3: ValueError: boom"),
    ("echo 'strata: Unknown config key' | cat\nexit 2", "failed with exit status 2: strata: Unknown config key"),
])
def test_what_gives_no_config_is_a_one_line_error(tmp_path: Path, body: str, message: str) -> None:
    recipe = script(tmp_path, body)
    with pytest.raises(RecipeError) as error:
        resolve_recipe(recipe)
    text = str(error.value)
    assert text.startswith(f"{recipe}: its dry run (DRY_RUN=1 bash {recipe}) ") and message in text
    assert "\n" not in text


def test_bash_complaints_are_quoted(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match=r"exit status 1: .*line 4: 1: usage: recipe CHECKPOINT$"):
        resolve_recipe(script(tmp_path, "echo ${1:?usage: recipe CHECKPOINT}"))


def test_a_missing_script(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match="no recipe script at"):
        resolve_recipe(tmp_path / "nope.sh")


def test_a_script_without_the_recipe_line_is_refused_unrun(tmp_path: Path) -> None:
    path = tmp_path / "recipe.sh"
    path.write_text(f"#!/usr/bin/env bash\ntouch {tmp_path}/ran\necho '{RESOLVED_CONFIG_MARKER}'\necho 'a: 1'\n")
    with pytest.raises(RecipeError, match=r"recipe\.sh is not a strata recipe \(no `# strata-recipe:` line"):
        resolve_recipe(path)
    assert not (tmp_path / "ran").exists()


def test_what_counts_as_a_recipe(tmp_path: Path) -> None:
    assert is_recipe(tmp_path / "missing.sh")
    assert is_recipe(script(tmp_path, "true", name="launch"))  # a shebang, no suffix
    (tmp_path / "config.yaml").write_text("a: 1\n")
    assert not is_recipe(tmp_path / "config.yaml") and not is_recipe("strata_trainer")


def test_last_error_line() -> None:
    assert last_error_line("Traceback:\n  File x\n    raise E\nKeyError: 'k'\n\n") == "KeyError: 'k'"
    assert last_error_line("strata: bad key\nFutureWarning: x\n") == "strata: bad key"
    assert last_error_line("   only indented\n") == "only indented"
    assert last_error_line("") == "(it printed nothing)"
