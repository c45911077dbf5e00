"""The shared memory a run leaves in ``/dev/shm``, removed when the run ends.

vLLM's engine message queues (Python ``SharedMemory``: ``psm_*``), verl's weight-transfer buffers
(``verl_weights_*``) and joblib's semaphores (``sem.loky-*``) are unlinked by their owners on a clean close,
but Ray ends its actors with a kill, so every run left its segments behind: 420 MB of RAM (``/dev/shm`` is
memory) after a tiny CPU run on vLLM, and a node that evaluates seed after seed fills up. When the run is
over and Ray is shut down, the trainer removes the segments that appeared during the run, that this user owns
and that no live process maps or holds open, so a segment of another job on the same node is never touched (on a
shared node another user's processes cannot even be read, and ``/dev/shm`` is sticky). Clean-up never fails a run:
a segment that cannot be removed stays, and is reported.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

SHARED_MEMORY = Path("/dev/shm")
LEFTOVER_PATTERNS = ("psm_*", "verl_weights_*", "sem.loky-*")


def shared_segments(root: Path = SHARED_MEMORY) -> set[Path]:
    """The segments of the kinds a run leaves (``LEFTOVER_PATTERNS``) now present under ``root``."""
    return {path for pattern in LEFTOVER_PATTERNS for path in root.glob(pattern)}


def _owned(path: Path) -> bool:
    try:
        return path.stat().st_uid == os.getuid()
    except OSError:  # gone meanwhile
        return False


def segments_in_use(root: Path = SHARED_MEMORY) -> set[Path]:
    """Files under ``root`` that a live process has mapped or open (from ``/proc/*/maps`` and ``/proc/*/fd``)."""
    prefix = f"{root}/"
    used: set[Path] = set()
    for process in Path("/proc").iterdir():
        if not process.name.isdigit():
            continue
        try:
            for line in (process / "maps").read_text().splitlines():
                fields = line.split(maxsplit=5)
                if len(fields) == 6 and fields[5].startswith(prefix):
                    used.add(Path(fields[5].removesuffix(" (deleted)")))
            for descriptor in (process / "fd").iterdir():
                target = os.readlink(descriptor)
                if target.startswith(prefix):
                    used.add(Path(target))
        except OSError:  # the process ended meanwhile, or is not ours to read
            continue
    return used


def remove_leftovers(before: set[Path], root: Path = SHARED_MEMORY, wait_s: float = 10.0) -> dict[Path, int]:
    """Unlink this user's segments that appeared since ``before`` and that nothing uses; returns them with their
    sizes.

    Processes that Ray is still tearing down may map a segment for a moment, so a busy one is looked at
    again for up to ``wait_s`` seconds; one still busy after that belongs to a live process and stays. One that
    cannot be unlinked (permissions) stays too, with a warning: clean-up never fails the run it follows.
    """
    deadline = time.monotonic() + wait_s
    removed: dict[Path, int] = {}
    refused: set[Path] = set()
    while True:
        leftovers = {path for path in shared_segments(root) - before - refused if _owned(path)}
        free = leftovers - segments_in_use(root)
        for path in sorted(free):
            try:
                size = path.stat().st_size
                path.unlink()
                removed[path] = size
            except FileNotFoundError:  # its owner unlinked it meanwhile
                continue
            except OSError as error:
                refused.add(path)
                print(f"strata: left {path} in place ({error.strerror})", file=sys.stderr)
        if leftovers == free or time.monotonic() >= deadline:
            break
        time.sleep(0.5)
    return removed
