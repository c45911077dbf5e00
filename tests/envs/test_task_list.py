from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from strata.cli import main
from strata.envs.alfworld.discovery import load_split, task_description_of_game
from strata.envs.alfworld.prepare import prepare_data
from strata.envs.alfworld.tasks import SUBTASKS
from strata.envs.errors import AlfworldDataError, TaskListError
from strata.envs.task_list import read_task_list, task_list_digest, write_task_list
from strata.envs.tasks import Task


def test_round_trip_and_verl_columns(bundled_root: Path, tmp_path: Path) -> None:
    tasks = load_split(bundled_root, "valid_seen")
    path = write_task_list(tasks, tmp_path / "lists" / "valid_seen.parquet")
    assert read_task_list(path) == tasks
    frame = pd.read_parquet(path)
    assert list(frame.columns) == ["data_source", "prompt", "agent_name", "extra_info"]
    row = frame.iloc[5]
    assert row["data_source"] == "alfworld" and row["agent_name"] == "strata_agent"
    prompt = list(row["prompt"])
    assert len(prompt) == 1 and prompt[0]["role"] == "user"
    assert prompt[0]["content"] == task_description_of_game(tasks[5].game_file)
    info = row["extra_info"]
    assert info["game_file"] == tasks[5].game_file and info["subtask"] == tasks[5].subtask
    assert (info["task_type"], info["split"], info["index"]) == (tasks[5].task_type, "valid_seen", 5)


def test_missing_columns_and_files_are_named(bundled_root: Path, tmp_path: Path) -> None:
    tasks = load_split(bundled_root, "valid_seen")
    bad = tmp_path / "bad.parquet"
    pd.DataFrame({"data_source": ["alfworld"]}).to_parquet(bad)
    with pytest.raises(TaskListError, match=f"{bad}: missing columns prompt, agent_name, extra_info"):
        read_task_list(bad)
    with pytest.raises(TaskListError, match="does not exist; build it with `strata prepare-data`"):
        read_task_list(tmp_path / "none.parquet")
    moved = tmp_path / "moved.parquet"
    frame = pd.read_parquet(write_task_list(tasks, moved))
    frame.at[0, "extra_info"] = {**frame.at[0, "extra_info"], "game_file": "/gone/game.tw-pddl"}
    frame.to_parquet(moved)
    with pytest.raises(TaskListError, match="row 0 names /gone/game.tw-pddl, which does not exist"):
        read_task_list(moved)


def test_an_empty_or_truncated_task_list_is_one_error_line(bundled_root: Path, tmp_path: Path, capsys) -> None:
    whole = write_task_list(load_split(bundled_root, "valid_seen"), tmp_path / "whole.parquet").read_bytes()
    for name, content in (("empty.parquet", b""), ("truncated.parquet", whole[: len(whole) // 2])):
        damaged = tmp_path / name
        damaged.write_bytes(content)
        with pytest.raises(TaskListError, match=f"{damaged} is not a readable task list"):
            read_task_list(damaged)
        assert main(["play", "--task-list", str(damaged), "--policy", "walkthrough"]) == 2
        printed = capsys.readouterr()
        assert f"{damaged} is not a readable task list" in printed.out + printed.err
        assert "Traceback" not in printed.out + printed.err


def test_prepare_data_on_bundled_set(bundled_root: Path, tmp_path: Path) -> None:
    prepared = prepare_data(bundled_root, tmp_path)
    assert [(p.split, p.total) for p in prepared] == [("train", 24), ("valid_seen", 12), ("valid_unseen", 6)]
    assert prepared[1].counts_by_subtask == {sub: 2 for sub in SUBTASKS}
    assert len(read_task_list(tmp_path / "valid_unseen.parquet")) == 6


def test_prepare_data_fails_before_writing_when_a_split_is_missing(bundled_root: Path, tmp_path: Path) -> None:
    import shutil

    shutil.copytree(bundled_root / "json_2.1.1" / "train", tmp_path / "data" / "json_2.1.1" / "train")
    with pytest.raises(AlfworldDataError, match="valid_seen is missing.*alfworld-download"):
        prepare_data(tmp_path / "data", tmp_path / "out")
    assert not (tmp_path / "out" / "train.parquet").exists()


def test_prepare_data_cli(bundled_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prepare-data", "--data-path", str(bundled_root), "--out", str(tmp_path / "lists")]) == 0
    out = capsys.readouterr().out
    assert "valid_seen" in out and out.splitlines()[2].split()[:8] == ["valid_seen", "2", "2", "2", "2", "2", "2", "12"]
    assert main(["prepare-data", "--data-path", str(tmp_path / "empty"), "--out", str(tmp_path / "x")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "alfworld-download" in lines[0]


def test_the_digest_names_the_games_and_their_order_not_where_they_lie(bundled_root: Path, tmp_path: Path) -> None:
    tasks = load_split(bundled_root, "valid_seen")
    digest = task_list_digest(tasks)
    moved_root = tmp_path / "elsewhere"
    shutil.copytree(bundled_root, moved_root)
    moved = [replace(t, game_file=t.game_file.replace(str(bundled_root), str(moved_root))) for t in tasks]
    assert moved[0].game_file != tasks[0].game_file and task_list_digest(moved) == digest
    assert task_list_digest(tasks[::-1]) != digest  # another order
    assert task_list_digest(tasks[1:]) != digest  # another membership
    changed = Path(moved[0].game_file)
    changed.write_bytes(changed.read_bytes() + b" ")  # another version of one game
    assert task_list_digest(moved) != digest
    sciworld = [Task("sciworld:boil:3", "boil", "valid", 0), Task("sciworld:boil:4", "boil", "valid", 1)]
    assert task_list_digest(sciworld) != task_list_digest(sciworld[::-1])
