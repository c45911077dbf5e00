"""`GroupShape`: how many candidates, strategies and episodes a task's group makes, field by field.

The rollout tests play groups and count what came out; mutation testing (scripts/mutation.sh) showed
that a validation shape with two strategies, or with selection or the judge switched on, slipped past
them (validation keeps one strategy, so a second one or a judge changes nothing they look at).
"""

from __future__ import annotations

from strata.core.config import StrataConfig
from strata.workflow.group import GroupShape

GRPO = {"algorithm": "grpo", "num_stras_per_run": 1, "num_cands_per_stra": 1, "num_trajs_per_stra": 6,
        "judge": {"enable": False}, "prompts": {"preset": "alfworld_grpo"}}


def test_training_shapes() -> None:
    config = StrataConfig.from_dict({"num_stras_per_run": 3, "num_cands_per_stra": 2, "num_trajs_per_stra": 5})
    assert GroupShape.training(config) == GroupShape(6, 3, 5, plan=True, diverse=True, judge=True)
    ablation = StrataConfig.from_dict({"num_stras_per_run": 2, "diversity": {"enable": False},
                                       "judge": {"enable": False}})
    assert GroupShape.training(ablation) == GroupShape(16, 2, 8, plan=True, diverse=False, judge=False)
    assert GroupShape.training(StrataConfig.from_dict(GRPO)) == GroupShape(0, 1, 6, plan=False, diverse=True,
                                                                          judge=False)


def test_evaluation_is_one_strategy_one_episode_no_selection_no_judge() -> None:
    config = StrataConfig.from_dict({"num_stras_per_run": 3, "num_cands_per_stra": 2, "num_trajs_per_stra": 5})
    shape = GroupShape.evaluation(config)
    assert shape == GroupShape(1, 1, 1, plan=True, diverse=False, judge=False)
    assert shape.diverse is False and shape.judge is False  # not merely falsy
    assert GroupShape.evaluation(StrataConfig.from_dict(GRPO)) == GroupShape(0, 1, 1, plan=False, diverse=False,
                                                                            judge=False)


def test_only_a_real_choice_needs_the_encoder() -> None:
    assert GroupShape(8, 4, 2, plan=True, diverse=True, judge=True).embeds
    assert not GroupShape(4, 4, 2, plan=True, diverse=True, judge=True).embeds  # keeps all: nothing to choose
    assert not GroupShape(8, 4, 2, plan=True, diverse=False, judge=True).embeds  # random draw
    assert not GroupShape(8, 4, 2, plan=False, diverse=True, judge=True).embeds  # no strategies at all
