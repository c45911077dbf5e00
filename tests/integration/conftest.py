"""Trainer runs must not leave shared memory behind on the machine that runs the suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

SHARED_MEMORY = Path("/dev/shm")
# vLLM's engine message queues (Python SharedMemory, "psm_*") and verl's weight-transfer buffer
# ("verl_weights_*") and joblib semaphores ("sem.loky-*") outlive their processes when Ray kills them.
LEFTOVER_PATTERNS = ("psm_*", "verl_weights_*", "sem.loky-*")


def _segments() -> set[Path]:
    return {path for pattern in LEFTOVER_PATTERNS for path in SHARED_MEMORY.glob(pattern)}


@pytest.fixture(scope="module", autouse=True)
def remove_leftover_shared_memory() -> Iterator[None]:
    """Remove the segments that a module's runs created and left behind (those present before stay)."""
    before = _segments()
    yield
    for path in _segments() - before:
        path.unlink(missing_ok=True)
