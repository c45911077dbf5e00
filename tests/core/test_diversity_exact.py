"""Exact behaviour of the selection's edges, written for the survivors of mutation testing
(benchmarks/RESULTS_mutation.md): integer and empty embeddings, rows of very different scale, zero rows without
a floating-point warning, the default seed, a single slot, exactly as many well-formed candidates as slots, and
the log line when malformed candidates fill slots."""

from __future__ import annotations

import logging
import random
import warnings

import numpy as np
import pytest

from strata.core.diversity import farthest_point_select, normalize_rows, select_strategies
from strata.core.embedding import HashedBowEmbedder

TEXTS = ["open every drawer", "check the fridge first", "search the countertops", "look under the sink"]


def test_integer_embeddings_are_normalised_as_floats() -> None:
    np.testing.assert_allclose(normalize_rows(np.array([[3, 4], [0, 5]])), [[0.6, 0.8], [0.0, 1.0]])
    assert farthest_point_select(np.array([[1, 0], [0, 1], [1, 1]]), 2) == [2, 0]


def test_rows_of_any_scale_keep_their_direction() -> None:
    # Each row is scaled by its own largest entry: one global scale would underflow the small row to zero.
    np.testing.assert_allclose(normalize_rows(np.array([[1e300, 1e300], [1e-300, 1e-300]])), [[0.5**0.5] * 2] * 2)


def test_zero_and_empty_rows_stay_zero_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0 is ever computed
        assert normalize_rows(np.array([[0.0, 0.0], [2.0, 0.0]])).tolist() == [[0.0, 0.0], [1.0, 0.0]]
        assert normalize_rows(np.zeros((2, 0))).shape == (2, 0)


def test_non_finite_embeddings_are_named() -> None:
    with pytest.raises(ValueError, match=r"^embeddings contain NaN or inf$"):
        farthest_point_select(np.array([[1.0, np.nan]]), 1)


def test_the_default_seed_is_zero() -> None:
    flags = [True] * 4
    expected = random.Random(0).sample(range(4), 2)
    assert select_strategies(TEXTS, flags, 2, embedder=None).kept == expected
    assert select_strategies(TEXTS, flags, 2, embedder=None, seed=0).kept == expected


def test_one_slot_has_no_nearest_kept_neighbour() -> None:
    selection = select_strategies(TEXTS, [True] * 4, 1, HashedBowEmbedder())
    assert len(selection.kept) == 1 and selection.nearest_kept_cosine == [None] * 4


@pytest.mark.parametrize("embedder", [None, HashedBowEmbedder()])
def test_as_many_well_formed_as_slots_keeps_them_in_order_without_choosing(embedder) -> None:
    flags = [True, False, True, True]
    selection = select_strategies(TEXTS, flags, 3, embedder, seed=5)
    assert selection.kept == [0, 2, 3] and selection.nearest_kept_cosine == [None] * 4


def test_malformed_fillers_are_logged(caplog) -> None:
    with caplog.at_level(logging.DEBUG, logger="strata.core.diversity"):
        selection = select_strategies(TEXTS, [True, False, False, True], 3, None)
    assert selection.kept == [0, 3, 1]
    assert [record.getMessage() for record in caplog.records] == [
        "only 2 well-formed strategies for 3 slots; keeping malformed [1]"]
