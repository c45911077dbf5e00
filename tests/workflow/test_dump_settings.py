"""`DumpSettings` and `DumpWriter`: what the ``run.dump`` config turns into, and which tasks get written.

Mutation testing (scripts/mutation.sh) found ``from_config``, the bounds of ``__post_init__`` and the
seeded task draw untested by anything fast (the trainer tests use the defaults), so a key read under the
wrong name or a draw salted differently went unnoticed.
"""

from __future__ import annotations

import gzip
import os
import socket
from pathlib import Path

import pytest

from strata.envs.tasks import Task
from strata.workflow.dump import DumpSettings, DumpWriter


def task(index: int, split: str = "train") -> Task:
    return Task("/games/g/game.tw-pddl", "pick_and_place_simple", split, index)


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        (None, DumpSettings(run_dir=None, train_every=10, train_task_share=1.0, validation=True, wandb_rows=64)),
        ({}, DumpSettings(run_dir=None)),
        ({"dir": "", "dump": None}, DumpSettings(run_dir=None)),
        ({"dir": "/runs/a"}, DumpSettings(run_dir=Path("/runs/a"))),
        ({"dir": "/runs/b",
          "dump": {"train_every": "3", "train_task_share": "0.5", "validation": 0, "wandb_rows": "0"}},
         DumpSettings(run_dir=Path("/runs/b"), train_every=3, train_task_share=0.5, validation=False, wandb_rows=0)),
    ],
)
def test_from_config(run, expected: DumpSettings) -> None:
    got = DumpSettings.from_config(run)
    assert got == expected
    assert type(got.train_every) is int and type(got.train_task_share) is float and type(got.validation) is bool


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"train_every": -1}, "run.dump.train_every must be an integer >= 0, got -1"),
        ({"train_every": 2.0}, "run.dump.train_every must be an integer >= 0, got 2.0"),
        ({"wandb_rows": -1}, "run.dump.wandb_rows must be an integer >= 0, got -1"),
        ({"train_task_share": -0.01}, "run.dump.train_task_share must lie in [0, 1], got -0.01"),
        ({"train_task_share": 1.01}, "run.dump.train_task_share must lie in [0, 1], got 1.01"),
    ],
)
def test_bad_settings_say_which_key(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError) as error:
        DumpSettings(run_dir=Path("/r"), **kwargs)
    assert str(error.value) == message


def test_edge_settings_are_valid() -> None:
    for kwargs in ({"train_every": 0}, {"train_task_share": 0.0}, {"train_task_share": 1.0}):
        DumpSettings(run_dir=Path("/r"), **kwargs)


def test_which_tasks_are_dumped() -> None:
    settings = DumpSettings(run_dir=Path("/r"), train_every=5, train_task_share=0.25)
    # Pinned: the draw is a hash of ("dump", step, split, index), so a resumed run dumps the same tasks.
    assert [i for i in range(24) if settings.wants("train", 10, task(i))] == [3, 4, 13, 14]
    assert [i for i in range(24) if settings.wants("train", 10, task(i, "valid_seen"))] == [5, 12, 18]
    assert not any(settings.wants("train", 7, task(i)) for i in range(24))  # not a dumped step
    assert all(settings.wants("valid", 7, task(i)) for i in range(3))  # validation: every task, any step
    everything = DumpSettings(run_dir=Path("/r"), train_every=1)
    assert all(everything.wants("train", s, task(i)) for s in (0, 1, 2) for i in range(10))
    nothing = DumpSettings(run_dir=Path("/r"), train_every=1, train_task_share=0.0)
    assert not any(nothing.wants("train", 1, task(i)) for i in range(50))
    assert not DumpSettings(run_dir=Path("/r"), train_every=0).wants("train", 0, task(0))


def test_writer_name_and_kind(tmp_path: Path) -> None:
    writer = DumpWriter(DumpSettings(run_dir=tmp_path, train_every=0))
    assert writer.writer == f"{socket.gethostname()}-{os.getpid()}" and writer.failures == 0
    assert writer.maybe_write("valid", 3, task(0), lambda: {"schema": 1})  # validation is on, training is not
    assert not writer.maybe_write("train", 3, task(0), lambda: pytest.fail("not wanted: must not be built"))
    assert (tmp_path / "rollouts" / "valid" / f"step_000003-{writer.writer}.jsonl.gz").is_file()


def test_dumps_keep_text_readable(tmp_path: Path) -> None:
    # ensure_ascii=False: `zcat` shows a game's text as written, not as \\u escapes.
    writer = DumpWriter(DumpSettings(run_dir=tmp_path))
    assert writer.maybe_write("valid", 0, task(0), lambda: {"observation": "a café table"})
    path = tmp_path / "rollouts" / "valid" / f"step_000000-{writer.writer}.jsonl.gz"
    assert gzip.decompress(path.read_bytes()).decode("utf-8") == '{"observation": "a café table"}\n'
