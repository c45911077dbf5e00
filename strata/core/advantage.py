"""Hierarchical GRPO advantages of StraTA (spec §2), for the N strategies and N·M trajectories of one task.

Two levels share one normalisation rule, verl's GRPO estimator
(``verl.trainer.ppo.core_algos.compute_grpo_outcome_advantage``, verl 0.9.1):

- a group with at least two members: A = (x − mean) / (std + ε) with the unbiased std (``torch.std``),
  or A = x − mean when ``norm_by_std`` is False (verl's ``norm_adv_by_std_in_grpo``, Dr.GRPO);
- a group with a single member: verl uses mean 0 and std 1, so A = x / (1 + ε) (or x).

Strategies are grouped per task (N members) and trajectories per strategy (M_i members). A strategy may
have fewer finished trajectories than the others, so trajectory lists are ragged: M_i varies with i.
Everything is computed in float64 NumPy; verl computes in float32, a difference below 1e-6 relative.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from strata.core.gigpo import StepCredit

PENALTY_MODES = ("post_norm", "pre_norm")
"""Where the shaping and judge penalties enter, see :func:`response_advantages`."""

# floor(δ·M) is taken on a float product: 0.29 * 100 = 28.999999999999996 must count as 29.
_FLOOR_TOLERANCE = 1e-9


def grpo_normalize(
    scores: np.ndarray, group: np.ndarray, eps: float = 1e-6, norm_by_std: bool = True
) -> np.ndarray:
    """Group-relative advantages of ``scores`` [B], grouped by the labels ``group`` [B] (any hashable dtype).

    Matches verl's GRPO estimator (see the module docstring), including its single-member rule
    (mean 0, std 1). One deliberate difference: a group whose members are all equal gets exactly 0,
    where floating-point rounding of its mean would otherwise leave residues of order 1e-17 / ε ≈ 1e-11.

    Returns the advantages [B] as float64.
    """
    scores = np.asarray(scores, dtype=np.float64)
    _, index = np.unique(np.asarray(group), return_inverse=True)
    counts = np.bincount(index)
    singleton = counts == 1

    mean = np.where(singleton, 0.0, np.bincount(index, weights=scores) / counts)
    deviation = scores - mean[index]
    group_min = np.full(counts.shape, np.inf)
    group_max = np.full(counts.shape, -np.inf)
    np.minimum.at(group_min, index, scores)
    np.maximum.at(group_max, index, scores)
    constant = (group_min == group_max) & ~singleton
    deviation = np.where(constant[index], 0.0, deviation)
    if not norm_by_std:
        return deviation

    squares = np.bincount(index, weights=deviation**2)
    std = np.where(singleton, 1.0, np.sqrt(squares / np.maximum(counts - 1, 1)))
    # A zero deviation stays 0 even when ε = 0 and the group's std is 0 (no 0/0 = NaN).
    return np.divide(deviation, std[index] + eps, out=np.zeros_like(deviation), where=deviation != 0)


def strategy_scores(rewards: Sequence[Sequence[float]], delta: float) -> list[float]:
    """Strategy scores S_i: the mean of the k_i = max(1, ⌊δ·M_i⌋) largest rewards of strategy i.

    ``rewards`` holds N lists, list i the rewards R_i1..R_iM_i of strategy i's trajectories (M_i may
    differ between strategies; each uses its own M_i). δ = 1 gives the plain mean, a small δ the max:
    a good strategy is not blamed for the noisy execution of some of its trajectories (spec §2).

    Returns S as a list of N floats.

    Raises:
        ValueError: when δ is outside (0, 1] or a strategy has no trajectory (its score is undefined).
    """
    if not 0.0 < delta <= 1.0:
        raise ValueError(f"delta (strata.delta_coef) must lie in (0, 1], got {delta}")
    lengths = np.array([len(row) for row in rewards], dtype=np.int64)
    if lengths.size and lengths.min() == 0:
        empty = [i for i, length in enumerate(lengths) if length == 0]
        raise ValueError(f"strategies {empty} have no trajectory rewards; drop them before scoring")
    if not lengths.size:
        return []

    padded = np.full((lengths.size, lengths.max()), -np.inf)
    for i, row in enumerate(rewards):
        padded[i, : len(row)] = row
    descending = -np.sort(-padded, axis=1)
    top_k = np.maximum(1, np.floor(delta * lengths + _FLOOR_TOLERANCE).astype(np.int64))
    in_top_k = np.arange(padded.shape[1])[None, :] < top_k[:, None]
    return (np.where(in_top_k, descending, 0.0).sum(axis=1) / top_k).tolist()


def hierarchical_advantages(
    rewards: Sequence[Sequence[float]], delta: float, eps: float = 1e-6, norm_by_std: bool = True
) -> tuple[list[float], list[list[float]]]:
    """The two normalised levels of StraTA, before any penalty (spec §2).

    - strategy advantage Â(z_i) = (S_i − mean_i' S_i') / (std_i' S_i' + ε) over the N strategies;
    - trajectory advantage Â(τ_ij) = (R_ij − mean_j' R_ij') / (std_j' R_ij' + ε) over strategy i's M_i
      trajectories.

    ``rewards`` is N lists of M_i outcome rewards R_ij. Returns (Â(z) as N floats, Â(τ) as N lists of
    M_i floats).
    """
    return _normalise_levels(strategy_scores(rewards, delta), rewards, eps, norm_by_std)


@dataclass(frozen=True)
class GroupAdvantages:
    """Per-response advantages of one task's group, with the intermediate terms kept for metrics.

    Attributes:
        strategy: [N] advantage of each kept strategy response z_i (every strategy token gets it).
        actions: [N][M_i][T_ij] advantage of the action response of step t of trajectory τ_ij.
        strategy_scores: [N] S_i used for the strategy level (penalised in ``pre_norm`` mode).
        strategy_base: [N] normalised strategy advantage Â(z_i).
        trajectory_base: [N][M_i] normalised trajectory advantage Â(τ_ij).
        step_credit: [N][M_i][T_ij] every term of each step's GiGPO advantage (`strata.core.gigpo`); None for
            StraTA and GRPO.
    """

    strategy: list[float]
    actions: list[list[list[float]]]
    strategy_scores: list[float]
    strategy_base: list[float]
    trajectory_base: list[list[float]]
    step_credit: list[list[list[StepCredit]]] | None = None


def response_advantages(
    rewards: Sequence[Sequence[float]],
    strategy_shaping: Sequence[float],
    action_shaping: Sequence[Sequence[Sequence[float]]],
    judge_penalties: Sequence[Sequence[Sequence[float]]],
    delta: float,
    eps: float = 1e-6,
    norm_by_std: bool = True,
    penalty_mode: str = "post_norm",
    inadmissible_penalties: Sequence[Sequence[Sequence[float]]] | None = None,
) -> GroupAdvantages:
    """Final per-response advantages of one task (spec §2, "Final token advantages").

    Inputs, for N strategies, M_i trajectories of strategy i and T_ij steps of trajectory τ_ij:
    ``rewards`` [N][M_i] outcome rewards R_ij; ``strategy_shaping`` [N] s(z_i); ``action_shaping``
    [N][M_i][T_ij] s(a_t); ``judge_penalties`` [N][M_i][T_ij] j_t = −κ·1[t ∈ I(τ_ij)] (all ≤ 0, see
    :mod:`strata.core.rewards`). ``inadmissible_penalties`` [N][M_i][T_ij] ι_t ≤ 0, an extension beyond the
    paper (``strata.inadmissible_penalty``), enters wherever j_t does (None: no such term, as in the paper).

    ``post_norm`` (default, spec): penalties are added after normalisation,

        strategy response:          A = Â(z_i) + s(z_i)
        action response of step t:  A = Â(τ_ij) + s(a_t) + j_t (+ ι_t)

    ``pre_norm``: penalties enter the rewards that are normalised, the way verl's GRPO estimator would
    treat them if they were token-level rewards on the same row (it sums a row's rewards into one score):

        R̃_ij = R_ij + Σ_t (s(a_t) + j_t (+ ι_t))  (trajectory reward with its responses' penalties)
        S̃_i  = mean of the top max(1, ⌊δ·M_i⌋) of R̃_i·  +  s(z_i)
        strategy response:          A = (S̃_i − mean S̃) / (std S̃ + ε)
        action response of step t:  A = (R̃_ij − mean_j' R̃_ij') / (std_j' R̃_ij' + ε)

    so every action of a trajectory shares one advantage. The spec keeps ``post_norm`` as default because
    in ``pre_norm`` a small penalty difference is divided by a std that is ~0 whenever all M trajectories
    share an outcome, and becomes a ±1-sized advantage.

    Raises:
        ValueError: on an unknown ``penalty_mode`` or inputs whose shapes disagree.
    """
    if penalty_mode not in PENALTY_MODES:
        raise ValueError(f"unknown penalty_mode {penalty_mode!r}; valid: {', '.join(PENALTY_MODES)}")
    _check_shapes(rewards, strategy_shaping, action_shaping, judge_penalties)
    if inadmissible_penalties is not None:
        _check_shapes(rewards, strategy_shaping, action_shaping, inadmissible_penalties, "inadmissible_penalties")
        judge_penalties = [
            [np.add(judged, refused) for judged, refused in zip(judged_i, refused_i, strict=True)]
            for judged_i, refused_i in zip(judge_penalties, inadmissible_penalties, strict=True)
        ]
    step_penalties = [
        [np.add(shaping, judged) for shaping, judged in zip(shaping_i, judged_i, strict=True)]
        for shaping_i, judged_i in zip(action_shaping, judge_penalties, strict=True)
    ]
    combine = _post_norm if penalty_mode == "post_norm" else _pre_norm
    return combine(rewards, strategy_shaping, step_penalties, delta, eps, norm_by_std)


def _post_norm(
    rewards: Sequence[Sequence[float]],
    strategy_shaping: Sequence[float],
    step_penalties: list[list[np.ndarray]],
    delta: float,
    eps: float,
    norm_by_std: bool,
) -> GroupAdvantages:
    # A = Â(z_i) + s(z_i) and A = Â(τ_ij) + (s(a_t) + j_t); step_penalties[i][j] holds s(a_t) + j_t.
    scores = strategy_scores(rewards, delta)
    strategy_base, trajectory_base = _normalise_levels(scores, rewards, eps, norm_by_std)
    strategy = np.add(strategy_base, strategy_shaping).tolist()
    actions = [
        [(base + penalties).tolist() for base, penalties in zip(base_i, pen_i, strict=True)]
        for base_i, pen_i in zip(trajectory_base, step_penalties, strict=True)
    ]
    return GroupAdvantages(strategy, actions, scores, strategy_base, trajectory_base)


def _pre_norm(
    rewards: Sequence[Sequence[float]],
    strategy_shaping: Sequence[float],
    step_penalties: list[list[np.ndarray]],
    delta: float,
    eps: float,
    norm_by_std: bool,
) -> GroupAdvantages:
    # R̃_ij = R_ij + Σ_t (s(a_t) + j_t), S̃_i = top-k mean of R̃_i· + s(z_i); both levels normalised as usual.
    penalised_rewards = [
        [reward + float(penalties.sum()) for reward, penalties in zip(rewards_i, pen_i, strict=True)]
        for rewards_i, pen_i in zip(rewards, step_penalties, strict=True)
    ]
    scores = np.add(strategy_scores(penalised_rewards, delta), strategy_shaping).tolist()
    strategy_base, trajectory_base = _normalise_levels(scores, penalised_rewards, eps, norm_by_std)
    actions = [
        [[base] * len(penalties) for base, penalties in zip(base_i, pen_i, strict=True)]
        for base_i, pen_i in zip(trajectory_base, step_penalties, strict=True)
    ]
    return GroupAdvantages(list(strategy_base), actions, scores, strategy_base, trajectory_base)


def _normalise_levels(
    scores: Sequence[float], rewards: Sequence[Sequence[float]], eps: float, norm_by_std: bool
) -> tuple[list[float], list[list[float]]]:
    # Strategy level: one group of N. Trajectory level: one group per strategy, ragged, done in one call.
    strategy = grpo_normalize(np.asarray(scores), np.zeros(len(scores), dtype=np.int64), eps, norm_by_std)
    lengths = [len(row) for row in rewards]
    flat = np.fromiter((r for row in rewards for r in row), dtype=np.float64, count=sum(lengths))
    owner = np.repeat(np.arange(len(lengths)), lengths)
    trajectory = grpo_normalize(flat, owner, eps, norm_by_std)
    bounds = np.cumsum([0, *lengths])
    return strategy.tolist(), [trajectory[a:b].tolist() for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _check_shapes(
    rewards: Sequence[Sequence[float]],
    strategy_shaping: Sequence[float],
    action_shaping: Sequence[Sequence[Sequence[float]]],
    penalties: Sequence[Sequence[Sequence[float]]],
    penalty_name: str = "judge_penalties",
) -> None:
    num_strategies = len(rewards)
    if not len(strategy_shaping) == len(action_shaping) == len(penalties) == num_strategies:
        raise ValueError(
            f"expected N={num_strategies} strategies everywhere, got strategy_shaping "
            f"{len(strategy_shaping)}, action_shaping {len(action_shaping)}, {penalty_name} "
            f"{len(penalties)}"
        )
    for i in range(num_strategies):
        trajectories = len(rewards[i])
        if not len(action_shaping[i]) == len(penalties[i]) == trajectories:
            raise ValueError(
                f"strategy {i}: {trajectories} rewards but {len(action_shaping[i])} action_shaping and "
                f"{len(penalties[i])} {penalty_name} trajectories"
            )
        for j in range(trajectories):
            if len(action_shaping[i][j]) != len(penalties[i][j]):
                raise ValueError(
                    f"trajectory ({i}, {j}): {len(action_shaping[i][j])} action_shaping steps but "
                    f"{len(penalties[i][j])} {penalty_name} steps"
                )
