"""Only a declared recipe is ever run: `strata doctor` and `strata config-diff` run a recipe with bash to see its
config, so a Makefile, the demo script or an undeclared script must be refused, read but never run.

Every case builds a tree whose files would change if bash ran the refused file (a user's checkpoint deleted,
a file created, the demo's folder cleared) and compares the tree, mtimes included, before and after. No
trainer, no verl run: each refusal happens before anything starts.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from strata.cli import main
from strata.recipes import RecipeError, check_recipe, declared_kind

REPO = Path(__file__).resolve().parents[2]
RECIPES = REPO / "recipes"
TRAIN_RECIPE = RECIPES / "train-strata-alfworld-text-tiny-cpu.sh"
MARKER = "# strata-recipe: train"


def snapshot(root: Path) -> list[tuple[str, int, int]]:
    """Every folder and file under ``root``: relative path, mtime (ns) and size."""
    entries = []
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder, name)
            info = path.lstat()
            entries.append((str(path.relative_to(root)), info.st_mtime_ns, info.st_size))
    return sorted(entries)


def sabotage(tmp_path: Path, lines: list[str]) -> list[str]:
    """``lines`` (a recipe after its header) with, first, what bash would do to the tree."""
    at = lines.index("set -euo pipefail") + 1
    return [*lines[:at], f"touch {tmp_path}/created-by-bash", f"rm -rf {tmp_path}/outputs/user-run", *lines[at:]]


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project copy with a user's run, the demo's folder and three files that are not recipes."""
    monkeypatch.chdir(tmp_path)
    for variable in ("OUT", "DRY_RUN", "STRATA_DOCTOR"):
        monkeypatch.delenv(variable, raising=False)
    checkpoint = tmp_path / "outputs/user-run/global_step_40"
    checkpoint.mkdir(parents=True)
    (checkpoint / "model.pt").write_text("a week of training")
    (tmp_path / "outputs/demo/alfworld").mkdir(parents=True)
    (tmp_path / "outputs/demo/alfworld/metrics.jsonl").write_text("{}\n")

    # `bash Makefile` runs its tab-indented recipe lines: this is how a user lost every run.
    (tmp_path / "Makefile").write_text(f".PHONY: clean\nclean:\n\trm -rf {tmp_path}/outputs\n")
    (tmp_path / "recipes").mkdir()
    # The demo clears outputs/demo/alfworld (its `cd` lands in tmp_path) before it trains.
    shutil.copy(RECIPES / "demo-cpu.sh", tmp_path / "recipes/demo-cpu.sh")
    lines = TRAIN_RECIPE.read_text().splitlines()
    assert MARKER in lines
    unmarked = [line for line in lines if line != MARKER]
    (tmp_path / "recipes/train-unmarked.sh").write_text("\n".join(sabotage(tmp_path, unmarked)) + "\n")
    # The line below the first command is not the recipe's header: it declares nothing.
    late = sabotage(tmp_path, unmarked)
    late.insert(late.index("set -euo pipefail") + 1, MARKER)
    (tmp_path / "recipes/train-late-marker.sh").write_text("\n".join(late) + "\n")
    return tmp_path


NOT_RECIPES = ["Makefile", "recipes/demo-cpu.sh", "recipes/train-unmarked.sh", "recipes/train-late-marker.sh"]
TOOLS = {"doctor": lambda path: ["doctor", path, "trainer.nnodes=1"],
         "config-diff": lambda path: ["config-diff", path, "strata_trainer"]}


@pytest.mark.parametrize("tool", sorted(TOOLS))
@pytest.mark.parametrize("name", NOT_RECIPES)
def test_what_is_not_a_recipe_is_refused_unrun(tree: Path, capsys, tool: str, name: str) -> None:
    before = snapshot(tree)
    path = str(tree / name)
    assert main(TOOLS[tool](path)) == 2
    out, err = capsys.readouterr()
    assert snapshot(tree) == before
    assert (tree / "outputs/user-run/global_step_40/model.pt").is_file()
    assert not (tree / "created-by-bash").exists()
    assert out == ""
    assert err.startswith(f"error: {path}") and err.count("\n") == 1 and err.count("error:") == 1, err
    assert "recipes/train-*.sh" in err and "`# strata-recipe: train`" in err, err


def test_the_recipe_copied_with_its_line_is_a_recipe(tree: Path) -> None:
    """The refusal above is the line's doing: the recipe copied whole is accepted."""
    marked = tree / "recipes/train-marked.sh"
    marked.write_text(TRAIN_RECIPE.read_text())
    assert check_recipe(marked) == "train"
    with pytest.raises(RecipeError, match=r"train-unmarked\.sh is not a strata recipe \(no `# strata-recipe:`"):
        check_recipe(tree / "recipes/train-unmarked.sh")


def test_a_folder_a_fifo_and_a_missing_file_are_refused(tree: Path, capsys) -> None:
    fifo = tree / "pipe.sh"
    os.mkfifo(fifo)  # reading it would wait for a writer forever
    for path, why in ((tree / "recipes", "a folder"), (fifo, "not a regular file"),
                      (tree / "nope.sh", "no recipe script at")):
        with pytest.raises(RecipeError, match=why):
            check_recipe(path)
        assert main(["doctor", str(path)]) == 2
        assert capsys.readouterr().err.count("error:") == 1


def test_a_mistyped_recipe_gets_a_did_you_mean(capsys) -> None:
    repo = Path(__file__).resolve().parents[2]
    for typed in ("recipes/train-strata-alfworld-text-tiny-cpu", "recipes/train-strata-alfword-text-tiny-cpu.sh"):
        with pytest.raises(RecipeError, match=r"\(did you mean .*recipes/train-strata-alfworld-text-tiny-cpu\.sh\?\)"):
            check_recipe(repo / typed)


def test_the_doctor_without_a_recipe_says_what_to_give(capsys) -> None:
    assert main(["doctor"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: give a recipe script") and err.count("\n") == 1


@pytest.mark.parametrize(("text", "kind"), [
    ("#!/usr/bin/env bash\n# strata-recipe: train\nset -e\n", "train"),
    ("#!/usr/bin/env bash\n# Evaluate it.\n#\n  #   strata-recipe:   evaluate  \n", "evaluate"),
    ("\n# strata-recipe: evaluate\n", "evaluate"),
    ("#!/usr/bin/env bash\nset -e\n# strata-recipe: train\n", None),  # below the first command
    ("#!/usr/bin/env bash\ncat <<EOF\n# strata-recipe: train\nEOF\n", None),
    ("#!/usr/bin/env bash\n# strata-recipe: demo\n", None),
    ("#!/usr/bin/env bash\n# strata-recipe: training\n", None),
    ("#!/usr/bin/env bash\n# see the strata-recipe: train line of recipes/\n", None),
    ("", None),
])
def test_only_the_header_declares_a_recipe(text: str, kind: str | None) -> None:
    assert declared_kind(text) == kind


# --- the recipes in recipes/ ------------------------------------------------------------------------

def test_every_train_and_evaluate_recipe_declares_its_kind() -> None:
    recipes = [*sorted(RECIPES.glob("train-*.sh")), *sorted(RECIPES.glob("evaluate-*.sh"))]
    assert len(recipes) >= 20
    for recipe in recipes:
        assert check_recipe(recipe) == recipe.name.split("-")[0], recipe.name


def test_the_demo_smoke_and_helper_scripts_are_not_recipes() -> None:
    others = [RECIPES / "demo-cpu.sh", *sorted(RECIPES.glob("smoke-*.sh")), *sorted((RECIPES / "lib").iterdir())]
    assert len(others) >= 3
    for script in others:
        with pytest.raises(RecipeError, match="is not a strata recipe"):
            check_recipe(script)


def test_every_script_in_recipes_is_a_recipe_or_a_known_other() -> None:
    """A new kind of script in recipes/ needs a decision: declare it a recipe, or name it here."""
    names = [p.name for p in RECIPES.glob("*.sh")]
    assert [n for n in names if not n.startswith(("train-", "evaluate-", "smoke-")) and n != "demo-cpu.sh"] == []
