"""A real Ctrl-C (SIGINT to the `strata` process) while export or reshard writes: one line, exit 130, nothing
half-written (`strata.checkpoint.staging`), and the same command then succeeds.

To land the signal mid-write, the test waits for the tool's partial folder to appear, stops the process there
(SIGSTOP), and sends SIGINT only if the partial folder is still there, so the interruption always falls inside the
staged block; a tool that finished first is let go and the attempt repeated."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ATTEMPTS = 10


def command(tool: str, step: Path, out: Path) -> tuple[list[str], Path]:
    """The tool's arguments, and the folder its staged work is renamed to."""
    if tool == "export":
        return ["export", "--checkpoint", str(step), "--out", str(out)], out
    return ["reshard", "--checkpoint", str(step), "--world-size", "2", "--out", str(out)], out / step.name


def partial(final: Path, pid: int) -> Path:
    return final.parent / f".{final.name}.partial-{pid}"


def wait_for(path: Path, process: subprocess.Popen, timeout_s: float = 120.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        if path.exists():
            return True
        time.sleep(0.001)
    return False


@pytest.mark.parametrize("tool", ["export", "reshard"])
def test_a_real_ctrl_c_leaves_nothing_half_written(tool: str, fsdp_checkpoints, tmp_path: Path) -> None:
    step = fsdp_checkpoints[1]
    for attempt in range(ATTEMPTS):
        args, final = command(tool, step, tmp_path / f"out{attempt}")
        process = subprocess.Popen([sys.executable, "-m", "strata.cli", *args], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        staging = partial(final, process.pid)
        caught = wait_for(staging, process)
        if caught:
            os.kill(process.pid, signal.SIGSTOP)
            caught = staging.exists()
            if caught:
                os.kill(process.pid, signal.SIGINT)
            os.kill(process.pid, signal.SIGCONT)
        out, err = process.communicate(timeout=120)
        if not caught:
            assert process.returncode == 0, err
            continue
        assert process.returncode == 130, out + err
        assert err.strip().splitlines()[-1] == f"strata {tool}: interrupted" and "Traceback" not in err, err
        assert not final.exists() and not staging.exists()
        assert not list(final.parent.glob(f".{final.name}.partial-*"))
        # The same command again, uninterrupted: nothing in its way.
        again = subprocess.run([sys.executable, "-m", "strata.cli", *args], capture_output=True, text=True,
                               timeout=300)
        assert again.returncode == 0, again.stderr
        assert final.is_dir() and not list(final.parent.glob(f".{final.name}.partial-*"))
        return
    pytest.fail(f"{tool} finished before it could be interrupted in {ATTEMPTS} attempts")
