"""The checkpoint pointer: atomic writes, and a crash during a save never loses the previous step."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from strata.checkpoint.inspect import find_latest_checkpoint
from strata.checkpoint.layout import POINTER_FILE
from strata.checkpoint.pointer import read_latest_pointer, write_latest_pointer


def test_pointer_is_the_bare_integer_verl_reads(tmp_path: Path) -> None:
    from verl.utils.checkpoint.checkpoint_manager import find_latest_ckpt_path

    (tmp_path / "global_step_12").mkdir()
    write_latest_pointer(tmp_path, 12)
    assert (tmp_path / POINTER_FILE).read_text() == "12"
    assert read_latest_pointer(tmp_path) == 12
    assert find_latest_ckpt_path(str(tmp_path)) == str(tmp_path / "global_step_12")  # verl's own reader
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_pointer_rejects_non_steps(tmp_path: Path, bad) -> None:
    with pytest.raises(ValueError, match="non-negative integer"):
        write_latest_pointer(tmp_path, bad)


def test_concurrent_reader_never_sees_a_partial_pointer(tmp_path: Path) -> None:
    """verl's open('w')+write has a window where the file is empty; os.replace has none."""
    write_latest_pointer(tmp_path, 0)
    seen: list[str] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            seen.append((tmp_path / POINTER_FILE).read_text())

    thread = threading.Thread(target=reader)
    thread.start()
    for step in range(1, 400):
        write_latest_pointer(tmp_path, step * 1000)  # lengths change: 4, 5 and 6 digits
    stop.set()
    thread.join()
    assert len(seen) > 10
    assert all(text.isdigit() for text in seen), sorted(set(t for t in seen if not t.isdigit()))


def _run_and_kill(script: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          timeout=120)


def test_crash_between_temp_write_and_replace_keeps_the_old_pointer(tmp_path: Path, make_step) -> None:
    make_step(tmp_path, 1)
    make_step(tmp_path, 2)
    write_latest_pointer(tmp_path, 1)
    # The process dies (SIGKILL, no cleanup) at the moment it would rename the new pointer into place.
    result = _run_and_kill(f"""
        import os, signal
        from strata.checkpoint import pointer
        pointer.os.replace = lambda *args: os.kill(os.getpid(), signal.SIGKILL)
        pointer.write_latest_pointer({str(tmp_path)!r}, 2)
    """)
    assert result.returncode == -9, result.stderr
    assert (tmp_path / POINTER_FILE).read_text() == "1"
    assert any(p.name.endswith(".tmp") for p in tmp_path.iterdir())  # the orphan is ignored...
    assert find_latest_checkpoint(tmp_path) == tmp_path / "global_step_1"  # ...and step 1 still resumes


def test_crash_after_shards_before_pointer_resumes_previous_step(tmp_path: Path, make_step) -> None:
    make_step(tmp_path, 1, world_size=2)
    write_latest_pointer(tmp_path, 1)
    # A save of step 2 killed after rank 0's model shard: the other files and the pointer never come.
    result = _run_and_kill(f"""
        import os, signal, torch
        actor = {str(tmp_path / 'global_step_2' / 'actor')!r}
        os.makedirs(actor)
        torch.save({{"w": torch.zeros(4)}}, os.path.join(actor, "model_world_size_2_rank_0.pt"))
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    assert result.returncode == -9
    assert find_latest_checkpoint(tmp_path) == tmp_path / "global_step_1"


def test_pointer_to_an_incomplete_step_falls_back_with_a_warning(tmp_path: Path, make_step, truncate,
                                                                caplog) -> None:
    # An earlier test's import (vLLM) may have raised the root logger's level: capture warnings regardless.
    caplog.set_level(logging.WARNING, logger="strata.checkpoint")
    make_step(tmp_path, 1)
    make_step(tmp_path, 2)
    make_step(tmp_path, 3)
    # step 3 was the pointer's, but its optimizer shard was cut mid-write (e.g. disk full, then a retry)
    write_latest_pointer(tmp_path, 3)
    truncate(tmp_path / "global_step_3/actor/optim_world_size_1_rank_0.pt")
    assert find_latest_checkpoint(tmp_path) == tmp_path / "global_step_2"
    assert "incomplete" in caplog.text and "global_step_2" in caplog.text


def test_no_pointer_uses_newest_complete_step(tmp_path: Path, make_step, caplog) -> None:
    make_step(tmp_path, 1)
    make_step(tmp_path, 2, data=False)  # data.pt is written last: its absence marks an unfinished save
    assert find_latest_checkpoint(tmp_path) == tmp_path / "global_step_1"


def test_unreadable_pointer_is_ignored(tmp_path: Path, make_step, caplog) -> None:
    make_step(tmp_path, 4)
    (tmp_path / POINTER_FILE).write_text("")  # what verl's own non-atomic write leaves on a crash
    assert read_latest_pointer(tmp_path) is None
    assert find_latest_checkpoint(tmp_path) == tmp_path / "global_step_4"


def test_pointer_is_never_overtaken_by_a_later_folder(tmp_path: Path, make_step) -> None:
    """A complete step 3 without its pointer update was not committed; the pointer's step 2 wins."""
    make_step(tmp_path, 2)
    make_step(tmp_path, 3)
    write_latest_pointer(tmp_path, 2)
    assert find_latest_checkpoint(tmp_path) == tmp_path / "global_step_2"


def test_empty_root_means_start_afresh(tmp_path: Path) -> None:
    assert find_latest_checkpoint(tmp_path) is None
    assert find_latest_checkpoint(tmp_path / "missing") is None
