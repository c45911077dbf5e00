"""Prompts for the foundation smoke run (plain GRPO, no environment): verl's parquet dataset format."""

from __future__ import annotations

import zlib
from pathlib import Path


def write_smoke_prompts(path: str | Path, count: int) -> Path:
    """Write ``count`` one-message chat prompts in the columns verl's RLHFDataset reads."""
    import pandas as pd

    rows = [
        dict(
            data_source="smoke",
            prompt=[{"role": "user", "content": f"Count to {i}."}],
            ability="smoke",
            reward_model={"style": "rule", "ground_truth": str(i)},
            extra_info={"index": i},
        )
        for i in range(count)
    ]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(path)
    return path


def smoke_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs) -> float:
    """verl custom reward for the smoke run: a checksum of the response spread over [0, 1).

    Deterministic, and different for any two different responses, so every GRPO group of distinct samples
    has reward variance and a step always trains (grad norm > 0). A two-valued reward (such as the length's
    parity) leaves a group of two with no variance half the time, and then a whole step without gradient.
    """
    return zlib.crc32(solution_str.encode()) / 2**32
