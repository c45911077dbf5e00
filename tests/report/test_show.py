"""`strata show` on synthetic dumps (tests/report/dump_fixture.py): the terminal view and its error lines."""

from __future__ import annotations

import gzip
import html
import logging
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from strata.cli import main
from strata.core.config import StrataConfig
from strata.envs.tasks import Task
from strata.report.dumps import dump_files, load_step, read_file, read_step
from strata.report.show import task_tree, to_text
from strata.workflow.dump import DumpSettings, DumpWriter, task_record
from strata.workflow.records import Generation, Step, StrategyCandidate, StrategyRollout, TaskRollout, Trajectory
from strata.workflow.rows import group_advantages
from tests.report.dump_fixture import JUDGE_TEXT, STRATEGY_A, full_task, simple_task, write_dump, write_run


@pytest.fixture()
def run(tmp_path: Path) -> Path:
    return write_run(tmp_path)


def show(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["show", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_lists_the_latest_step_and_renders_its_first_task(run: Path, capsys) -> None:
    code, out, _ = show(capsys, str(run))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "train step 3: 3 task(s) from 2 file(s); steps with dumps: 1, 3"
    assert [line.split("  ")[1] for line in lines[1:4]] == ["task 5", "task 7", "task 9"]
    # the game's path inside its data folder (the folder holding json_2.1.1/), not the absolute one
    assert lines[1].endswith("task 5  heat  pick_heat_then_place_in_recep  won 1/3  json_2.1.1/train/"
                             "pick_heat_then_place_in_recep-Egg-None-GarbageCan-11/trial_T1/game.tw-pddl")
    assert lines[4:10] == [
        "step summary",
        "  success  won 3 of 5 episodes (60.0%) in 3 task(s)",
        "  malformed  2 of 11 replies (18.2%): 1 of 4 strategy candidates, 1 of 7 action replies",
        "  flagged steps  1 of 5 judged steps (20.0%) in 2 judged episode(s); 0 judgment(s) UNPARSED",
        "  zero-advantage groups  strategy level 1 of 2 task(s) (every A(z) 0); trajectory level 0 of 3 group(s) "
        "(every A(tau) 0)",
        "  game files  relative to the data folder /data",
    ]
    assert lines[11].startswith("task 5  heat")  # then task 5 rendered
    assert "\033[" not in out  # not a terminal: no colour codes


def test_the_step_summary_of_validation_dumps_counts_no_advantages(run: Path, capsys) -> None:
    code, out, _ = show(capsys, str(run), "--split", "valid")
    assert code == 0
    assert "  flagged steps  no judged episode (the judge is off, or validation)" in out.splitlines()
    assert ("  zero-advantage groups  none to count: these records carry no advantages (validation)"
            in out.splitlines())


def test_a_magic_word_game_is_labelled_as_such() -> None:
    from strata.report.show import task_label

    game = {"game_file": "/root/.cache/games/train/0/game.json", "task_type": "pick_and_place_simple",
            "subtask": "pick", "split": "train"}
    assert task_label(game, "magic_word") == task_label(game) == "magic-word game"
    alfworld = {**game, "game_file": "/data/json_2.1.1/train/pick_and_place_simple-X/trial_1/game.tw-pddl"}
    assert task_label(alfworld, "alfworld") == task_label(alfworld) == "pick  pick_and_place_simple"
    sciworld = {**game, "game_file": "sciworld:boil:3", "task_type": "boil", "subtask": "boil"}
    assert task_label(sciworld, "sciworld") == "boil"


def test_renders_candidates_strategies_and_transcripts(run: Path, capsys) -> None:
    code, out, _ = show(capsys, str(run), "--step", "3", "--task", "5")
    assert code == 0
    for expected in (
        "  candidates: 3 sampled, 2 kept",
        "    #0  KEPT rank 0  nearest kept cos 0.31  30 tok",
        "    #1  not kept  MALFORMED  nearest kept cos -  31 tok  truncated",
        "      raw: I think I should look around <strat",
        "    #2  KEPT rank 1  nearest kept cos 0.31  32 tok",
        "  strategy 1/2 (candidate #0)  score 0.50  A(z) +0.71  strategy tokens +0.93",
        f"    {STRATEGY_A}",
        "    trajectory 0: WON  reward 1.00  end won  3 steps  A(tau) +0.88",
        "      judge  flagged steps: 2",
        f"        {JUDGE_TEXT}",
        "      step 2  FLAGGED  > open cabinet 3  admissible  22 tok  adv -0.35",
        "        You open the cabinet 3. It is empty.",
        "    trajectory 1: FAILED  reward 0.00  end step_limit  2 steps  A(tau) -0.88",
        "      step 1  MALFORMED (no <action>)  not stepped  21 tok  adv -0.61",
        "        raw: Let me open the microwave now",
        "      step 2  > Fly to the moon  -> fly to the moon  NOT ADMISSIBLE  22 tok  adv -0.61",
        "  strategy 2/2 (candidate #2)  score -  A(z) -  strategy tokens -  DROPPED: every trajectory failed in "
        "the environment, nothing trained",
        "    trajectory 0: FAILED  reward 0.00  end worker_lost  0 steps  A(tau) -  environment failure  not trained",
    ):
        assert expected in out.splitlines(), expected
    # the transcript keeps the episode's order
    assert out.index("step 1  > go to fridge 1") < out.index("step 2  FLAGGED") < out.index("step 3  > heat egg")


def test_newest_file_wins_for_a_duplicate_task(run: Path, capsys) -> None:
    # step_000003-a (newer, two gzip members) re-did task 7 of step_000003-b (older)
    code, out, _ = show(capsys, str(run), "--task", "7")
    assert code == 0 and "goal: NEW VERSION of task 7" in out and "OLD" not in out
    files = dump_files(run / "rollouts", "train")[3]
    os.utime(run / "rollouts/train/step_000003-b.jsonl.gz", (3_000_000, 3_000_000))
    descriptions = {r["task"]["index"]: r["task_description"] for r in load_step(files)}
    assert descriptions == {5: "heat some egg and put it in garbagecan", 7: "OLD VERSION of task 7", 9: "grpo task"}


def test_grpo_record_has_no_strategy_level(run: Path, capsys) -> None:
    code, out, _ = show(capsys, str(run), "--task", "9")  # in the second gzip member of its file
    assert code == 0
    assert "(train step 3, mode grpo, split train)" in out
    assert "  trajectories (grpo: no strategy)\n    trajectory 0: WON" in out
    assert "candidates:" not in out and "A(z)" not in out
    assert "      step 1  > take egg 1 from fridge 1  admissible  21 tok  adv +0.50" in out


def test_validation_dumps_and_the_rollouts_folder_itself(run: Path, capsys) -> None:
    code, out, _ = show(capsys, str(run / "rollouts"), "--split", "valid")
    assert code == 0
    assert out.startswith("valid step 0: 1 task(s) from 1 file(s); steps with dumps: 0\n")
    assert "goal: look at the vase under the desklamp" in out
    assert "step 1  > take egg 1 from fridge 1  admissible  21 tok  adv -" in out


def test_colour_only_on_request() -> None:
    tree = task_tree(full_task(3))
    assert "\033[1;35mFLAGGED\033[0m" in to_text(tree, colour=True)
    assert "\033[31mMALFORMED (no <action>)\033[0m" in to_text(tree, colour=True)
    assert "\033[31madv -0.35\033[0m" in to_text(tree, colour=True)
    assert "\033[" not in to_text(tree, colour=False)


def test_html_page_of_a_step(run: Path, tmp_path: Path, capsys) -> None:
    page = tmp_path / "out" / "step3.html"
    code, out, _ = show(capsys, str(run), "--html", str(page))
    assert code == 0 and out.endswith(f"written: {page}\n")
    text = page.read_text()
    assert text.count('<details class="task"') == 3
    assert html.escape(JUDGE_TEXT) in text and "<flagged>" not in text and "<strat" not in text
    assert "http" not in text and "<script" not in text  # self-contained


def test_reads_what_the_trainer_writes(tmp_path: Path, capsys) -> None:
    """The real writer (strata/workflow/dump.py) and this viewer agree on the format."""
    def generation(text: str) -> Generation:
        return Generation(prompt_ids=[1], token_ids=[2, 3], logprobs=None, text=text, truncated=False)

    def episode(won: bool) -> Trajectory:
        steps = [Step(generation("<action>go to shelf 1</action>"), "go to shelf 1", "You see shelf 1.",
                      command="go to shelf 1", admissible=True),
                 Step(generation("hmm"), None, "Your answer had no <action> tag.")]
        return Trajectory(prompt_ids=[1], steps=steps, won=won, end_reason="won" if won else "step_limit",
                          flagged_steps=[2], judge_parsed=True, judge=generation("<judgment>[2]</judgment>"))

    candidates = [StrategyCandidate(generation("<strategy>try the shelf</strategy>"), "try the shelf"),
                  StrategyCandidate(generation("no tags"), None)]
    rollout = TaskRollout(candidates, [0], [StrategyRollout(candidates[0], [episode(True), episode(False)])],
                          nearest_kept_cosine=[None, 0.4], task_description="find the book")
    config = StrataConfig.from_dict({"num_stras_per_run": 1, "num_trajs_per_stra": 2, "num_cands_per_stra": 2})
    task = Task(game_file="/games/book/game.tw-pddl", task_type="look_at_obj_in_light", split="train", index=4)
    record = task_record("train", 2, "strata", task, rollout, group_advantages(rollout, config))
    assert DumpWriter(DumpSettings(run_dir=tmp_path, train_every=1)).maybe_write("train", 2, task, lambda: record)
    code, out, _ = show(capsys, str(tmp_path))
    assert code == 0 and out.startswith("train step 2: 1 task(s) from 1 file(s)")
    assert "    #1  not kept  MALFORMED  nearest kept cos 0.40  2 tok" in out
    flagged = record["strategies"][0]["trajectories"][0]["steps"][1]["advantage"]
    assert f"      step 2  FLAGGED  MALFORMED (no <action>)  not stepped  2 tok  adv {flagged:+.2f}" in out.splitlines()
    assert "goal: find the book" in out and "trajectory 1: FAILED  reward 0.00  end step_limit  2 steps" in out


def _other_schema(run: Path) -> str:
    path = run / "rollouts/train/step_000003-b.jsonl.gz"
    with gzip.open(path, "wt") as handle:
        handle.write('{"schema": 2}\n')
    return f"error: {path}: dump schema 2, this viewer reads schema 1"


def _missing_key(run: Path) -> str:
    record = full_task(3)
    del record["strategies"][0]["trajectories"][0]["steps"][1]["flagged"]
    write_dump(run / "rollouts/train/step_000003-b.jsonl.gz", [record], mtime=1_000_000)
    return "error: a record has no key 'flagged': not a schema-1 dump"


def _no_rollouts(run: Path) -> str:
    shutil.rmtree(run / "rollouts")
    return f"error: no rollouts/ folder in {run}: this run wrote no trajectory dumps"


def _no_valid(run: Path) -> str:
    shutil.rmtree(run / "rollouts" / "valid")
    return f"error: no valid dumps in {run / 'rollouts' / 'valid'}"


@pytest.mark.parametrize(("damage", "argv"), [
    (_other_schema, []), (_missing_key, ["--task", "5"]), (_no_rollouts, []),
    (_no_valid, ["--split", "valid"]),
])
def test_errors_are_one_line(run: Path, capsys, damage, argv: list[str]) -> None:
    expected = damage(run)
    code, out, err = show(capsys, str(run), *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(expected), err


def test_a_half_written_last_member_skips_one_record_and_says_so(run: Path, capsys, caplog) -> None:
    """A writer killed mid-append (its file's last gzip member has no end): the step is read, minus that task."""
    caplog.set_level(logging.WARNING, logger="strata.report")
    path = run / "rollouts/train/step_000003-a.jsonl.gz"  # two members: task 7 (new), then task 9
    path.write_bytes(path.read_bytes()[:-12])
    code, out, err = show(capsys, str(run))
    assert code == 0
    assert out.splitlines()[0] == ("train step 3: 2 task(s) from 2 file(s), 1 damaged record(s) skipped; "
                                   "steps with dumps: 1, 3")
    assert [line.split("  ")[1] for line in out.splitlines()[1:3]] == ["task 5", "task 7"]
    assert err.count("\n") == 1
    assert err.startswith("warning: skipped 1 damaged record(s) in 1 file(s) (step_000003-a.jsonl.gz)")
    assert not caplog.records  # said once: a logged warning would be a second line on stderr
    step = read_step(dump_files(run / "rollouts", "train")[3])
    assert (step.skipped, step.damaged_files) == (1, [path])
    assert len(load_step(dump_files(run / "rollouts", "train")[3])) == 2  # records only: the skip is logged
    assert "skipped 1 damaged record(s)" in caplog.text
    assert {r["task"]["index"]: r["task_description"] for r in step.records}[7] == "NEW VERSION of task 7"


def test_a_writer_killed_mid_append_leaves_a_readable_file(tmp_path: Path, capsys) -> None:
    """The real thing: DumpWriter appends one member per task, then a process dies inside gzip's append."""
    run = tmp_path / "run"
    path = write_dump(run / "rollouts/train/step_000002-w.jsonl.gz",
                      [simple_task("train", 2, index, f"task {index}") for index in range(3)], members=3)
    killed = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import gzip, os, random, signal
        handle = gzip.open({str(path)!r}, "at", encoding="utf-8")
        handle.write('{{"schema": 1, "text": "' + "".join(random.choices("abcdefgh", k=1_000_000)) + '"')
        handle.flush()  # the compressed bytes reach the file; the member's trailer never does
        os.kill(os.getpid(), signal.SIGKILL)
    """)], capture_output=True, timeout=60)
    assert killed.returncode == -9
    with pytest.raises(EOFError):  # what the reader used to hit, refusing the whole step
        gzip.decompress(path.read_bytes())
    code, out, err = show(capsys, str(run))
    assert code == 0 and out.startswith("train step 2: 3 task(s) from 1 file(s), 1 damaged record(s) skipped")
    assert "warning: skipped 1 damaged record(s)" in err


def test_a_file_that_is_not_gzip_is_skipped_and_counted(run: Path, capsys) -> None:
    (run / "rollouts/train/step_000003-b.jsonl.gz").write_bytes(b"not gzip at all\n")
    code, out, err = show(capsys, str(run))
    assert code == 0 and out.startswith("train step 3: 2 task(s) from 2 file(s), 1 damaged record(s) skipped")
    assert "(step_000003-b.jsonl.gz)" in err


def test_a_corrupt_middle_member_loses_only_its_record(tmp_path: Path) -> None:
    path = write_dump(tmp_path / "step_000001-w.jsonl.gz",
                      [simple_task("train", 1, index, f"task {index}") for index in range(3)], members=3)
    data = bytearray(path.read_bytes())
    second = data.find(b"\x1f\x8b\x08", 1)
    data[second + 20:second + 30] = bytes(10)  # inside the second member's deflate stream
    path.write_bytes(bytes(data))
    records, skipped = read_file(path)
    assert [r["task"]["index"] for r in records] == [0, 2] and skipped == 1


@pytest.mark.parametrize(("argv", "expected"), [
    (["--step", "2"], "error: no train dumps for step 2; steps with train dumps: 1, 3\n"),
    (["--task", "4"], "error: no task 4 in train step 3; tasks: 5, 7, 9\n"),
    (["--split", "valid", "--step", "3"], "error: no valid dumps for step 3; steps with valid dumps: 0\n"),
])
def test_missing_step_or_task_lists_what_exists(run: Path, capsys, argv: list[str], expected: str) -> None:
    assert show(capsys, str(run), *argv) == (2, "", expected)


def test_missing_run_folder(tmp_path: Path, capsys) -> None:
    assert show(capsys, str(tmp_path / "nope")) == (2, "", f"error: no run folder at {tmp_path / 'nope'}\n")


def test_help_has_an_example(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["show", "--help"])
    assert exit_info.value.code == 0
    assert "strata show outputs/run --step 3 --task 5" in capsys.readouterr().out
