"""GiGPO's advantages (Feng et al. 2025, "Group-in-Group Policy Optimization", eqs. 3-8), for one task's group.

GiGPO is the strongest baseline of StraTA's papers; this is its credit rule on StraTA's harness, read from the
paper and verl-agent's ``gigpo/core_gigpo.py``. A task's G episodes form one group; every step is one row.

- **Episode part** (eq. 3): each row carries its episode's score e = ``reward_scale``·R(τ) (plus the row's
  penalties in ``pre_norm`` mode, where verl-agent puts its invalid-action penalty); the part is e − mean
  (``mean_norm``, verl-agent's default) or (e − mean) / (std + ε) (``mean_std_norm``). The mean and the unbiased
  std are taken over the group's step rows (``episode_stats=steps``, verl-agent's default: a long episode weighs
  more) or over one row per trajectory, its first (``trajectories``, the loop verl-agent runs when its
  ``compute_mean_std_cross_steps`` is off). A group of one has mean 0 and std 1, as in verl's GRPO.
- **Step part** (eqs. 5-7): the discounted return G_t = r_t + γ·G_{t+1} of every step, with r_t the episode's
  scaled outcome at its last step and 0 before (verl-agent's ALFWorld and WebShop rewards); steps of the group
  whose *anchor* (the observation the action was chosen on) is the same form a step group, and the part is
  G_t − mean of the step group (or normalised by its std + ε). A step alone in its step group gets 0.
- **Combined** (eq. 8): A = episode part + ω·step part (+ the row's penalties in ``post_norm`` mode).

Anchors are compared exactly (verl-agent's default) or, with ``similarity_threshold``, joined to the first
earlier step group whose first anchor is at least that similar (difflib's ratio, verl-agent's optional rule).
Computed in float64; a group whose values are all equal gets exactly 0, as `strata.core.advantage` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np

MODES = ("mean_norm", "mean_std_norm")
EPISODE_STATS = ("steps", "trajectories")


@dataclass(frozen=True)
class StepCredit:
    """Every term of one step's GiGPO advantage, so a dump can show it and a reader recompute it.

    Attributes:
        step_group: the step's anchor group, numbered within the task in order of first appearance.
        step_group_size: how many steps of the task share that group (1: no step part).
        step_reward: r_t (the scaled outcome at the episode's last step, else 0).
        discounted_return: G_t.
        episode_part: the normalised episode score of the step's row.
        step_part: the normalised G_t within its step group (before ω).
        penalty: the row's shaping, judge and inadmissible penalties (≤ 0), entering as ``penalty_mode`` says.
        advantage: what every token of the step's response gets.
    """

    step_group: int
    step_group_size: int
    step_reward: float
    discounted_return: float
    episode_part: float
    step_part: float
    penalty: float
    advantage: float


def discounted_returns(step_rewards: Sequence[float], gamma: float) -> list[float]:
    """G_t = r_t + γ·G_{t+1} for one episode, G after its last step being 0 (eq. 5)."""
    returns = [0.0] * len(step_rewards)
    running = 0.0
    for t in reversed(range(len(step_rewards))):
        running = float(step_rewards[t]) + gamma * running
        returns[t] = running
    return returns


def anchor_groups(anchors: Sequence[str], similarity_threshold: float | None = None) -> list[int]:
    """The step group of each anchor, numbered 0, 1, ... in order of first appearance (eq. 6).

    Exact comparison by default. With ``similarity_threshold`` in (0, 1), an anchor joins the first group whose
    first member it matches with a difflib ratio of at least the threshold, else opens a group.
    """
    labels: list[int] = []
    if similarity_threshold is None:
        seen: dict[str, int] = {}
        for anchor in anchors:
            labels.append(seen.setdefault(anchor, len(seen)))
        return labels
    if not 0.0 < similarity_threshold < 1.0:
        raise ValueError(f"similarity_threshold must lie in (0, 1) or be None (exact), got {similarity_threshold}")
    representatives: list[str] = []
    for anchor in anchors:
        match = next((k for k, first in enumerate(representatives)
                      if SequenceMatcher(None, anchor, first).ratio() >= similarity_threshold), None)
        if match is None:
            representatives.append(anchor)
            match = len(representatives) - 1
        labels.append(match)
    return labels


def gigpo_advantages(
    outcomes: Sequence[float],
    anchors: Sequence[Sequence[str]],
    penalties: Sequence[Sequence[float]],
    *,
    gamma: float,
    step_weight: float,
    mode: str = "mean_norm",
    episode_stats: str = "steps",
    reward_scale: float = 1.0,
    penalty_mode: str = "pre_norm",
    similarity_threshold: float | None = None,
    eps: float = 1e-6,
) -> list[list[StepCredit]]:
    """The GiGPO credit of every step of one task's G trajectories (see the module docstring).

    ``outcomes`` [G] R(τ_j); ``anchors`` [G][T_j] the observation each step's action was chosen on;
    ``penalties`` [G][T_j] the step's penalties (≤ 0). Returns [G][T_j] `StepCredit`.

    Raises:
        ValueError: on an unknown mode, episode statistic or penalty mode, or shapes that disagree.
    """
    for name, value, valid in (("mode", mode, MODES), ("episode_stats", episode_stats, EPISODE_STATS),
                               ("penalty_mode", penalty_mode, ("post_norm", "pre_norm"))):
        if value not in valid:
            raise ValueError(f"unknown {name} {value!r}; valid: {', '.join(valid)}")
    if not len(outcomes) == len(anchors) == len(penalties):
        raise ValueError(f"expected G={len(outcomes)} trajectories everywhere, got {len(anchors)} anchor and "
                         f"{len(penalties)} penalty lists")
    for j, (steps, row_penalties) in enumerate(zip(anchors, penalties, strict=True)):
        if len(steps) != len(row_penalties):
            raise ValueError(f"trajectory {j}: {len(steps)} anchors but {len(row_penalties)} penalties")
    norm_by_std = mode == "mean_std_norm"

    lengths = [len(steps) for steps in anchors]
    owner = np.repeat(np.arange(len(lengths)), lengths)
    flat_penalties = np.fromiter((p for row in penalties for p in row), dtype=np.float64, count=sum(lengths))
    scores = reward_scale * np.asarray(outcomes, dtype=np.float64)[owner]
    if penalty_mode == "pre_norm":
        scores = scores + flat_penalties
    first_rows = np.cumsum([0, *lengths[:-1]])[np.asarray(lengths) > 0]
    sample = scores if episode_stats == "steps" else scores[first_rows]
    episode = _relative(scores, *_stats(sample), norm_by_std, eps)

    step_rewards = [[0.0] * (n - 1) + [reward_scale * float(r)] for r, n in zip(outcomes, lengths, strict=True) if n]
    rewards = np.fromiter((r for row in step_rewards for r in row), dtype=np.float64, count=sum(lengths))
    returns = np.fromiter((g for row in step_rewards for g in discounted_returns(row, gamma)), dtype=np.float64,
                          count=sum(lengths))
    groups = np.asarray(anchor_groups([a for steps in anchors for a in steps], similarity_threshold), dtype=np.int64)
    sizes = np.bincount(groups) if groups.size else np.zeros(0, dtype=np.int64)
    step = np.zeros_like(returns)
    for label in np.flatnonzero(sizes > 1):
        members = groups == label
        step[members] = _relative(returns[members], *_stats(returns[members]), norm_by_std, eps)

    advantage = episode + step_weight * step + (flat_penalties if penalty_mode == "post_norm" else 0.0)
    credits = [StepCredit(int(groups[i]), int(sizes[groups[i]]), float(rewards[i]), float(returns[i]),
                          float(episode[i]), float(step[i]), float(flat_penalties[i]), float(advantage[i]))
               for i in range(len(owner))]
    bounds = np.cumsum([0, *lengths])
    return [credits[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _stats(values: np.ndarray) -> tuple[float, float, bool]:
    """Mean, unbiased std and whether all values are equal; a single value has mean 0 and std 1 (verl's rule)."""
    if values.size <= 1:
        return 0.0, 1.0, False
    if values.min() == values.max():
        return float(values[0]), 0.0, True
    return float(values.mean()), float(values.std(ddof=1)), False


def _relative(values: np.ndarray, mean: float, std: float, constant: bool, norm_by_std: bool,
              eps: float) -> np.ndarray:
    # A value equal to the mean of an all-equal sample gets exactly 0, never a rounding residue divided by ε.
    deviation = values - mean
    if constant:
        deviation = np.where(values == mean, 0.0, deviation)
    return deviation / (std + eps) if norm_by_std else deviation
