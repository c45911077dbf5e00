"""Per-response shaping terms of StraTA (spec §2): length penalty, format penalty, judge penalty.

Each function scores one generated response (a strategy or an action) or one trajectory's steps. They
are scalar on purpose: the rollout produces responses one at a time, and the advantage code
(:mod:`strata.core.advantage`) only needs the resulting numbers.
"""

from __future__ import annotations

from collections.abc import Iterable


def length_penalty(num_tokens: int, max_tokens: int, threshold: float, truncated: bool = False) -> float:
    """Length penalty ℓ ∈ [0, 1] of one response (spec §2, three cases).

    With L = ``num_tokens``, L_max = ``max_tokens`` (the per-response token budget) and λ = ``threshold``:

    - ℓ = 1 when the response was cut at L_max without finishing (``truncated``);
    - ℓ = 0 when L ≤ λ·L_max;
    - ℓ = (L − λ·L_max) / ((1 − λ)·L_max) when λ·L_max < L ≤ L_max.

    Why: responses may use a λ share of the budget for free; beyond it the penalty grows linearly and
    reaches 1 at the budget, so a model is not pushed towards ever longer answers. A finished response
    can only exceed L_max if the caller miscounted; it is clamped to 1 so ℓ stays in [0, 1].

    Raises:
        ValueError: on an impossible budget (``max_tokens < 1``, ``num_tokens < 0``, λ outside [0, 1]).
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1 (the per-response token budget), got {max_tokens}")
    if num_tokens < 0:
        raise ValueError(f"num_tokens must be >= 0, got {num_tokens}")
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold λ must lie in [0, 1] (strata.length_penalty.threshold), got {threshold}")
    if truncated:
        return 1.0
    free_tokens = threshold * max_tokens
    if num_tokens <= free_tokens:
        return 0.0
    # Here L > λ·L_max; with λ = 1 that means L > L_max, which the clamp maps to 1.
    penalised_span = (1.0 - threshold) * max_tokens
    if penalised_span == 0.0:
        return 1.0
    return min(1.0, (num_tokens - free_tokens) / penalised_span)


def response_shaping(
    num_tokens: int,
    max_tokens: int,
    threshold: float,
    well_formed: bool,
    truncated: bool = False,
    format_penalty: float = 1.0,
) -> float:
    """Per-response shaping s(r) = clip(−f(r) − ℓ(r), −1, 0) (spec §2).

    f(r) = ``format_penalty`` when the required tag (``<strategy>`` or ``<action>``) is missing, else 0;
    ℓ(r) is :func:`length_penalty`. The clip keeps one bad response from costing more than one unit of
    advantage, the scale of a normalised group advantage.
    """
    format_term = 0.0 if well_formed else format_penalty
    length_term = length_penalty(num_tokens, max_tokens, threshold, truncated)
    return min(0.0, max(-1.0, -format_term - length_term))


def judge_penalties(flagged_steps: Iterable[int] | None, num_steps: int, kappa: float) -> list[float]:
    """Judge penalties j_t = −κ·1[t ∈ I(τ)] for the action responses t = 1..T of one trajectory.

    ``flagged_steps`` is I(τ) as 1-based step numbers (what :func:`strata.core.parsing.parse_judgment`
    returns); None (an unparsable judgment) flags nothing (spec §1.5). Out-of-range numbers are ignored.
    Returns a list of length ``num_steps`` (T), index t−1 holding j_t.
    """
    flagged = set(flagged_steps or ())
    return [-kappa if step in flagged else 0.0 for step in range(1, num_steps + 1)]


def inadmissible_penalties(admissible: Iterable[bool | None], penalty: float) -> list[float]:
    """Penalties ι_t = −p·1[action t was sent to the environment and was not admissible], one per step.

    ``admissible`` holds, per step, whether the environment admitted the action (None: the response was
    malformed and nothing was sent; the format penalty already covers it). Not in the paper: an extension
    (``strata.inadmissible_penalty``, default 0, which gives 0.0 for every step), kept for experiments because
    a uniform penalty teaches the agent to avoid the actions that fail rather than when they fail
    (docs/algorithm.md, "Beyond the paper").
    """
    return [-penalty if allowed is False else 0.0 for allowed in admissible]


# How an episode's outcome becomes R(τ) (``env.reward``): ``success`` is the spec's 1 if won else 0;
# ``score`` is the environment's own progress score normalised to [0, 1] (ScienceWorld: score / 100);
# ``final_score`` is that score as the environment left it, -1 for a game it ended as lost (AgentGym's).
REWARD_MODES = ("success", "score", "final_score")


def outcome_reward(won: bool, score: float | None, mode: str = "success") -> float:
    """R(τ) of one episode.

    ``success``: 1.0 if won else 0.0 (spec §1.4). ``score``: the last normalised progress score clipped to
    [0, 1], and 1.0 when won: a game the environment ended as lost reports a negative score, which counts as
    no progress, and an environment without a score (``None``: ALFWorld, or no step taken) has only its
    outcome. ``final_score``: the same without the floor, so a lost game (ScienceWorld: -100, normalised -1)
    ranks below one that made no progress; AgentGym's ScienceWorld client returns the simulator's cumulative
    score as the reward, and an episode's reward is its last step's. Why a switch: a partial score separates
    trajectories that all failed, which a 0/1 outcome cannot, but rewards progress that may not lead to the goal.
    """
    if mode not in REWARD_MODES:
        raise ValueError(f"unknown reward mode {mode!r} (env.reward); valid: {', '.join(REWARD_MODES)}")
    if won:
        return 1.0
    if mode == "success" or score is None:
        return 0.0
    return min(1.0, score if mode == "final_score" else max(0.0, score))
