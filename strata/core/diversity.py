"""Diverse selection of strategies by farthest-point sampling (spec §1.2).

From C = σ·N sampled strategy candidates, N are kept for execution. Picking them far apart in embedding
space makes the N strategies of a group differ, so the strategy-level advantage compares genuinely
different plans instead of paraphrases of one (the paper's "+ diversity" ablation: 79.0 → 87.9).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from strata.core.embedding import TextEmbedder

logger = logging.getLogger(__name__)


def normalize_rows(embeddings: np.ndarray) -> np.ndarray:
    """Rows of ``embeddings`` [C, D] scaled to unit L2 norm; all-zero rows stay zero (no NaN).

    A zero row has cosine similarity 0 to everything, which is the neutral choice for an embedding that
    carries no direction. Rows are first divided by their largest magnitude, so squaring them can neither
    underflow nor overflow, whatever their scale.
    """
    matrix = np.asarray(embeddings, dtype=np.float64)
    largest = np.abs(matrix).max(axis=1, keepdims=True, initial=0.0)
    matrix = np.divide(matrix, largest, out=np.zeros_like(matrix), where=largest > 0)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def farthest_point_select(embeddings: np.ndarray, k: int) -> list[int]:
    """Indices of ``k`` mutually dissimilar rows of ``embeddings`` [C, D], in pick order.

    With e_i the L2-normalised rows (normalised here, so the result does not depend on their scale):

    1. first pick: argmax_i e_i · m̂, where m̂ is the normalised mean of the e_i (the most central
       candidate, a safe "typical" strategy);
    2. then, until k are picked: argmin_{i ∉ S} max_{j ∈ S} e_i · e_j, the candidate least similar to
       its nearest already-picked one.

    Ties go to the lower index at every step. When ``k >= C`` there is nothing to choose (spec: σ = 1
    keeps all), so all indices are returned in order 0..C−1 rather than in a pick order.

    Raises:
        ValueError: when ``embeddings`` is not a finite 2-D array or ``k`` is negative.
    """
    matrix = np.asarray(embeddings, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"embeddings must be a [C, D] array, got shape {matrix.shape}")
    if not np.isfinite(matrix).all():
        raise ValueError("embeddings contain NaN or inf")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    num_candidates = matrix.shape[0]
    if k >= num_candidates:
        return list(range(num_candidates))
    if k == 0:
        return []

    unit = normalize_rows(matrix)
    centroid = normalize_rows(unit.mean(axis=0, keepdims=True))[0]
    picked = [int(np.argmax(unit @ centroid))]  # argmax/argmin return the first (lowest) index on ties
    nearest_picked = unit @ unit[picked[0]]  # [C] max_{j∈S} e_i·e_j, updated as S grows
    while len(picked) < k:
        nearest_picked[picked] = np.inf  # never pick twice
        choice = int(np.argmin(nearest_picked))
        picked.append(choice)
        nearest_picked = np.maximum(nearest_picked, unit @ unit[choice])
    return picked


@dataclass(frozen=True)
class Selection:
    """Which candidates were kept, and how close each came to the kept set.

    Attributes:
        kept: indices of the kept candidates, in pick order.
        nearest_kept_cosine: per candidate, the cosine similarity of its embedding to the most similar
            *other* kept candidate; None where no embedding was computed (diversity off, nothing to
            choose, a malformed candidate, or a single kept one). For reading dumps: a discarded
            candidate near 1 was a paraphrase of a kept one.
    """

    kept: list[int]
    nearest_kept_cosine: list[float | None]


def select_strategies(
    texts: Sequence[str], well_formed: Sequence[bool], k: int, embedder: TextEmbedder | None, seed: int = 0
) -> Selection:
    """Which of the C candidate strategies to keep: ``k`` indices into ``texts``, in pick order.

    Well-formed candidates (those with a ``<strategy>`` tag; ``texts`` holds their parsed strategy) are
    chosen by :func:`farthest_point_select` over their embeddings. With ``embedder=None`` (diversity off,
    the paper's "hierarchy only" ablation) ``k`` of them are drawn uniformly at random with ``seed``, so
    the ablation changes only how the kept ones are chosen. Malformed candidates are chosen only when
    fewer than ``k`` are well-formed (spec §1.1), lowest index first.
    """
    if len(texts) != len(well_formed):
        raise ValueError(f"{len(texts)} texts but {len(well_formed)} well_formed flags")
    valid = [i for i, ok in enumerate(well_formed) if ok]
    nearest: list[float | None] = [None] * len(texts)
    if len(valid) <= k:
        chosen = valid
    elif embedder is None:
        chosen = random.Random(seed).sample(valid, k)
    else:
        embeddings = embedder.embed([texts[i] for i in valid])
        picks = farthest_point_select(embeddings, k)
        chosen = [valid[i] for i in picks]
        if k > 1:
            unit = normalize_rows(embeddings)
            similarity = unit @ unit[picks].T  # [valid, kept]
            for row, i in enumerate(valid):
                others = [column for column, pick in enumerate(picks) if pick != row]
                nearest[i] = float(similarity[row, others].max())
    fillers = [i for i, ok in enumerate(well_formed) if not ok][: k - len(chosen)]
    if fillers:
        logger.debug(
            "only %d well-formed strategies for %d slots; keeping malformed %s", len(valid), k, fillers
        )
    return Selection(chosen + fillers, nearest)
