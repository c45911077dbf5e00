"""StraTA's variable row count is padded so that every rank gets whole mini- and micro-batches."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from omegaconf import OmegaConf

from strata.trainer.strata_trainer import StrataTrainer


def required_multiple(dp_size: int, dynamic: bool = False, mini_batches: int = 1, update_micro: int = 4,
                      log_prob_micro: int | None = 4, ref_micro: int | None = 4) -> int:
    config = OmegaConf.create({"actor_rollout_ref": {
        "actor": {"use_dynamic_bsz": dynamic, "ppo_micro_batch_size_per_gpu": update_micro},
        "rollout": {"log_prob_use_dynamic_bsz": dynamic, "log_prob_micro_batch_size_per_gpu": log_prob_micro},
        "ref": {"log_prob_use_dynamic_bsz": dynamic, "log_prob_micro_batch_size_per_gpu": ref_micro},
    }})
    trainer = SimpleNamespace(config=config, num_mini_batches=mini_batches)
    return StrataTrainer._get_required_batch_multiple(trainer, dp_size)


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"dp_size": 1}, 4),  # 12 rows on one rank: 3 micro-batches of 4
    ({"dp_size": 2}, 8),  # 12 rows on two ranks would leave 6 per rank: not whole micro-batches of 4
    ({"dp_size": 2, "mini_batches": 2, "update_micro": 2, "log_prob_micro": 8}, 16),
    ({"dp_size": 2, "ref_micro": None}, 8),  # no reference model
    ({"dp_size": 8, "dynamic": True, "mini_batches": 4}, 32),  # token-budgeted micro-batches: any size
])
def test_rows_split_into_whole_batches_on_every_rank(kwargs, expected):
    assert required_multiple(**kwargs) == expected
