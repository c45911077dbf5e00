"""Metric names and values for StraTA training steps and validation, computed from rollout records.

Training metrics come from the rows' ``extra_fields`` (the per-task ``strata_stats`` and each row's
advantages); validation metrics from the per-episode records the agent loop attaches
(``reward_extra_info``): nothing is counted on the side or hard-coded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from strata.envs.metrics import success_table
from strata.envs.records import REASON_LOST, REASON_STEP_LIMIT, REASON_WON
from strata.workflow.episode import REASON_TOKEN_BUDGET
from strata.workflow.rows import ENVIRONMENT_FAILURES, SUBTASK_PREFIX


def _rate(numerator: float, denominator: float) -> float:
    return float(numerator) / float(denominator) if denominator else 0.0


def sampled_token_nll(logprobs: Sequence[torch.Tensor], masks: Sequence[torch.Tensor]) -> float:
    """Mean −log π(token) over the trained tokens of a step's rows, from the rollout's own log-probs.

    This is an unbiased estimate of the sampling policy's per-token entropy (at the rollout temperature, the
    spec's 1.0) on the states it visits. It is logged whether or not verl's old-log-prob pass runs (that pass logs
    ``actor/entropy``; the CPU benchmark recipe skips it, ``algorithm.rollout_correction.bypass_mode``), so a
    policy that sharpens without learning (the benchmark's control) shows it.
    """
    total = sum(float((-p * m).sum()) for p, m in zip(logprobs, masks, strict=True))
    tokens = sum(float(m.sum()) for m in masks)
    return _rate(total, tokens)


def strata_training_metrics(extras: Sequence[Mapping[str, Any]], advantages: Sequence[torch.Tensor]) -> dict:
    """``strata/*`` metrics of one training step from its rows (padding rows excluded)."""
    strategy = [float(a[0]) for e, a in zip(extras, advantages, strict=True)
                if e["strata_role"] == "strategy" and len(a)]
    # Action-level rows: whole trajectories (multi-turn rows) or single steps (trajectory_rows=per_step).
    trajectory = [a[a != 0].mean().item() if (a != 0).any() else 0.0
                  for e, a in zip(extras, advantages, strict=True) if e["strata_role"] in ("trajectory", "step")]
    totals: dict[str, float] = {}
    for extra in extras:
        for key, value in (extra.get("strata_stats") or {}).items():
            totals[key] = totals.get(key, 0.0) + float(value)
    metrics = {
        "strata/num_strategy_rows": float(len(strategy)),
        "strata/num_trajectory_rows": float(sum(e["strata_role"] == "trajectory" for e in extras)),
        "strata/num_step_rows": float(sum(e["strata_role"] == "step" for e in extras)),
    }
    for name, values in (("strategy_advantage", strategy), ("trajectory_advantage", trajectory)):
        if values:
            metrics[f"strata/{name}/mean"] = float(np.mean(values))
            metrics[f"strata/{name}/std"] = float(np.std(values))
            metrics[f"strata/{name}/max"] = float(np.max(values))
            metrics[f"strata/{name}/min"] = float(np.min(values))
    if totals:
        metrics.update({
            "strata/success_rate": _rate(totals["num_won"], totals["num_trajectories"]),
            "strata/candidate_format_rate": _rate(totals["candidate_format_ok"], totals["num_candidates"]),
            "strata/kept_strategy_format_rate": _rate(totals["kept_format_ok"], len(strategy)),
            "strata/action_format_rate": _rate(totals["action_format_ok"], totals["num_steps"]),
            "strata/admissible_action_rate": _rate(totals["action_admissible"], totals["num_steps"]),
            # Steps repeating the command the environment just refused (`Trajectory.refused_repeats`): loops.
            "strata/refused_repeat_rate": _rate(totals["action_refused_repeats"], totals["num_steps"]),
            "strata/num_dropped_strategies": totals["num_dropped_strategies"],
            "strata/action_truncation_rate": _rate(totals["action_truncated"], totals["num_steps"]),
            "strata/mean_episode_length": _rate(totals["num_steps"], totals["num_trajectories"]),
            "strata/judge_format_rate": _rate(totals["judge_parse_ok"], totals["num_judged"]),
            "strata/judge_flag_rate": _rate(totals["judge_flagged_steps"], totals["num_steps"]),
            "env/failed_episodes": totals["num_env_failures"],
            "env/token_budget_ends": totals["num_token_budget_ends"],
            "timing_s/strata_selection": totals["selection_seconds"],
        })
        # Shares of the step's advantage groups with no reward variance (`ZeroVariance.counts`).
        for level in ("strategy", "trajectory"):
            if totals.get(f"num_{level}_groups"):
                metrics[f"strata/zero_var_{level}_groups"] = _rate(totals[f"zero_var_{level}_groups"],
                                                                  totals[f"num_{level}_groups"])
        if totals.get("gigpo_steps"):  # GiGPO's step groups (`strata.workflow.rows.credit_counts`)
            steps = totals["gigpo_steps"]
            metrics["strata/gigpo/step_group_size"] = totals["gigpo_step_group_size_sum"] / steps
            metrics["strata/gigpo/grouped_step_rate"] = totals["gigpo_grouped_steps"] / steps
            metrics["strata/gigpo/nonzero_step_part_rate"] = totals["gigpo_nonzero_step_parts"] / steps
        if "num_scored" in totals:  # environments with a progress score (ScienceWorld)
            metrics["strata/mean_score"] = _rate(totals["score_sum"], totals["num_scored"])
        metrics.update(_per_subtask(totals))
    return metrics


def _per_subtask(totals: Mapping[str, float]) -> dict[str, float]:
    """``train/<subtask>/metrics/success_rate``, ``.../episode_length`` and (with a progress score)
    ``.../score``, named as validation's are."""
    metrics = {}
    subtasks = {key[len(SUBTASK_PREFIX):].rpartition("/")[0] for key in totals if key.startswith(SUBTASK_PREFIX)}
    for subtask in sorted(subtasks):
        count = totals[f"{SUBTASK_PREFIX}{subtask}/num_trajectories"]
        metrics[f"train/{subtask}/metrics/success_rate"] = _rate(totals[f"{SUBTASK_PREFIX}{subtask}/num_won"], count)
        metrics[f"train/{subtask}/metrics/episode_length"] = _rate(totals[f"{SUBTASK_PREFIX}{subtask}/num_steps"],
                                                                   count)
        if f"{SUBTASK_PREFIX}{subtask}/num_scored" in totals:
            metrics[f"train/{subtask}/metrics/score"] = _rate(totals[f"{SUBTASK_PREFIX}{subtask}/score_sum"],
                                                              totals[f"{SUBTASK_PREFIX}{subtask}/num_scored"])
    return metrics


@dataclass(frozen=True)
class _Episode:
    subtask: str
    won: bool
    num_steps: int


def validation_metrics(records: Mapping[str, Sequence[Any]]) -> dict[str, float]:
    """The spec's validation metrics (§3) from per-episode columns ``won``, ``subtask``, ``episode_length``,
    ``num_responses``, ``num_well_formed``, ``num_admissible``, ``num_refused_repeats`` and ``end_reason`` (one
    entry per task).

    Episodes the row's token budget cut short, and those an environment failure ended, are counted as in
    training (``val/env/token_budget_ends``, ``val/env/failed_episodes``): a budget that ends episodes
    before H steps lowers the success rate and the episode length without it showing anywhere else.
    """
    episodes = [
        _Episode(subtask, bool(won), int(length))
        for subtask, won, length in zip(records["subtask"], records["won"], records["episode_length"], strict=True)
    ]
    table = success_table(episodes)
    metrics = table.to_metrics("val")
    success = table.overall.success_rate or 0.0
    reasons = records["end_reason"]
    metrics.update({f"val/{row.subtask}/metrics/num_tasks": float(row.episodes)
                    for row in table.by_subtask if row.episodes})
    metrics.update({
        # One strategy and one trajectory per task: pass@1 is the success rate, computed, not assumed.
        "val/average/metrics/pass@1": success,
        "val/average/metrics/num_tasks": float(len(episodes)),
        "val/average/metrics/format_rate": _rate(sum(records["num_well_formed"]), sum(records["num_responses"])),
        "val/average/metrics/admissible_action_rate": _rate(sum(records["num_admissible"]),
                                                             sum(records["episode_length"])),
        "val/average/metrics/refused_repeat_rate": _rate(sum(records["num_refused_repeats"]),
                                                          sum(records["episode_length"])),
        "val/env/token_budget_ends": float(sum(reason == REASON_TOKEN_BUDGET for reason in reasons)),
        "val/env/failed_episodes": float(sum(reason.startswith(ENVIRONMENT_FAILURES) for reason in reasons)),
    })
    # Why validation episodes ended: won, step_limit, lost, token_budget, or an environment failure.
    for reason in END_REASONS:
        metrics[f"val/end_reason/{reason}"] = float(sum(_end_reason(r) == reason for r in reasons))
    metrics.update(_validation_scores(records))
    metrics.update(_split_metrics(records))
    return metrics


def _split_metrics(records: Mapping[str, Sequence[Any]]) -> dict[str, float]:
    """``val/split/<split>/{success_rate,admissible_action_rate,refused_repeat_rate,num_tasks}`` when one
    validation set spans several splits (the learning benchmark's held-out games and its fixed training games):
    ``val/average`` mixes them, and a curve must never. Nothing for a one-split set (column ``split``)."""
    splits = records.get("split") or []
    if len(set(splits)) < 2:
        return {}
    metrics = {}
    for split in sorted(set(splits)):
        mine = [i for i, s in enumerate(splits) if s == split]
        metrics[f"val/split/{split}/success_rate"] = _rate(sum(bool(records["won"][i]) for i in mine), len(mine))
        for column, name in (("num_admissible", "admissible_action_rate"), ("num_refused_repeats",
                                                                            "refused_repeat_rate")):
            metrics[f"val/split/{split}/{name}"] = _rate(sum(records[column][i] for i in mine),
                                                         sum(records["episode_length"][i] for i in mine))
        metrics[f"val/split/{split}/num_tasks"] = float(len(mine))
    return metrics


def _validation_scores(records: Mapping[str, Sequence[Any]]) -> dict[str, float]:
    """``val/<subtask>/metrics/score`` and ``val/average/metrics/score``: the mean progress score in [0, 1] of
    the episodes that have one (column ``score``; None where the environment reports none, e.g. ALFWorld)."""
    by_subtask: dict[str, list[float]] = {}
    for subtask, score in zip(records["subtask"], records.get("score") or [None] * len(records["subtask"]),
                              strict=True):
        if score is not None:
            by_subtask.setdefault(subtask, []).append(float(score))
    if not by_subtask:
        return {}
    metrics = {f"val/{subtask}/metrics/score": float(np.mean(scores)) for subtask, scores in by_subtask.items()}
    metrics["val/average/metrics/score"] = float(np.mean([s for scores in by_subtask.values() for s in scores]))
    return metrics


END_REASONS = (REASON_WON, REASON_STEP_LIMIT, REASON_LOST, REASON_TOKEN_BUDGET, "environment_failure")


def _end_reason(reason: str) -> str:
    return "environment_failure" if reason.startswith(ENVIRONMENT_FAILURES) else reason
