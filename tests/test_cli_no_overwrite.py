"""The `strata` tools never write over a user's work unless asked, and end in one line, never a traceback
(issue #36 §2-§3): a folder that holds files is refused before anything is written; ``--force`` writes over it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from strata.cli import main
from tests.report.dump_fixture import write_run

REPO = Path(__file__).resolve().parents[1]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("argv", [["build-tiny-model"], ["make-webshop", "--products", "4"]])
def test_a_folder_with_files_is_refused_and_left_as_it_was(tmp_path: Path, capsys, argv: list[str]) -> None:
    out = tmp_path / "work"
    out.mkdir()
    (out / "model.safetensors").write_bytes(b"trained weights")
    (out / "items_shuffle_1000.json").write_text("[the real catalogue]")
    before = snapshot(out)
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: --out {out} is not empty (2 entries); give a new folder, or --force to write over what " \
                  "it holds\n"
    assert snapshot(out) == before


def test_force_writes_over_and_a_file_is_never_a_folder(tmp_path: Path, capsys) -> None:
    out = tmp_path / "catalogue"
    out.mkdir()
    (out / "items_shuffle_1000.json").write_text("[old]")
    assert main(["make-webshop", "--products", "4", "--out", str(out), "--force"]) == 0
    assert (out / "items_shuffle_1000.json").read_text() != "[old]"
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    capsys.readouterr()
    for argv in (["build-tiny-model", "--out", str(a_file)], ["prepare-data", "--bundled", "--out", str(a_file)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and str(a_file) in err and err.count("\n") == 1, err
    assert a_file.read_text() == "mine"


def test_make_games_again_into_the_same_split_is_refused_then_replaced_with_force(tmp_path: Path, capsys) -> None:
    args = ["make-games", "--out", str(tmp_path), "--split", "valid_seen", "--count", "1", "--task-types", "pick"]
    assert main(args) == 0
    split = tmp_path / "json_2.1.1" / "valid_seen"
    first = snapshot(split)
    capsys.readouterr()
    assert main(args) == 2  # the README's own loop, run a second time
    assert capsys.readouterr().err.startswith(f"error: --out's split {split} is not empty (1 entries)")
    assert snapshot(split) == first
    assert main([*args, "--seed", "5", "--force"]) == 0  # another game in its place, not beside it
    assert len([p for p in split.iterdir()]) == 1 and snapshot(split) != first


def test_a_reader_that_stops_reading_ends_nothing_in_a_traceback(tmp_path: Path) -> None:
    run = write_run(tmp_path)
    # `true` reads nothing and is gone before the tool writes: every write meets a closed pipe (`| head` would
    # often read all of this small output before closing).
    shown = subprocess.run(["bash", "-o", "pipefail", "-c", f"{sys.executable} -m strata.cli show {run} | true"],
                           cwd=REPO, capture_output=True, text=True, timeout=120)
    assert (shown.returncode, shown.stderr) == (141, "")


def test_ctrl_c_is_one_line(monkeypatch, capsys) -> None:
    import strata.report.cli_show as show

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(show, "run", interrupted)
    assert main(["show", "anything"]) == 130
    assert capsys.readouterr().err == "strata show: interrupted\n"


def test_a_model_building_tool_prints_its_one_line_and_no_progress_bar(tmp_path: Path) -> None:
    """transformers' "Writing model shards" bar would interleave with the summary (and fill logs with carriage
    returns): a real process, since the bar is drawn on the terminal's stderr."""
    built = subprocess.run([sys.executable, "-m", "strata.cli", "build-tiny-model", "--out", str(tmp_path / "m")],
                           cwd=REPO, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0 and built.stdout == f"tiny model written to {tmp_path / 'm'}\n", built
    assert "Writing model shards" not in built.stderr and "Loading weights" not in built.stderr, built.stderr
