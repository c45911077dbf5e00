"""The trainer removes the shared memory its run left, and only that: not what was there before, not what a
live process still maps or holds open."""

from __future__ import annotations

import mmap
import subprocess
import sys

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
