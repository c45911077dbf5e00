"""The trainer removes the shared memory its run left, and only that: not what was there before, not what a
live process still maps or holds open, not another user's; and a segment it cannot remove fails nothing."""

from __future__ import annotations

import mmap
import os
import subprocess
import sys
from pathlib import Path

import pytest

from strata.trainer.shared_memory import remove_leftovers, segments_in_use, shared_segments


def segment(root, name: str, size: int = 4096):
    path = root / name
    path.write_bytes(b"\0" * size)
    return path


def test_only_new_unused_segments_are_removed(tmp_path):
    older = segment(tmp_path, "psm_older")
    before = shared_segments(tmp_path)
    left = segment(tmp_path, "psm_left")
    semaphore = segment(tmp_path, "sem.loky-1-x")
    other_kind = segment(tmp_path, "not_ours")
    mapped = segment(tmp_path, "psm_mapped")
    held = segment(tmp_path, "verl_weights_held")
    with open(mapped, "r+b") as file, mmap.mmap(file.fileno(), 0):
        pass  # closed again: a mapping that ended does not keep a segment
    mapped_now = segment(tmp_path, "psm_mapped_now")
    # Another process keeps one mapped and one open, as a live job's vLLM engine would.
    keeper = subprocess.Popen([sys.executable, "-c", (
        "import mmap, sys, time\n"
        f"m = open({str(mapped_now)!r}, 'r+b'); view = mmap.mmap(m.fileno(), 0); m.close()\n"
        f"f = open({str(held)!r}, 'rb')\n"
        "print('ready', flush=True); time.sleep(60)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert keeper.stdout.readline().strip() == "ready"
        assert {mapped_now, held} <= segments_in_use(tmp_path)
        removed = remove_leftovers(before, tmp_path, wait_s=0.0)
        assert removed == {left: 4096, semaphore: 4096, mapped: 4096}
        assert {path.name for path in tmp_path.iterdir()} == {
            older.name, other_kind.name, mapped_now.name, held.name}
    finally:
        keeper.kill()
        keeper.wait()
    # Once its process has ended, what it held is a leftover like the rest.
    assert sorted(remove_leftovers(before, tmp_path, wait_s=5.0)) == sorted([held, mapped_now])


def test_another_user_s_segment_is_never_touched_and_a_refusal_fails_nothing(tmp_path, monkeypatch, capsys):
    before = shared_segments(tmp_path)
    theirs = segment(tmp_path, "psm_another_user")
    try:
        os.chown(theirs, 65534, 65534)  # "nobody": what another user's job leaves on a shared node
    except PermissionError:
        pytest.skip("only root can give a file to another user here")
    refusing = segment(tmp_path, "psm_refusing")
    ours = segment(tmp_path, "psm_ours")
    real_unlink = Path.unlink

    def unlink(path, *args, **kwargs):
        if path == refusing:  # the sticky /dev/shm of a shared node, as an unprivileged user meets it
            raise PermissionError(1, "Operation not permitted", str(path))
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(Path, "unlink", unlink)
    assert remove_leftovers(before, tmp_path, wait_s=0.0) == {ours: 4096}
    assert {path.name for path in tmp_path.iterdir()} == {theirs.name, refusing.name}
    assert capsys.readouterr().err == f"strata: left {refusing} in place (Operation not permitted)\n"
