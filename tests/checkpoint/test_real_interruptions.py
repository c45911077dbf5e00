"""A real Ctrl-C (SIGINT to the `strata` process) while export or reshard writes: one line, exit 130, nothing
half-written (`strata.staging`), and the same command then succeeds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.interrupting import assert_interrupted_cleanly, interrupt_mid_write


@pytest.mark.parametrize("tool", ["export", "reshard"])
def test_a_real_ctrl_c_leaves_nothing_half_written(tool: str, fsdp_checkpoints, tmp_path: Path) -> None:
    step = fsdp_checkpoints[1]

    out = tmp_path / "out"
    if tool == "export":
        args, final = ["export", "--checkpoint", str(step), "--out", str(out)], out
    else:
        args, final = ["reshard", "--checkpoint", str(step), "--world-size", "2", "--out", str(out)], out / step.name
    result = interrupt_mid_write(args, final)
    assert_interrupted_cleanly(tool, final, result)
    again = subprocess.run([sys.executable, "-m", "strata.cli", *args], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr  # nothing in the way of the same command
    assert final.is_dir() and not list(final.parent.glob(f".{final.name}.partial-*"))
