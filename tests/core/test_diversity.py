"""Farthest-point selection: a hand-worked case, a slow reference loop, invariants, candidate handling."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from strata.core.diversity import farthest_point_select, normalize_rows, select_strategies
from strata.core.embedding import HashedBowEmbedder


def reference_farthest_point(embeddings: list[list[float]], k: int) -> tuple[list[int], float]:
    """Plain-Python FPS; also returns the smallest gap between the best and runner-up objective over all
    picks, so a test can skip inputs whose answer hinges on the last bit of rounding."""
    count = len(embeddings)
    if k >= count:
        return list(range(count)), math.inf
    if k == 0:
        return [], math.inf

    def unit(vector: list[float]) -> list[float]:
        norm = math.hypot(*vector)  # scaled internally: no underflow for tiny vectors
        return [x / norm for x in vector] if norm > 0 else [0.0] * len(vector)

    def dot(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    def best_and_gap(objective: dict[int, float]) -> tuple[int, float]:
        ranked = sorted(objective.items(), key=lambda item: (item[1], item[0]))
        gap = ranked[1][1] - ranked[0][1] if len(ranked) > 1 else math.inf
        return ranked[0][0], gap

    units = [unit(row) for row in embeddings]
    centroid = unit([sum(column) / count for column in zip(*units, strict=True)])
    # First pick: most similar to the centroid = smallest negated similarity.
    first, gap = best_and_gap({i: -dot(units[i], centroid) for i in range(count)})
    picked, smallest_gap = [first], gap
    while len(picked) < k:
        objective = {i: max(dot(units[i], units[j]) for j in picked) for i in range(count) if i not in picked}
        choice, gap = best_and_gap(objective)
        picked.append(choice)
        smallest_gap = min(smallest_gap, gap)
    return picked, smallest_gap


def test_farthest_point_by_hand() -> None:
    # Unit directions at 0°, 10°, 90° and 45° (the last given unnormalised as [1, 1]).
    # Centroid of the unit vectors: (1 + cos10° + 0 + √½, 0 + sin10° + 1 + √½) / 4 points at ≈ 34.9°,
    #   so the first pick is the 45° vector (index 3; 10.1° away, against 24.9° for index 1).
    # Similarity to {3}: index 0 cos45°, index 1 cos35°, index 2 cos45° → a tie between 0 and 2 that
    #   goes to the lower index: 0.
    # Max similarity to {3, 0}: index 1 max(cos35°, cos10°) = 0.985, index 2 max(cos45°, cos90°) = 0.707 → 2.
    angle = math.radians(10)
    embeddings = np.array([[1.0, 0.0], [math.cos(angle), math.sin(angle)], [0.0, 1.0], [1.0, 1.0]])
    assert farthest_point_select(embeddings, 1) == [3]
    assert farthest_point_select(embeddings, 3) == [3, 0, 2]


def test_k_at_least_c_keeps_all_in_index_order() -> None:
    embeddings = np.eye(3)
    assert farthest_point_select(embeddings, 3) == [0, 1, 2]
    assert farthest_point_select(embeddings, 10) == [0, 1, 2]
    assert farthest_point_select(embeddings, 0) == []


def test_zero_vectors_do_not_produce_nan() -> None:
    # A zero row normalises to zero: similarity 0 to everything.
    # Centroid of [0, 0], [1, 0], [0, 1] points at 45°; indices 1 and 2 tie at cos45° → 1.
    # Similarity to {1}: index 0 → 0, index 2 → 0, a tie → 0.
    assert farthest_point_select(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), 2) == [1, 0]
    assert farthest_point_select(np.zeros((3, 4)), 2) == [0, 1]
    assert np.isfinite(normalize_rows(np.zeros((2, 3)))).all()


@pytest.mark.parametrize(
    ("embeddings", "k", "message"),
    [
        (np.ones(3), 1, "shape"),
        (np.array([[np.nan, 1.0], [1.0, 0.0]]), 1, "NaN"),
        (np.eye(2), -1, "k must be"),
    ],
)
def test_invalid_input_is_rejected(embeddings: np.ndarray, k: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        farthest_point_select(embeddings, k)


MATRICES = arrays(
    np.float64,
    st.tuples(st.integers(1, 12), st.integers(1, 6)),
    elements=st.floats(-4, 4, allow_nan=False, allow_subnormal=False),
)


@settings(deadline=None)
@given(embeddings=MATRICES, data=st.data())
def test_matches_reference_loop(embeddings: np.ndarray, data: st.DataObject) -> None:
    k = data.draw(st.integers(0, embeddings.shape[0] + 1))
    expected, gap = reference_farthest_point(embeddings.tolist(), k)
    # Ties are skipped here: mathematically equal similarities of different vectors may round differently in
    # NumPy and in this loop. The tie rule itself is checked by the hand-worked cases and the scale test.
    assume(gap > 1e-9)
    assert farthest_point_select(embeddings, k) == expected


@settings(deadline=None)
@given(embeddings=MATRICES, data=st.data())
def test_never_repeats_and_returns_min_k_c(embeddings: np.ndarray, data: st.DataObject) -> None:
    k = data.draw(st.integers(0, embeddings.shape[0] + 2))
    picks = farthest_point_select(embeddings, k)
    assert len(picks) == len(set(picks)) == min(k, embeddings.shape[0])
    assert all(0 <= i < embeddings.shape[0] for i in picks)


@settings(deadline=None)
@given(embeddings=MATRICES, data=st.data())
def test_invariant_to_the_scale_of_each_vector(embeddings: np.ndarray, data: st.DataObject) -> None:
    # Powers of two rescale exactly in floating point, so the picks must be identical, tie-breaks included.
    exponents = data.draw(
        st.lists(st.integers(-20, 20), min_size=embeddings.shape[0], max_size=embeddings.shape[0])
    )
    k = data.draw(st.integers(1, embeddings.shape[0]))
    scaled = embeddings * np.exp2(np.array(exponents, dtype=np.float64))[:, None]
    assert farthest_point_select(scaled, k) == farthest_point_select(embeddings, k)


# ---------------------------------------------------------------------------------------------------------
# select_strategies: which candidates are kept


NEAR_DUPLICATES = [
    "go to the fridge, take the apple, then heat the apple with the microwave",
    "go to the fridge, take the apple, heat the apple with the microwave",
    "take the apple from the fridge, then heat the apple with the microwave",
]
DIFFERENT = "search each drawer and cabinet for a key, then put the key on the sofa"


def test_diverse_selection_keeps_one_of_each_kind() -> None:
    texts = [*NEAR_DUPLICATES, DIFFERENT]
    selection = select_strategies(texts, [True] * 4, 2, HashedBowEmbedder())
    picks = selection.kept
    assert 3 in picks
    assert len({*picks} & {0, 1, 2}) == 1
    # Each candidate's nearest kept neighbour: the discarded near-duplicates are close to the kept one of
    # their kind, the kept pair is far apart, and both kept ones see the same pair similarity.
    near = selection.nearest_kept_cosine
    kept_duplicate = next(i for i in picks if i != 3)
    for discarded in {0, 1, 2} - {kept_duplicate}:
        assert near[discarded] > 0.6 > near[3]
    assert near[3] == pytest.approx(near[kept_duplicate])


def test_malformed_candidates_fill_only_missing_slots() -> None:
    # Well-formed: 1 and 3 (fewer than k = 3), so they are kept and the lowest malformed index fills up.
    assert select_strategies(["a", "b", "c", "d"], [False, True, False, True], 3, HashedBowEmbedder()).kept == [
        1,
        3,
        0,
    ]
    # Enough well-formed candidates: malformed ones are never chosen.
    selection = select_strategies(["x y", "p q", "raw", "z w"], [True, True, False, True], 2, HashedBowEmbedder())
    assert 2 not in selection.kept and len(selection.kept) == 2
    assert selection.nearest_kept_cosine[2] is None  # a malformed candidate is never embedded


def test_without_embedder_a_seeded_random_subset_is_kept() -> None:
    # Diversity off (the paper's "hierarchy only"): k of the well-formed candidates, uniformly at random.
    texts, flags = [str(i) for i in range(8)], [i != 0 for i in range(8)]
    picks = {seed: select_strategies(texts, flags, 3, None, seed=seed) for seed in range(40)}
    for selection in picks.values():
        assert len(set(selection.kept)) == 3 and 0 not in selection.kept
        assert selection.nearest_kept_cosine == [None] * 8
    assert select_strategies(texts, flags, 3, None, seed=7) == picks[7]  # seeded: reproducible
    assert len({tuple(sorted(s.kept)) for s in picks.values()}) > 10  # and not a fixed choice
    counts = np.bincount([i for s in picks.values() for i in s.kept], minlength=8)
    assert counts[0] == 0 and counts[1:].min() > 0  # every well-formed candidate can be drawn


def test_fewer_candidates_than_slots_keeps_all() -> None:
    assert select_strategies(["a", "b"], [True, False], 4, HashedBowEmbedder()).kept == [0, 1]


def test_mismatched_flags_are_rejected() -> None:
    with pytest.raises(ValueError, match="well_formed"):
        select_strategies(["a", "b"], [True], 1, None)
