"""Derived sampling seeds are stable, in range and distinct for distinct names."""

from __future__ import annotations

import subprocess
import sys

from strata.core.seeding import SEED_BITS, derive_seed


def test_same_parts_same_seed_in_another_process():
    code = "from strata.core.seeding import derive_seed; print(derive_seed(7, 'train', 3, 'strategy/1'))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": "123"})
    assert int(other.stdout) == derive_seed(7, "train", 3, "strategy/1")


def test_seeds_are_in_range_and_distinct():
    seeds = {derive_seed(0, step, task, turn) for step in range(5) for task in range(20) for turn in range(10)}
    assert len(seeds) == 5 * 20 * 10
    assert all(0 <= s < 2**SEED_BITS for s in seeds)
    assert derive_seed(1, 2) != derive_seed(12) != derive_seed("1", 2)
