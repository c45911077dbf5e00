"""A dumped step's episodes as a wandb table, logged to a real wandb run in offline mode and read back from the
files wandb wrote."""

from __future__ import annotations

import json

import wandb

from strata.report.wandb_table import COLUMNS, TRANSCRIPT_CHARS, episode_rows, log_episode_table, transcript
from tests.report.dump_fixture import JUDGE_TEXT, MALFORMED_RESPONSE, STRATEGY_A, full_task, write_run


def test_a_dumped_step_s_episodes_reach_wandb_as_a_table(tmp_path, monkeypatch):
    run = write_run(tmp_path)
    monkeypatch.setenv("WANDB_SILENT", "true")
    assert log_episode_table(run, "train", 3, 64) == 0  # no live wandb run: nothing to log to
    wandb.init(project="strata-test", dir=tmp_path, mode="offline")
    try:  # in step order, as the trainer logs (wandb keeps a run's steps increasing)
        assert log_episode_table(run, "valid", 0, 64) == 1
        assert log_episode_table(run, "train", 2, 64) == 0  # no dump of step 2
        assert log_episode_table(run, "train", 3, 64) == 5  # task 5's three episodes, then tasks 7 and 9
        assert log_episode_table(run, "valid", 3, 0) == 0  # run.dump.wandb_rows=0
    finally:
        wandb.finish()
        wandb.teardown()  # wandb's service process goes with the run
    (files,) = tmp_path.glob("wandb/offline-run-*/files")
    (train,) = files.glob("media/table/strata/train_episodes_*.table.json")  # wandb numbers the file itself
    table = json.loads(train.read_text())
    assert table["columns"] == list(COLUMNS)
    first, failed, lost, seven, grpo = table["data"]
    assert first[:9] == [3, "train", "5: heat some egg and put it in garbagecan", "heat", STRATEGY_A, True, 1.0,
                         "won", 3]
    assert first[9].startswith(f"strategy: {STRATEGY_A}\n1. > go to fridge 1\nYou arrive at fridge 1.")
    assert failed[5:9] == [True, 0.0, "step_limit", 2] and f"1. > (no action) {MALFORMED_RESPONSE}" in failed[9]
    assert lost[5:9] == [False, 0.0, "worker_lost", 0]  # cut short by the environment: never trained
    assert seven[2] == "7: NEW VERSION of task 7" and grpo[4] == ""  # the resumed run's line; GRPO has no strategy
    assert JUDGE_TEXT not in json.dumps(table)  # the transcript is the episode, not the judge's reading of it
    (valid,) = files.glob("media/table/strata/valid_episodes_*.table.json")
    assert [row[:2] for row in json.loads(valid.read_text())["data"]] == [[0, "valid"]]


def test_rows_are_capped_and_long_transcripts_cut():
    record = full_task(3)
    assert len(episode_rows([record, record], 4)) == 4
    long = {"steps": [{"step": 1, "command": "look", "response": "", "observation": "x" * TRANSCRIPT_CHARS}]}
    assert transcript(None, long).endswith(" [...]") and len(transcript(None, long)) == TRANSCRIPT_CHARS + 6
