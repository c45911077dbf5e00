"""A real Ctrl-C landed inside a tool's staged block (`strata.staging`), at a chosen write: for the interruption
tests.

The tool runs in a child interpreter with an audit hook (`sys.addaudithook`) that stops the process (SIGSTOP to
itself) when it is about to open its ``nth_write``-th file for writing inside a partial folder. The test then
sends SIGINT and SIGCONT: the Ctrl-C is pending when the process resumes, so it lands there, mid-write, on every
machine however loaded (a helper that watched for the partial folder from outside lost the race under load: the
tool finished first). The child sets Python's own SIGINT handler first: a suite started in the background by a
shell without job control (`cmd &` in a script, as a CI runner may) inherits SIGINT ignored, and Python keeps an
ignored SIGINT ignored, so the Ctrl-C would never land."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CHILD = """
import os, signal, sys

def stop_at_write(event, args, left=[{nth_write}]):
    if event == "open" and ".partial-" in os.fsdecode(args[0]) and args[2] & (os.O_WRONLY | os.O_RDWR):
        left[0] -= 1
        if left[0] == 0:
            os.kill(os.getpid(), signal.SIGSTOP)

signal.signal(signal.SIGINT, signal.default_int_handler)  # as a terminal's Ctrl-C finds it, however pytest started
sys.addaudithook(stop_at_write)
from strata.cli import main
sys.exit(main(sys.argv[1:]))
"""


def partial_folder(final: Path, pid: int) -> Path:
    """Where `strata.staging.staged` builds ``final`` in process ``pid``."""
    return final.parent / f".{final.name}.partial-{pid}"


def _stopped(process: subprocess.Popen, timeout_s: float) -> bool:
    """Until ``process`` has stopped itself (state ``T`` in /proc): True, or False if it ended first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        if Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("T", "t"):
            return True
        time.sleep(0.01)
    if process.poll() is None:
        process.kill()
        pytest.fail(f"strata did not reach its write within {timeout_s} s")
    return False


def interrupt_mid_write(args: list[str], final: Path, nth_write: int = 2,
                        timeout_s: float = 300.0) -> subprocess.CompletedProcess:
    """Run ``strata *args``, press Ctrl-C just before it opens its ``nth_write``-th file inside the partial folder
    of ``final``, and return the completed process."""
    process = subprocess.Popen([sys.executable, "-c", CHILD.format(nth_write=nth_write), *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not _stopped(process, timeout_s):
        out, err = process.communicate()
        pytest.fail(f"strata {args[0]} ended (exit {process.returncode}) before its write {nth_write} in a partial "
                    f"folder:\n{out}{err}")
    assert partial_folder(final, process.pid).is_dir()  # the stop is inside the staged block
    os.kill(process.pid, signal.SIGINT)
    os.kill(process.pid, signal.SIGCONT)
    out, err = process.communicate(timeout=timeout_s)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def assert_interrupted_cleanly(tool: str, final: Path, result: subprocess.CompletedProcess) -> None:
    """Exit 130, the one line saying so and no traceback, and neither the folder nor any partial one."""
    assert result.returncode == 130, result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1] == f"strata {tool}: interrupted", result.stderr
    assert "Traceback" not in result.stderr
    assert not final.exists() and not list(final.parent.glob(f".{final.name}.partial-*"))
