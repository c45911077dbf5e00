"""StraTA's trainer: verl's synchronous v1 trainer with three hooks changed.

1. Advantages: the group workflow already computed StraTA's per-token advantages (they need the
   strategy/trajectory hierarchy only the rollout sees); ``_compute_advantage`` moves them into verl's
   ``advantages`` field instead of running an estimator on rewards. Each row's own outcome reward is
   written as its score, for verl's reward metrics.
2. Mini-batches: StraTA's rows per task vary (N strategy rows + the trajectories that ran), so
   ``actor.ppo_mini_batch_size`` counts *tasks*, as verl counts prompts, and each optimizer step takes
   an equal share of the step's rows. The global mini-batch does not depend on the GPU count (spec §5).
   With ``strata.zero_variance_filter`` it also masks the rows of groups without reward variance out of the
   update (`filtered_rows`).
3. Validation metrics: the spec's per-subtask success table instead of verl's reward means.
   With wandb among ``trainer.logger``, each dumped step's episodes (training and validation) also go to wandb
   as a table (`strata.report.wandb_table`), from verl's ``on_step_end`` and ``on_validate_end`` hooks.
4. Validation sets: with ``data.interim_val_files`` the validations between the first and the last play that
   set instead of ``data.val_files`` (same protocol, same per-game seeds), so a long run can keep a dense curve
   on a few games and still end on a large evaluation.
5. Checkpoints: once verl's save of a step has returned, every file of the step is recorded (size and
   SHA-256) in ``global_step_N/strata_manifest.json``, written last and atomically, and then the ``latest``
   pointer is rewritten atomically (see `strata.checkpoint`). Resume, export and reshard check the files
   against the manifest. With ``checkpoint.async_save`` verl returns before the files are written, so
   neither is written then (verl itself leaves the pointer alone in that mode).

Two switches exist for control runs only, both absent from every shipped config: the learning check's
``+strata_test.flip_advantage_sign=true`` (design/TESTING.md) negates every advantage here, showing that success
rises *because of* the advantages' sign; the ALFWorld benchmark's ``+strata_test.permute_rewards=true`` shuffles
each task's rewards before its advantages (`strata.workflow.rows.trained_rewards`), a run that moves the policy
as much without the signal.

Registered as ``trainer.v1.trainer_mode=strata``; everything else (FSDP actor, reference, KL loss,
clipped surrogate, checkpoints, weight sync) is verl's own code path.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
from collections.abc import Iterator
from pathlib import Path

import torch
import transfer_queue as tq
from omegaconf import DictConfig, open_dict
from tensordict import TensorDict
from torchdata.stateful_dataloader import StatefulDataLoader
from transfer_queue import KVBatchMeta
from verl.trainer.ppo.utils import create_rl_dataset
from verl.trainer.ppo.v1.trainer_base import register_trainer
from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync
from verl.utils.dataset.rl_dataset import collate_fn

from strata.checkpoint.layout import step_dir_name
from strata.checkpoint.manifest import write_manifest
from strata.checkpoint.pointer import write_latest_pointer
from strata.checkpoint.pruning import prune_earlier_jobs
from strata.report.wandb_table import log_episode_table
from strata.trainer.metrics import sampled_token_nll, strata_training_metrics, validation_metrics
from strata.workflow.dump import DumpSettings

logger = logging.getLogger(__name__)

TRAINER_NAME = "strata"


@contextlib.contextmanager
def _overridden(node: DictConfig, key: str, value: object) -> Iterator[None]:
    old = node[key]
    with open_dict(node):
        node[key] = value
    try:
        yield
    finally:
        with open_dict(node):
            node[key] = old


def filtered_rows(zero_variance: list[bool], real: list[bool]) -> list[bool]:
    """The rows ``strata.zero_variance_filter`` masks out of the update: the real (not padding) rows of groups
    without reward variance, unless that is every real row. verl's token-mean loss divides by the trained
    tokens, so an update with none would be 0/0; such a step trains on its penalties as without the filter."""
    out = [z and r for z, r in zip(zero_variance, real, strict=True)]
    return [False] * len(out) if sum(out) == sum(real) else out


@register_trainer(TRAINER_NAME)
class StrataTrainer(PPOTrainerSync):
    """verl's synchronous PPO trainer, running StraTA's rollout rows (see the module docstring)."""

    @property
    def trainer_mode(self) -> str:
        # verl switches sync/async behaviour (replay buffer, refill, checkpoint of in-flight prompts) on
        # this name; StraTA is synchronous, so the base class must see "sync" whatever it was registered as.
        return "sync"

    @trainer_mode.setter
    def trainer_mode(self, registered_name: str) -> None:
        """The base class assigns the registered name here; ``trainer_mode`` always reads "sync"."""

    @property
    def num_mini_batches(self) -> int:
        actor = self.config.actor_rollout_ref.actor
        return max(1, self.config.data.train_batch_size // actor.ppo_mini_batch_size)

    def _get_required_batch_multiple(self, dp_size: int) -> int:
        """Rows per step are padded (with verl's no-op rows) to a multiple of this.

        Every mini-batch must split evenly over the data-parallel ranks, and with fixed-size micro-batches
        (``use_dynamic_bsz=false``) each rank's share must split into whole micro-batches, for the update
        and for the old and reference log-probs. verl's own multiple assumes a fixed row count per step;
        StraTA's varies (a failed game drops its trajectory rows), so it must cover the micro-batches too.
        """
        role = self.config.actor_rollout_ref

        def micro(use_dynamic_bsz: bool, size: int | None) -> int:
            return 1 if use_dynamic_bsz or not size else int(size)

        per_rank = [
            self.num_mini_batches * micro(role.actor.use_dynamic_bsz, role.actor.ppo_micro_batch_size_per_gpu),
            micro(role.rollout.log_prob_use_dynamic_bsz, role.rollout.log_prob_micro_batch_size_per_gpu),
            micro(role.ref.log_prob_use_dynamic_bsz, role.ref.log_prob_micro_batch_size_per_gpu),
        ]
        return dp_size * math.lcm(*per_rank)

    def _init_dataloader(self) -> None:
        super()._init_dataloader()
        self.interim_val_dataloader = None
        files = self.config.data.get("interim_val_files")
        if files:
            data = self.config.data
            dataset = create_rl_dataset(files, data, self.tokenizer, self.processor, is_train=False)
            self.interim_val_dataloader = StatefulDataLoader(
                dataset=dataset, batch_size=data.val_batch_size or len(dataset), shuffle=False,
                num_workers=data["dataloader_num_workers"], drop_last=False, collate_fn=collate_fn)

    def _validate(self) -> dict[str, float]:
        """verl's validation, on ``data.interim_val_files`` when set and this is neither step 0 nor the last."""
        interim = self.interim_val_dataloader is not None and 0 < self.global_steps < self.total_training_steps
        if not interim:
            return super()._validate()
        full, self.val_dataloader = self.val_dataloader, self.interim_val_dataloader
        try:
            return super()._validate()
        finally:
            self.val_dataloader = full

    def _update_actor(self, batch: KVBatchMeta, metrics: dict) -> KVBatchMeta:
        rows_per_mini_batch = math.ceil(len(batch) / self.num_mini_batches)
        # verl sizes the global mini-batch as ppo_mini_batch_size * rollout.n rows; rollout.n is 1 here.
        with _overridden(self.config.actor_rollout_ref.actor, "ppo_mini_batch_size", rows_per_mini_batch):
            return super()._update_actor(batch, metrics)

    def _save_checkpoint(self) -> None:
        super()._save_checkpoint()
        checkpoint = self.config.actor_rollout_ref.actor.get("checkpoint", {})
        if checkpoint.get("async_save", False):
            return  # the shards are still being written; verl's own pointer logic applies
        # Record what the save wrote, then rewrite verl's plain open("w") pointer atomically: the manifest is
        # the step's last file and the pointer the commit record. A crash between verl's pointer and the
        # manifest leaves a step without one, which is judged as an older run's step (all its files are written).
        root = self.config.trainer.default_local_dir
        write_manifest(Path(root) / step_dir_name(self.global_steps), step=self.global_steps)
        write_latest_pointer(root, self.global_steps)
        trainer = self.config.trainer
        resumed_from = trainer.get("resume_from_path") if trainer.get("resume_mode") == "resume_path" else None
        for path in prune_earlier_jobs(root, resumed_from, self.global_steps, trainer.get("max_actor_ckpt_to_keep")):
            print(f"strata: removed {path}, an earlier job's checkpoint beyond trainer.max_actor_ckpt_to_keep="
                  f"{trainer.max_actor_ckpt_to_keep}", flush=True)

    def _compute_advantage(self, batch: KVBatchMeta, metrics: dict) -> KVBatchMeta:
        sampled = bool(self.config.actor_rollout_ref.rollout.get("calculate_log_probs", False))
        data = tq.kv_batch_get(
            keys=batch.keys, partition_id=batch.partition_id,
            select_fields=["response_mask", "extra_fields", *(["rollout_log_probs"] if sampled else [])],
        )
        response_mask = data["response_mask"]
        lengths = response_mask.offsets().diff().tolist()
        extras = data.pop("extra_fields").tolist()  # as verl reads it: a NonTensorStack of dicts
        padding = [tag.get("is_padding", False) for tag in batch.tags]
        sign = -1.0 if self.config.get("strata_test", {}).get("flip_advantage_sign", False) else 1.0

        advantages, scores = [], []
        for length, extra, is_padding in zip(lengths, extras, padding, strict=True):
            if is_padding:
                row_advantages = torch.zeros(length)
                reward = 0.0
            else:
                row_advantages = sign * torch.tensor(extra["strata_advantages"], dtype=torch.float32)
                reward = float(extra["strata_reward"])
                if row_advantages.shape[0] != length:
                    raise RuntimeError(f"row has {length} response tokens but {row_advantages.shape[0]} advantages")
                if not torch.isfinite(row_advantages).all():
                    raise FloatingPointError("StraTA produced a non-finite advantage; refusing to train on it")
            score = torch.zeros(length)
            score[-1] = reward
            advantages.append(row_advantages)
            scores.append(score)

        fields = {"advantages": advantages, "rm_scores": scores}
        real = [not p for p in padding]
        filtered = [False] * len(extras)
        if self.config.strata.get("zero_variance_filter", False):
            filtered = filtered_rows([bool(e.get("strata_zero_variance")) for e in extras], real)
            masks = [torch.zeros_like(mask) if out else mask
                     for mask, out in zip(response_mask.unbind(), filtered, strict=True)]
            fields |= {"response_mask": masks, "loss_mask": masks}  # verl's token counts read loss_mask
            metrics["strata/zero_var_filter/kept_rows"] = 1.0 - sum(filtered) / sum(real)
        nested = {name: torch.nested.as_nested_tensor(values, layout=torch.jagged) for name, values in fields.items()}
        nested["returns"] = nested["advantages"]
        batch = tq.kv_batch_put(
            keys=batch.keys, partition_id=batch.partition_id, fields=TensorDict(nested, batch_size=len(batch))
        )
        metrics.update(strata_training_metrics(
            [e for e, r in zip(extras, real, strict=True) if r],
            [a for a, r in zip(advantages, real, strict=True) if r],
        ))
        metrics["strata/num_trained_rows"] = float(sum(r and not f for r, f in zip(real, filtered, strict=True)))
        if sampled:
            masks, logprobs = response_mask.unbind(), data["rollout_log_probs"].unbind()
            metrics["strata/sampled_token_nll"] = sampled_token_nll(
                [p for p, r in zip(logprobs, real, strict=True) if r],
                [m for m, r in zip(masks, real, strict=True) if r])
        return batch

    def on_step_end(self) -> None:
        """After the step's update and checkpoint (verl syncs the rollout's weights here): its training episodes,
        dumped by the agent loop while it sampled them, go to wandb before verl logs the step's metrics."""
        super().on_step_end()
        self._log_episodes("train")

    def on_validate_end(self) -> None:
        super().on_validate_end()
        self._log_episodes("valid")

    @functools.cached_property
    def _episode_tables(self) -> DumpSettings | None:
        """Where the dumps are and how many rows a table takes, when wandb logs the run and the run dumps."""
        loggers = self.config.trainer.logger
        if "wandb" not in ([loggers] if isinstance(loggers, str) else list(loggers)):
            return None
        settings = DumpSettings.from_config(self.config.get("run"))
        return settings if settings.run_dir is not None else None

    def _log_episodes(self, kind: str) -> None:
        """This step's dumped ``kind`` episodes as a wandb table."""
        if (settings := self._episode_tables) is not None:
            log_episode_table(settings.run_dir, kind, self.global_steps, settings.wandb_rows)

    def _val_metrics_update(
        self, data_sources, sample_uids, reward_extra_infos_dict, sample_turns, expected_acc_counts=None
    ) -> dict[str, float]:
        return validation_metrics(reward_extra_infos_dict)

