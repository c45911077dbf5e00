"""The FSDP2 row split, checked against FSDP2's own chunking."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.distributed.fsdp._fully_shard._fsdp_common import _chunk_with_empty

from strata.checkpoint.fsdp2 import shard_rows


@settings(deadline=None)  # no wall-clock limit per example: a loaded CI machine is not a failure
@given(rows=st.integers(0, 300), world_size=st.integers(1, 17))
def test_rows_match_fsdp2_chunking(rows: int, world_size: int) -> None:
    # _chunk_with_empty is what FSDP2 uses to cut a parameter into per-rank shards (private: used as an oracle)
    chunks = _chunk_with_empty(torch.arange(rows), world_size, dim=0)
    for rank, chunk in enumerate(chunks):
        start, stop = shard_rows(rows, world_size, rank)
        assert torch.equal(torch.arange(rows)[start:stop], chunk)


def test_examples_by_hand() -> None:
    # 64 rows over 3 ranks: ceil(64/3) = 22 -> 22, 22, 20; 5 rows over 4 ranks: 2, 2, 1, 0
    assert [shard_rows(64, 3, r) for r in range(3)] == [(0, 22), (22, 44), (44, 64)]
    assert [shard_rows(5, 4, r) for r in range(4)] == [(0, 2), (2, 4), (4, 5), (5, 5)]


def test_rank_outside_world() -> None:
    with pytest.raises(ValueError, match="outside world size"):
        shard_rows(4, 2, 2)
