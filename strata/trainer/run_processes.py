"""The processes a run started that outlive its Ray cluster, found by a mark in their environment and ended.

``ray.shutdown()`` ends the raylet and Ray's workers, but not what an actor started by itself: vLLM's engine
core and its worker process (children of the rollout server's actor) are left without a parent and shut down on
their own, usually within seconds, sometimes not before the trainer's shared-memory clean-up has given up on the
segments they still map (a fresh-clone ``make test`` once left 400 MiB of vLLM's message queues in ``/dev/shm``
that way). On a GPU node such a process also holds the GPU's memory.

So the trainer marks its own environment (`mark_run`) before Ray starts; a local Ray cluster's workers and every
process they start inherit the mark. Once Ray is down, the marked processes outside the trainer's own process
tree are the run's orphans: `end_orphans` gives them a grace period to end by themselves, then kills them. A
process without the mark (another job's, another user's, the cluster's own on a node joined with ``ray start``,
whose workers do not inherit this environment) is never touched.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

RUN_MARK = "STRATA_RUN_MARK"
GRACE_S = 30.0  # how long the orphans get to end by themselves before they are killed


def mark_run() -> str:
    """Put a mark unique to this run in this process's environment, for the processes it starts; returns
    the ``NAME=value`` entry they carry."""
    os.environ[RUN_MARK] = uuid.uuid4().hex
    return f"{RUN_MARK}={os.environ[RUN_MARK]}"


def marked_processes(entry: str, command: str | None = None) -> set[int]:
    """The live processes (not zombies) whose environment holds ``entry`` (``NAME=value``), named ``command`` if
    given (``java``); processes that cannot be read (another user's) are not counted."""
    found = set()
    for process in Path("/proc").iterdir():
        if not process.name.isdigit():
            continue
        try:
            if (command is None or (process / "comm").read_text().strip() == command) and \
                    _stat(process)[0] != "Z" and \
                    entry in (process / "environ").read_bytes().decode(errors="replace").split("\0"):
                found.add(int(process.name))
        except OSError:  # ended meanwhile, or not ours to read
            continue
    return found


def _stat(process: Path) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name: state, parent pid, ..."""
    return (process / "stat").read_text().rsplit(")", 1)[1].split()


def _parent(pid: int) -> int | None:
    try:
        return int(_stat(Path(f"/proc/{pid}"))[1])
    except (OSError, IndexError, ValueError):
        return None


def _descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        pid = _parent(pid) or 0
    return False


def orphans(entry: str) -> set[int]:
    """The processes carrying ``entry`` that are neither this process nor started under it (its own children,
    such as multiprocessing's resource tracker, are its to end)."""
    me = os.getpid()
    return {pid for pid in marked_processes(entry) if not _descends_from(pid, me)}


def end_orphans(entry: str, grace_s: float = GRACE_S) -> dict[int, str]:
    """Wait up to ``grace_s`` seconds for the run's orphans (`orphans`) to end by themselves, then kill those
    left; returns the killed ones' pids with their names."""
    deadline = time.monotonic() + grace_s
    while (left := orphans(entry)) and time.monotonic() < deadline:
        time.sleep(0.5)
    killed = {}
    for pid in sorted(left):
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
            os.kill(pid, signal.SIGKILL)
            killed[pid] = name
        except OSError:  # ended meanwhile
            continue
    end = time.monotonic() + 5.0  # a killed process still maps its segments until the kernel has reaped it
    while orphans(entry) and time.monotonic() < end:
        time.sleep(0.1)
    return killed
