"""A real Ctrl-C landed inside a tool's staged block (`strata.staging`): for the interruption tests.

The helper waits for the tool's partial folder to appear, stops the process there (SIGSTOP, waiting until it has
stopped), and sends SIGINT only if the partial folder is still there, so the interruption always falls inside the
staged block; a tool that finished first is let go and the attempt repeated with a new output."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest


def partial_folder(final: Path, pid: int) -> Path:
    """Where `strata.staging.staged` builds ``final`` in process ``pid``."""
    return final.parent / f".{final.name}.partial-{pid}"


def _appeared(path: Path, process: subprocess.Popen, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        if path.exists():
            return True
        time.sleep(0.001)
    return False


def _wait_until_stopped(pid: int, timeout_s: float = 10.0) -> None:
    """Until ``pid`` is stopped (state ``T`` in /proc): a process in a system call (the rename that ends the staged
    block) stops only when the call returns, so the folder it works on is settled only then."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("T", "t"):
            return
        time.sleep(0.001)
    pytest.fail(f"process {pid} did not stop within {timeout_s} s of SIGSTOP")


def interrupt_mid_write(command: Callable[[int], tuple[list[str], Path]], attempts: int = 10,
                        timeout_s: float = 120.0) -> tuple[list[str], Path, subprocess.CompletedProcess]:
    """Run ``strata *args`` (``command(attempt)`` gives the arguments and the folder the tool stages) until one
    run is interrupted inside its staged block; that run's arguments, final folder and completed process."""
    for attempt in range(attempts):
        args, final = command(attempt)
        process = subprocess.Popen([sys.executable, "-m", "strata.cli", *args], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        staging = partial_folder(final, process.pid)
        caught = _appeared(staging, process, timeout_s)
        if caught:
            os.kill(process.pid, signal.SIGSTOP)
            _wait_until_stopped(process.pid)  # kill() returns before a process inside a rename has stopped
            caught = staging.exists()
            if caught:
                os.kill(process.pid, signal.SIGINT)
            os.kill(process.pid, signal.SIGCONT)
        out, err = process.communicate(timeout=timeout_s)
        if caught:
            return args, final, subprocess.CompletedProcess(process.args, process.returncode, out, err)
        assert process.returncode == 0, err
    pytest.fail(f"strata {args[0]} finished before it could be interrupted in {attempts} attempts")


def assert_interrupted_cleanly(tool: str, final: Path, result: subprocess.CompletedProcess) -> None:
    """Exit 130, the one line saying so and no traceback, and neither the folder nor any partial one."""
    assert result.returncode == 130, result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1] == f"strata {tool}: interrupted", result.stderr
    assert "Traceback" not in result.stderr
    assert not final.exists() and not list(final.parent.glob(f".{final.name}.partial-*"))
