"""GiGPO's advantages recomputed from a training dump alone (`strata.workflow.dump`'s ``credit`` fields).

A GiGPO training record keeps, per step, the digest of its anchor, its step group, step reward and penalty, and
per task the settings the advantages were computed with; this recomputes every step's advantage from those with
`strata.core.gigpo`, so a reader can check the numbers a run trained on without the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from strata.core.gigpo import gigpo_advantages


def recomputed_advantages(record: Mapping[str, Any]) -> list[list[list[float]]]:
    """Per strategy of a GiGPO training ``record``, per trained trajectory, the advantage of every step.

    Anchors are compared by their digests (exact anchors) or, where the run joined similar ones, by the step groups
    it recorded. The outcome of a trajectory is read back from its last step's reward (the reward the run trained
    on, shuffled ones included), not from its ``reward`` field.

    Raises:
        ValueError: when the record carries no GiGPO credit (another algorithm, or validation).
    """
    settings = record.get("credit_settings")
    if settings is None:
        raise ValueError(f"record of step {record.get('step')} (mode {record.get('mode')!r}) has no GiGPO credit")
    scale = settings["reward_scale"]
    anchor_key = "anchor" if settings["similarity_threshold"] is None else "step_group"
    advantages = []
    for strategy in record["strategies"]:
        trained = [[step["credit"] for step in t["steps"]] for t in strategy["trajectories"] if t["trained"]]
        credits = gigpo_advantages(
            [steps[-1]["step_reward"] / scale if scale else 0.0 for steps in trained],
            [[str(c[anchor_key]) for c in steps] for steps in trained],
            [[c["penalty"] for c in steps] for steps in trained],
            gamma=settings["gamma"], step_weight=settings["step_weight"], mode=settings["mode"],
            episode_stats=settings["episode_stats"], reward_scale=scale, penalty_mode=settings["penalty_mode"],
        )
        advantages.append([[c.advantage for c in steps] for steps in credits])
    return advantages
