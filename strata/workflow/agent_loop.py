"""StraTA as a verl agent loop: one call per task returns all of the task's training rows.

verl's v1 agent-loop workers run one agent loop per dataset row and store every output it returns
in the TransferQueue (keys ``{uid}_{session}_{index}``), so a loop may return a list. StraTA's group
(σ·N candidates, selection, N·M episodes, judge) therefore lives inside one ``run`` call, and the
advantages, which need the whole group, are computed there with `strata.core`.

Selected with ``actor_rollout_ref.rollout.agent.default_agent_loop=strata_agent`` (or the
``agent_name`` column of the task list) and ``agent_loop_manager_class`` pointing at
`StrataAgentLoopManager`, which tells the loop whether a batch is validation. verl's agent-loop workers
find the loop through ``agent_loop_config_path`` (``strata/workflow/agent_loops.yaml``).

Each call also appends its task's group to the run folder's trajectory dumps (`strata.workflow.dump`,
``run.dump``), from the same records the rows are built from.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from omegaconf import DictConfig, OmegaConf
from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput, register
from verl.trainer.ppo.v1.agent_loop_tq import AgentLoopManagerTQ
from verl.utils import tensordict_utils as tu

from strata.core.config import StrataConfig
from strata.core.embedding import TextEmbedder, build_embedder
from strata.core.prompting import PromptTemplates
from strata.core.seeding import derive_seed, task_sampling_seed
from strata.envs.tasks import Task
from strata.workflow.chat import ChatTokens
from strata.workflow.dump import DumpSettings, DumpWriter, task_record
from strata.workflow.environments import make_environment
from strata.workflow.episode import EpisodeLimits
from strata.workflow.group import GroupShape, rollout_task
from strata.workflow.policy import Policy
from strata.workflow.records import TaskRollout
from strata.workflow.rows import (
    Row,
    ZeroVariance,
    credit_counts,
    credit_settings,
    group_advantages,
    rollout_stats,
    rows_of_trajectory,
    strategy_row,
    training_rows,
)

logger = logging.getLogger(__name__)

AGENT_NAME = "strata_agent"
VALIDATE_KEY = "strata_validate"


class StrataAgentLoopManager(AgentLoopManagerTQ):
    """verl's TransferQueue agent-loop manager, plus a per-row flag saying whether the batch is validation.

    The trainer marks validation batches (``validate``), but verl's worker consumes that mark before
    calling the agent loop; StraTA's validation follows a different protocol (spec §3), so the flag is
    copied into a field the loop receives.
    """

    def generate_sequences(self, prompts) -> None:
        validate = bool(tu.get(prompts, "validate", False))
        tu.assign_non_tensor_data(prompts, VALIDATE_KEY, validate)
        super().generate_sequences(prompts)


@functools.cache
def _strata_config(strata_yaml: str) -> StrataConfig:
    return StrataConfig.from_dict(OmegaConf.create(strata_yaml))


@functools.cache
def _embedder(name: str, model: str | None) -> TextEmbedder:
    return build_embedder(name, model)


@functools.cache
def _dump_writer(settings: DumpSettings) -> DumpWriter:
    """One writer (one file per step) per agent-loop worker process."""
    return DumpWriter(settings)


@register(AGENT_NAME)
class StrataAgentLoop(AgentLoopBase):
    """Runs one task's StraTA group (training) or its single evaluation episode (validation)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        config: DictConfig = self.config
        self.strata = _strata_config(OmegaConf.to_yaml(config.strata, resolve=True))
        self.templates: PromptTemplates = self.strata.prompts.templates()
        env = config.env
        self.pool = make_environment(
            str(env.get("name", "alfworld")), int(env.num_workers), float(env.step_timeout_s), int(env.max_steps),
            normalize_actions=bool(env.get("normalize_actions", True)),
        )
        self.per_step = self.strata.trajectory_rows == "per_step"
        self.limits = EpisodeLimits(
            max_steps=int(env.max_steps),
            response_budget=int(self.rollout_config.response_length),
            prompt_tokens=int(self.rollout_config.prompt_length),
            per_step=self.per_step,
            history_window=self.strata.prompts.history_window,
            reward_mode=str(env.get("reward", "success")),
        )
        self.chat = ChatTokens(self.tokenizer)
        self.norm_by_std = bool(config.algorithm.get("norm_adv_by_std_in_grpo", True))
        self.dumps = _dump_writer(DumpSettings.from_config(config.get("run")))
        # The learning benchmark's control run only (never in a shipped config): rewards shuffled across each
        # task's episodes before the advantages (`strata.workflow.rows.trained_rewards`).
        self.permute_rewards = bool((config.get("strata_test") or {}).get("permute_rewards", False))

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> list[AgentLoopOutput]:
        task = Task(**{k: kwargs["extra_info"][k] for k in ("game_file", "task_type", "split", "index")})
        validate = bool(kwargs.get(VALIDATE_KEY, False))
        policy = Policy(self.server_manager, self.chat, sampling_params, self.strata.max_tokens_per_response,
                        seed=self._seed(task, validate, kwargs.get("global_steps")),
                        seeded=self.strata.seeded_sampling)
        shape = GroupShape.evaluation(self.strata) if validate else GroupShape.training(self.strata)
        embedder = _embedder(self.strata.diversity.embedder, self.strata.diversity.model) if shape.embeds else None
        rollout = await rollout_task(task, shape, policy, self.pool, self.templates, self.limits, embedder)
        step, kind = int(kwargs.get("global_steps", 0)), "valid" if validate else "train"
        permutation = derive_seed(policy.seed, "reward_permutation") if self.permute_rewards else None
        advantages = None if validate else group_advantages(rollout, self.strata, self.norm_by_std, permutation)
        self.dumps.maybe_write(kind, step, task,
                               lambda: task_record(kind, step, self.strata.algorithm, task, rollout, advantages,
                                                   credit_settings(self.strata)))
        if validate:
            return self._evaluation_outputs(task, rollout)
        constant = ZeroVariance.of(rollout, self.strata.delta_coef, permutation, advantages.step_credit)
        rows = training_rows(rollout, advantages, constant, per_step=self.per_step,
                             train_strategies=self.strata.train_strategies)
        if not rows:
            raise RuntimeError(f"every trajectory of {task.game_file} failed in the environment: nothing to train")
        stats = rollout_stats(rollout, task.subtask) | constant.counts() | credit_counts(advantages)
        return [self._output(row, {"strata_stats": stats if i == 0 else None}) for i, row in enumerate(rows)]

    def _seed(self, task: Task, validate: bool, global_steps: Any) -> int:
        """The task's sampling seed (`task_sampling_seed`): a validation game gets the same one at every step."""
        step = None if validate else int(global_steps)
        return task_sampling_seed(int(self.rollout_config.get("seed", 0)), task.split, task.index, step)

    def _evaluation_outputs(self, task: Task, rollout: TaskRollout) -> list[AgentLoopOutput]:
        strategy = rollout.strategies[0]
        trajectory = strategy.trajectories[0]
        steps = trajectory.steps
        candidates = [strategy.candidate] if strategy.candidate is not None else []  # none for GRPO
        # One record per episode; `is_correct` is what happened, never a constant.
        record = {
            "won": float(trajectory.won),
            "is_correct": bool(trajectory.won),
            "subtask": task.subtask,
            "split": task.split,
            "episode_length": float(trajectory.num_steps),
            "num_responses": len(candidates) + len(steps),
            "num_well_formed": sum(c.well_formed for c in candidates) + sum(s.well_formed for s in steps),
            "num_admissible": sum(bool(s.admissible) for s in steps),
            "num_refused_repeats": trajectory.refused_repeats,
            "end_reason": trajectory.end_reason,
            "score": trajectory.progress,  # None where the environment reports no score (ALFWorld)
        }
        rows = [strategy_row(c.generation, 0.0, trajectory.reward) for c in candidates]
        rows += rows_of_trajectory(trajectory, None, self.per_step)
        outputs = [self._output(row, {}) for row in rows]
        outputs[-1].extra_fields["reward_extra_info"] = record
        return outputs

    def _output(self, row: Row, extra: dict[str, Any]) -> AgentLoopOutput:
        # verl tags every row with the span of weight versions that generated it (off-policy bookkeeping).
        versions = {}
        if row.weights_versions:
            versions = {"min_global_steps": min(row.weights_versions), "max_global_steps": max(row.weights_versions)}
        return AgentLoopOutput(
            prompt_ids=row.prompt_ids,
            response_ids=row.response_ids,
            response_mask=row.response_mask,
            response_logprobs=row.response_logprobs,
            reward_score=row.reward,
            num_turns=row.num_turns,
            metrics=AgentLoopMetrics(),
            # verl copies the last output's reward_extra_info to the others: every output carries one.
            extra_fields={"strata_role": row.role, "strata_advantages": row.advantages,
                          "strata_reward": row.reward, "strata_zero_variance": row.zero_variance,
                          "reward_extra_info": {}, **versions, **extra},
        )
