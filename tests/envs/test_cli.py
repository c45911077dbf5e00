"""`strata make-games` and `strata play` end to end: generated games are won by their walkthroughs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from strata.cli import COMMANDS, main
from strata.envs.alfworld.tasks import SPLITS, SUBTASKS
from strata.envs.policies import POLICY_NAMES
from strata.envs.sciworld.tasks import SPLITS as SCIWORLD_SPLITS


def test_play_walkthrough_wins_the_bundled_valid_split(
    tmp_path: Path, bundled_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRATA_CACHE", str(bundled_root.parent))
    out = tmp_path / "results.json"
    assert main(["play", "--policy", "walkthrough", "--bundled", "--split", "valid_seen", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "average" in printed and "end reasons: won 12" in printed
    report = json.loads(out.read_text())
    assert report["metrics"]["val/average/metrics/success_rate"] == 1.0
    assert all(report["metrics"][f"val/{sub}/metrics/success_rate"] == 1.0 for sub in SUBTASKS)
    assert {report["table"][sub]["episodes"] for sub in SUBTASKS} == {2}
    assert len(report["episodes"]) == 12 and all(e["reason"] == "won" for e in report["episodes"])


def test_play_prints_only_the_task_types_asked_for(
    bundled_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRATA_CACHE", str(bundled_root.parent))
    assert main(["play", "--policy", "walkthrough", "--bundled", "--split", "valid_seen", "--task-types", "pick,cool",
                 "--num-workers", "1"]) == 0
    table = capsys.readouterr().out.split("subtask")[1].split("end reasons")[0]
    assert [line.split()[0] for line in table.strip().splitlines()[1:]] == ["pick", "cool", "average"]


def test_make_games_then_play_any_generated_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "games"
    args = ["make-games", "--out", str(data), "--split", "valid_unseen", "--count", "3", "--seed", "11"]
    assert main([*args, "--task-types", "heat,look,pick2", "--grammar-version", "2.1.1"]) == 0
    assert "wrote 3 verified games" in capsys.readouterr().out
    out = tmp_path / "walk.json"
    play = ["play", "--data-path", str(data), "--split", "valid_unseen", "--num-workers", "1"]
    assert main([*play, "--policy", "walkthrough", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["table"]["average"]["success_rate"] == 1.0
    capsys.readouterr()
    # The random policy runs through the same path; 2 steps are too few to win any of these games.
    assert main([*play, "--policy", "random", "--max-steps", "2", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["end_reasons"] == {"step_limit": 3} and report["table"]["average"]["mean_steps"] == 2


@pytest.mark.parametrize("env", ["webshop", "sciworld"])
def test_bundled_is_alfworld_s_set_only(env: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--policy", "random", "--env", env, "--bundled"]) == 2
    out = capsys.readouterr().err
    assert out.startswith(f"error: --bundled is ALFWorld's small generated set; {env} has none")
    assert out.count("\n") == 1


def test_bad_inputs_give_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--policy", "walkthrough", "--data-path", str(tmp_path), "--split", "train"]) == 2
    assert main(["make-games", "--out", str(tmp_path), "--count", "1", "--task-types", "slice"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("error: ") for line in lines)
    assert "alfworld-download" in lines[0] and "unknown task type 'slice'" in lines[1]



@pytest.mark.parametrize(("argv", "message"), [
    (["make-games", "--count", "-3"], "argument --count: expected an integer >= 1, got -3"),
    (["make-games", "--count", "0"], "argument --count: expected an integer >= 1, got 0"),
    (["make-games", "--count", "three"], "argument --count: expected an integer >= 1, got 'three'"),
    (["make-games", "--count", "2", "--max-receptacles", "-1"],
     "argument --max-receptacles: expected an integer >= 0, got -1"),
    (["play", "--policy", "walkthrough", "--bundled", "--num-workers", "0"],
     "argument --num-workers: expected an integer >= 1, got 0"),
])
def test_bad_numbers_are_one_line_usage_errors(argv: list[str], message: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """argparse rejects them (exit 2, its usage, one error line) before anything is generated or played."""
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines()[-1].endswith(message)
    assert not (tmp_path / "out").exists()


def test_play_and_prepare_data_help_say_what_the_tools_take(capsys: pytest.CaptureFixture[str]) -> None:
    """The one-line help (`strata --help`) and `play --help` name the policies `policies.py` offers, each
    split once; `prepare-data` says it also takes ScienceWorld."""
    assert f"({'|'.join(POLICY_NAMES)})" in COMMANDS["play"][1]
    assert "ScienceWorld" in COMMANDS["prepare-data"][1]
    with pytest.raises(SystemExit):
        main(["play", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert all(f"{name}: " in text for name in POLICY_NAMES)
    choices = text.split("--split {", 1)[1].split("}", 1)[0].split(",")
    assert choices == list(dict.fromkeys(choices)) and set(choices) == set(SPLITS + SCIWORLD_SPLITS)


def test_a_real_ctrl_c_leaves_no_half_written_split(tmp_path: Path) -> None:
    """make-games builds the split under a partial name (`strata.staging`): interrupted, neither is left, and the
    README's loop can be run again without --force."""
    from tests.interrupting import assert_interrupted_cleanly, interrupt_mid_write

    out = tmp_path / "games"
    final = out / "json_2.1.1" / "train"
    result = interrupt_mid_write(["make-games", "--out", str(out), "--split", "train", "--count", "6"], final)
    assert_interrupted_cleanly("make-games", final, result)


def test_a_long_play_says_how_far_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    """`strata play` prints its progress to stderr at most every PROGRESS_EVERY_S seconds, never its last game."""
    from strata.envs.commands.play import PROGRESS_EVERY_S, progress_printer

    clock = iter([2.0, 11.0, 15.0, 22.0, 40.0])  # when games 1-5 end
    printed = progress_printer(total=5, began=0.0, clock=lambda: next(clock))
    for done in range(1, 6):
        printed(done)
    assert PROGRESS_EVERY_S == 10.0
    assert capsys.readouterr().err.splitlines() == ["played 2/5 games (11 s)", "played 4/5 games (22 s)"]
