"""Trainer runs must not leave shared memory behind on the machine that runs the suite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from strata.trainer.shared_memory import remove_leftovers, shared_segments


@pytest.fixture(scope="module", autouse=True)
def remove_leftover_shared_memory() -> Iterator[None]:
    """A safety net for runs that did not end by themselves (a test's timeout, a killed trainer): remove the
    segments a module's runs created and left behind (those present before stay)."""
    before = shared_segments()
    yield
    remove_leftovers(before, wait_s=0.0)
