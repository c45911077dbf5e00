"""After Ray's shutdown the trainer ends the processes its run started that outlive it, and only those: real
processes carrying the run's mark or not, orphaned (their parent gone, as a killed actor's vLLM engine is) or
still the test's own children."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from strata.trainer.run_processes import RUN_MARK, end_orphans, marked_processes, orphans

MARK_VALUE = f"test-{os.getpid()}"
MARK = f"{RUN_MARK}={MARK_VALUE}"


def orphan(lives_s: float, marked: bool = True) -> int:
    """A process whose parent has exited (so it is no longer under this one), living ``lives_s`` seconds."""
    env = dict(os.environ)
    env.pop(RUN_MARK, None)
    if marked:
        env[RUN_MARK] = MARK_VALUE
    launcher = subprocess.run([sys.executable, "-c", (
        "import subprocess, sys\n"
        f"child = subprocess.Popen([sys.executable, '-c', {running(lives_s)!r}], "
        "start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)\n"
        "child.stdout.readline()\n"
        "print(child.pid)\n")], env=env, capture_output=True, text=True, check=True)
    return int(launcher.stdout)


def running(lives_s: float) -> str:
    """A child's program that says so once it runs: ``Popen`` returns when the kernel has begun the new
    program, a moment before its ``/proc/<pid>/environ`` can be read (a fresh-clone CI run once caught one
    in that moment), so the tests wait for the line before they look."""
    return f"import time; print('running', flush=True); time.sleep({lives_s})"


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def started() -> list[int]:
    pids: list[int] = []
    yield pids
    for pid in pids:  # whatever a failing test left
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def test_an_orphan_that_ends_by_itself_is_waited_for_not_killed(started):
    started.append(quick := orphan(lives_s=1.0))
    assert orphans(MARK) == {quick}
    began = time.monotonic()
    assert end_orphans(MARK, grace_s=20.0) == {}
    assert not alive(quick) and time.monotonic() - began < 10.0


def test_orphans_of_the_run_still_running_after_the_grace_are_killed_and_nothing_else(started):
    started.append(stuck := orphan(lives_s=120.0))
    started.append(another_jobs := orphan(lives_s=120.0, marked=False))
    own_child = subprocess.Popen([sys.executable, "-c", running(120.0)], stdout=subprocess.PIPE,
                                 env=dict(os.environ, **{RUN_MARK: MARK_VALUE}))
    started.append(own_child.pid)
    own_child.stdout.readline()
    try:
        assert {stuck, own_child.pid} <= marked_processes(MARK)
        assert orphans(MARK) == {stuck}  # this process's own child is its own to end
        name = Path(f"/proc/{stuck}/comm").read_text().strip()
        assert end_orphans(MARK, grace_s=1.0) == {stuck: name}
        assert not alive(stuck)
        assert alive(another_jobs) and own_child.poll() is None
    finally:
        own_child.kill()
        own_child.wait()
        own_child.stdout.close()
