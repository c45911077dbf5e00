"""Helpers for the interruption tests of export and reshard (`strata.staging`)."""

from __future__ import annotations

import subprocess


def interrupt_after(real):
    """``real`` that does its work, then is interrupted (Ctrl-C) before returning."""
    def interrupted(*args, **kwargs):
        real(*args, **kwargs)
        raise KeyboardInterrupt
    return interrupted


def a_finished_process_id() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid
