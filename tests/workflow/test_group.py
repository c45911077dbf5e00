"""One task's StraTA group against the real ALFWorld engine, with a scripted policy server.

The server plays two kinds of strategy: "follow the plan" (its actions are the game's walkthrough, so
it wins) and "just look around" (it only says `look`, so it loses at the step cap). Every outcome, and
so every advantage, can then be written down by hand.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import os
import signal

import pytest

from strata.core.config import StrataConfig
from strata.core.embedding import HashedBowEmbedder
from strata.core.prompting import load_prompt_templates
from strata.envs.pool import EnvPool
from strata.workflow.chat import ChatTokens
from strata.workflow.episode import EpisodeLimits
from strata.workflow.group import GroupShape, rollout_task
from strata.workflow.policy import Policy
from strata.workflow.rows import ZeroVariance, group_advantages, rollout_stats, training_rows

WIN, LOSE = "follow the plan", "just look around"


class ScriptedServer:
    """Answers verl's ``generate`` call from the prompt text: strategies alternate WIN/LOSE, actions follow
    the strategy, the judge flags step 1."""

    def __init__(self, tokenizer, walkthrough: list[str]):
        self.tokenizer = tokenizer
        self.walkthrough = walkthrough
        self.strategies_served = 0
        self.strategy_requests: list[tuple[str, int]] = []  # (prompt, sampling seed) of each strategy request
        self.first_action_seeds: list[int] = []  # the sampling seed of each episode's first action

    def _answer(self, prompt: str) -> str:
        if "<strategy> </strategy> tags" in prompt:
            self.strategies_served += 1
            return f"<strategy>{WIN if self.strategies_served % 2 else LOSE}</strategy>"
        if "<judgment>" in prompt:
            return "<judgment>[1]</judgment>"
        step = prompt.count("<|im_start|>assistant") - 1
        action = self.walkthrough[step] if WIN in prompt else "look"
        return f"<action>{action}</action>"

    async def generate(self, request_id, prompt_ids, sampling_params):
        from verl.workers.rollout.replica import TokenOutput

        prompt = self.tokenizer.decode(prompt_ids)
        if "<strategy> </strategy> tags" in prompt:
            self.strategy_requests.append((prompt, sampling_params["seed"]))
        elif "<judgment>" not in prompt and prompt.count("<|im_start|>assistant") == 1:
            self.first_action_seeds.append(sampling_params["seed"])
        text = self._answer(prompt)
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


@pytest.fixture(scope="module")
def group_play(qwen_tokenizer, bundled_valid_tasks, env_pool):
    """One StraTA group on the real engine: its config, the game's walkthrough, the rollout and the server."""
    task = bundled_valid_tasks[0]

    async def play():
        async with env_pool.episode(task, with_walkthrough=True) as probe:
            walkthrough = list(probe.walkthrough)
        config = StrataConfig.from_dict({"num_stras_per_run": 2, "num_trajs_per_stra": 2,
                                         "num_cands_per_stra": 2, "max_tokens_per_response": 64})
        chat = ChatTokens(qwen_tokenizer)
        policy = Policy(ScriptedServer(qwen_tokenizer, walkthrough), chat, {"temperature": 1.0}, 64)
        limits = EpisodeLimits(max_steps=len(walkthrough) + 2, response_budget=8192, prompt_tokens=4096)
        server = policy.server_manager
        rollout = await rollout_task(task, GroupShape.training(config), policy, env_pool,
                                     load_prompt_templates(), limits, HashedBowEmbedder())
        return config, walkthrough, rollout, server

    return asyncio.run(play())


@pytest.fixture(scope="module")
def played(group_play):
    return group_play[:3]


def test_selection_keeps_one_strategy_of_each_kind(played):
    _, _, rollout = played
    assert len(rollout.candidates) == 4
    assert sorted(s.candidate.strategy for s in rollout.strategies) == sorted([WIN, LOSE])


def test_the_rollout_records_the_task_and_how_the_selection_went(played):
    _, _, rollout = played
    assert rollout.task_description == "examine the laptop with the desklamp"  # the goal sentence alone
    assert rollout.initial_observation.endswith("Your task is to: examine the laptop with the desklamp.")
    assert isinstance(rollout.selection_seconds, float) and 0 <= rollout.selection_seconds < 10
    assert len(rollout.nearest_kept_cosine) == len(rollout.candidates)  # every candidate was embedded
    assert all(isinstance(value, float) and -1 <= value <= 1 + 1e-9 for value in rollout.nearest_kept_cosine)


def test_candidates_are_asked_with_the_task_and_seeds_of_their_own(group_play):
    _, _, rollout, server = group_play
    prompts, seeds = zip(*server.strategy_requests, strict=True)
    assert len(prompts) == len(rollout.candidates) == 4
    assert all(f"Your task is to: {rollout.task_description}\n" in prompt for prompt in prompts)
    assert all(rollout.initial_observation.split("\n\n")[-1] in prompt for prompt in prompts)
    assert len(set(seeds)) == 4  # one stream per candidate: equal seeds would sample one strategy σ·N times
    assert len(server.first_action_seeds) == 4 and len(set(server.first_action_seeds)) == 4  # and per episode


def test_without_diversity_a_given_encoder_is_not_used(qwen_tokenizer, bundled_valid_tasks, env_pool):
    config = StrataConfig.from_dict({"num_stras_per_run": 2, "num_trajs_per_stra": 1, "num_cands_per_stra": 2,
                                     "max_tokens_per_response": 64, "diversity": {"enable": False}})
    policy = Policy(ScriptedServer(qwen_tokenizer, ["look"]), ChatTokens(qwen_tokenizer), {"temperature": 1.0}, 64)
    limits = EpisodeLimits(max_steps=1, response_budget=4096, prompt_tokens=4096)
    rollout = asyncio.run(rollout_task(bundled_valid_tasks[1], GroupShape.training(config), policy, env_pool,
                                       load_prompt_templates(), limits, HashedBowEmbedder()))
    assert len(rollout.kept) == 2 and rollout.nearest_kept_cosine == [None] * 4  # a seeded random pick


def test_outcomes_come_from_the_engine(played):
    _, walkthrough, rollout = played
    for strategy in rollout.strategies:
        assert len(strategy.trajectories) == 2
        for trajectory in strategy.trajectories:
            if strategy.candidate.strategy == WIN:
                assert trajectory.won and trajectory.end_reason == "won"
                assert trajectory.num_steps == len(walkthrough)
            else:
                assert not trajectory.won and trajectory.end_reason == "step_limit"
                assert trajectory.num_steps == len(walkthrough) + 2
            assert trajectory.judge_parsed and trajectory.flagged_steps == [1]


def test_advantages_by_hand(played):
    config, _, rollout = played
    advantages = group_advantages(rollout, config)
    # S = [1, 0] (δ·M = 1: best reward), mean 0.5, unbiased std sqrt(0.5) -> Â(z) = ±0.5/0.7071 = ±0.7071
    expected_strategy = {WIN: 0.5 / math.sqrt(0.5), LOSE: -0.5 / math.sqrt(0.5)}
    for strategy, value in zip(rollout.strategies, advantages.strategy, strict=True):
        assert value == pytest.approx(expected_strategy[strategy.candidate.strategy], abs=1e-5)
    # Within a strategy all outcomes are equal -> Â(τ) = 0; short well-formed responses -> s = 0;
    # the judge flagged step 1 -> j_1 = -κ = -0.1.
    for per_strategy in advantages.actions:
        for steps in per_strategy:
            assert steps[0] == pytest.approx(-0.1)
            assert all(a == pytest.approx(0.0) for a in steps[1:])


def test_rows_carry_exactly_the_action_tokens_and_their_advantages(played, qwen_tokenizer):
    config, _, rollout = played
    advantages = group_advantages(rollout, config)
    rows = training_rows(rollout, advantages, ZeroVariance.of(rollout, config.delta_coef))
    assert [r.role for r in rows] == ["strategy"] * 2 + ["trajectory"] * 4
    for row, strategy, value in zip(rows[:2], rollout.strategies, advantages.strategy, strict=True):
        assert row.response_ids == strategy.candidate.generation.token_ids
        assert row.advantages == [value] * len(row.response_ids)
    trajectories = [t for s in rollout.strategies for t in s.trajectories]
    per_trajectory = [steps for per_strategy in advantages.actions for steps in per_strategy]
    for row, trajectory, step_advantages in zip(rows[2:], trajectories, per_trajectory, strict=True):
        assert len(row.response_ids) == len(row.response_mask) == len(row.advantages) == len(row.response_logprobs)
        trained = [tok for tok, m in zip(row.response_ids, row.response_mask, strict=True) if m]
        model_text = "".join(qwen_tokenizer.decode(s.generation.token_ids) for s in trajectory.steps)
        assert qwen_tokenizer.decode(trained) == model_text
        # the environment's words are never trained on
        untrained = qwen_tokenizer.decode(
            [t for t, m in zip(row.response_ids, row.response_mask, strict=True) if not m]
        )
        assert trajectory.steps[0].observation in untrained
        expected = [a for step, a in zip(trajectory.steps, step_advantages, strict=True)
                    for _ in step.generation.token_ids]
        assert [a for a, m in zip(row.advantages, row.response_mask, strict=True) if m] == pytest.approx(expected)


def test_validation_runs_one_strategy_and_one_trajectory(qwen_tokenizer, bundled_valid_tasks, env_pool):
    task = bundled_valid_tasks[1]

    async def play():
        server = ScriptedServer(qwen_tokenizer, ["look"] * 3)
        policy = Policy(server, ChatTokens(qwen_tokenizer), {"temperature": 0.7}, 64)
        limits = EpisodeLimits(max_steps=3, response_budget=4096, prompt_tokens=4096)
        rollout = await rollout_task(task, GroupShape.evaluation(StrataConfig()), policy, env_pool,
                                     load_prompt_templates(), limits, embedder=None)
        return server, rollout

    server, rollout = asyncio.run(play())
    assert server.strategies_served == 1
    assert len(rollout.candidates) == 1 and len(rollout.strategies) == 1
    assert len(rollout.trajectories) == 1
    assert rollout.trajectories[0].judge is None  # no self-judgment in validation


class FlatServer(ScriptedServer):
    """For the GRPO baseline: no strategy to follow, so even-numbered episodes (by first request) play the
    walkthrough and odd ones only look."""

    def __init__(self, tokenizer, walkthrough: list[str]):
        super().__init__(tokenizer, walkthrough)
        self.episodes: dict[str, int] = {}

    async def generate(self, request_id, prompt_ids, sampling_params):
        episode = self.episodes.setdefault(request_id, len(self.episodes))
        prompt = self.tokenizer.decode(prompt_ids)
        assert "strategy" not in prompt.lower(), "the GRPO baseline's prompt shows no strategy"
        step = prompt.count("<|im_start|>assistant") - 1
        text = f"<action>{self.walkthrough[step] if episode % 2 == 0 else 'look'}</action>"
        from verl.workers.rollout.replica import TokenOutput

        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


GRPO = {"algorithm": "grpo", "num_stras_per_run": 1, "num_cands_per_stra": 1, "num_trajs_per_stra": 4,
        "judge": {"enable": False}, "prompts": {"preset": "alfworld_grpo"}, "max_tokens_per_response": 64}


def test_grpo_baseline_plays_one_flat_group(qwen_tokenizer, bundled_valid_tasks, env_pool):
    task = bundled_valid_tasks[0]
    config = StrataConfig.from_dict(GRPO)

    async def play():
        async with env_pool.episode(task, with_walkthrough=True) as probe:
            walkthrough = list(probe.walkthrough)
        server = FlatServer(qwen_tokenizer, walkthrough)
        policy = Policy(server, ChatTokens(qwen_tokenizer), {"temperature": 1.0}, 64)
        limits = EpisodeLimits(max_steps=len(walkthrough) + 1, response_budget=8192, prompt_tokens=4096)
        rollout = await rollout_task(task, GroupShape.training(config), policy, env_pool,
                                     config.prompts.templates(), limits, embedder=None)
        return server, rollout

    server, rollout = asyncio.run(play())
    assert rollout.candidates == [] and len(rollout.strategies) == 1 and rollout.strategies[0].candidate is None
    assert [t.won for t in rollout.trajectories] == [True, False, True, False]
    assert rollout.task_description and "Your task is to" in rollout.initial_observation
    assert all(t.judge is None for t in rollout.trajectories)
    advantages = group_advantages(rollout, config)
    # One group of G=4 rewards [1, 0, 1, 0]: mean 0.5, unbiased std 0.5774 -> ±0.866 on every action.
    expected = 0.5 / math.sqrt(1 / 3)
    for trajectory, steps in zip(rollout.trajectories, advantages.actions[0], strict=True):
        assert steps == pytest.approx([expected if trajectory.won else -expected] * trajectory.num_steps, abs=1e-5)
    rows = training_rows(rollout, advantages, ZeroVariance.of(rollout, config.delta_coef))
    assert [r.role for r in rows] == ["trajectory"] * 4  # no strategy row
    stats = rollout_stats(rollout, task.subtask)
    assert stats["num_candidates"] == 0 and stats["num_won"] == 2 and stats["num_dropped_strategies"] == 0


def play_grpo_looking(server, shape, temperature: float, task, env_pool):
    """A GRPO group on ``task`` whose episodes take two steps on ``server``."""
    config = StrataConfig.from_dict(GRPO)
    policy = Policy(server, ChatTokens(server.tokenizer), {"temperature": temperature}, 64)
    limits = EpisodeLimits(max_steps=2, response_budget=4096, prompt_tokens=4096)
    return asyncio.run(rollout_task(task, shape(config), policy, env_pool, config.prompts.templates(), limits,
                                    embedder=None))


def test_grpo_validation_samples_no_strategy(qwen_tokenizer, bundled_valid_tasks, env_pool):
    server = FlatServer(qwen_tokenizer, ["look"] * 2)
    rollout = play_grpo_looking(server, GroupShape.evaluation, 0.7, bundled_valid_tasks[1], env_pool)
    assert rollout.candidates == [] and len(rollout.trajectories) == 1 and len(server.episodes) == 1


class SeedRecordingServer(FlatServer):
    """A FlatServer that also records each episode's sampling seeds, in call order."""

    def __init__(self, tokenizer, walkthrough: list[str]):
        super().__init__(tokenizer, walkthrough)
        self.seeds: dict[str, list[int]] = {}

    async def generate(self, request_id, prompt_ids, sampling_params):
        self.seeds.setdefault(request_id, []).append(sampling_params["seed"])
        return await super().generate(request_id, prompt_ids, sampling_params)


def test_grpo_episodes_sample_with_seeds_of_their_own(qwen_tokenizer, bundled_valid_tasks, env_pool):
    """Each of the G episodes is its own seeded stream: equal seeds would make seeded sampling play one
    trajectory G times."""
    server = SeedRecordingServer(qwen_tokenizer, ["look"] * 2)
    rollout = play_grpo_looking(server, GroupShape.training, 1.0, bundled_valid_tasks[1], env_pool)
    assert len(rollout.trajectories) == 4 and rollout.kept == []
    first_seeds = [seeds[0] for seeds in server.seeds.values()]
    assert len(first_seeds) == 4 and len(set(first_seeds)) == 4


@pytest.mark.parametrize("settings", [GRPO, {"num_stras_per_run": 2, "num_trajs_per_stra": 2,
                                              "num_cands_per_stra": 1, "max_tokens_per_response": 64}])
def test_a_game_that_cannot_start_names_its_file(settings, qwen_tokenizer, bundled_valid_tasks, env_pool, tmp_path):
    config = StrataConfig.from_dict(settings)
    broken = dataclasses.replace(bundled_valid_tasks[0], game_file=str(tmp_path / "gone/game.tw-pddl"))
    policy = Policy(FlatServer(qwen_tokenizer, ["look"]), ChatTokens(qwen_tokenizer), {"temperature": 1.0}, 64)
    limits = EpisodeLimits(max_steps=2, response_budget=4096, prompt_tokens=4096)
    with pytest.raises(RuntimeError, match=rf"^could not start {broken.game_file}: \S"):
        asyncio.run(rollout_task(broken, GroupShape.training(config), policy, env_pool,
                                 config.prompts.templates(), limits, embedder=None))


class WorkerKillingServer(FlatServer):
    """A FlatServer that kills the pool's only worker at the first request of a second turn, and waits until
    the pool has noticed (and replaced it), so every episode of the group has played a step when its engine dies."""

    def __init__(self, tokenizer, pool: EnvPool):
        super().__init__(tokenizer, ["look"] * 3)
        self.pool = pool

    async def generate(self, request_id, prompt_ids, sampling_params):
        if self.pool.workers_replaced == 0 and self.tokenizer.decode(prompt_ids).count("<|im_start|>assistant") == 2:
            os.kill(self.pool.worker_pids[0], signal.SIGKILL)
            while self.pool.workers_replaced == 0:
                await asyncio.sleep(0.05)
        return await super().generate(request_id, prompt_ids, sampling_params)


def test_a_group_whose_engine_dies_mid_episode_keeps_its_steps(qwen_tokenizer, bundled_valid_tasks):
    """Every GRPO episode loses its engine after a step: the group is still a group (it started; its steps
    are recorded and trained on as lost), and each trajectory ends with the engine's failure, not the step cap."""
    config = StrataConfig.from_dict(GRPO)
    limits = EpisodeLimits(max_steps=3, response_budget=4096, prompt_tokens=4096)
    with EnvPool(num_workers=1, step_timeout_s=60, max_steps=50) as pool:
        server = WorkerKillingServer(qwen_tokenizer, pool)
        policy = Policy(server, ChatTokens(qwen_tokenizer), {"temperature": 1.0}, 64)
        rollout = asyncio.run(rollout_task(bundled_valid_tasks[1], GroupShape.training(config), policy, pool,
                                           config.prompts.templates(), limits, embedder=None))
        assert pool.workers_replaced == 1
    assert len(rollout.trajectories) == 4
    for trajectory in rollout.trajectories:
        assert trajectory.num_steps >= 1 and not trajectory.won
        assert trajectory.end_reason == "worker_lost" or trajectory.end_reason.startswith("engine_error: "), \
            trajectory.end_reason
