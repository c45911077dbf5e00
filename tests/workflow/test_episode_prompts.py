"""What an episode's prompts show, read back from the requests a recording server received, on the real engine:
the first prompt holds the task, the strategy and the game's first observation, in both row layouts; a
re-rendered (``per_step``) prompt shows the observation the last action produced."""

from __future__ import annotations

import asyncio

import pytest

from strata.core.prompting import load_prompt_templates
from strata.workflow.chat import ChatTokens
from strata.workflow.episode import Episode, EpisodeLimits
from strata.workflow.policy import Policy

STRATEGY = "open every drawer before the shelves"


class RecordingServer:
    """Answers every turn with ``look`` and keeps each prompt's text."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.prompts: list[str] = []
        self.lengths: list[int] = []

    async def generate(self, request_id, prompt_ids, sampling_params):
        from verl.workers.rollout.replica import TokenOutput

        self.prompts.append(self.tokenizer.decode(prompt_ids))
        self.lengths.append(len(prompt_ids))
        ids = self.tokenizer.encode("<action>look</action>", add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


@pytest.mark.parametrize("per_step", [False, True])
def test_the_prompts_show_the_task_the_strategy_and_the_game(per_step, qwen_tokenizer, bundled_valid_tasks, env_pool):
    server = RecordingServer(qwen_tokenizer)
    policy = Policy(server, ChatTokens(qwen_tokenizer), {"temperature": 1.0}, 32)
    limits = EpisodeLimits(max_steps=2, response_budget=4096, prompt_tokens=4096, per_step=per_step)

    async def play():
        async with env_pool.episode(bundled_valid_tasks[0]) as env:
            episode = Episode(env, STRATEGY, policy, load_prompt_templates(), limits, judge=False)
            trajectory = await episode.run()
            return env.task_description, env.initial_observation, trajectory

    task, first_observation, trajectory = asyncio.run(play())
    assert trajectory.num_steps == 2 and len(server.prompts) == 2
    first = server.prompts[0]
    assert f"Your task is to: {task}\n" in first and STRATEGY in first  # the template's own task line
    assert first_observation.split("\n\n")[-1] in first  # the room's description and the goal line
    assert "look" in first  # among the admissible commands
    looked = trajectory.steps[0].observation
    assert looked and looked in server.prompts[1]  # the observation `look` produced is shown next
    if not per_step:  # the environment's turn, whole: the step it asks for and the commands admissible now
        async def admissible_after_look():
            async with env_pool.episode(bundled_valid_tasks[0]) as env:
                return (await env.step("look")).admissible_commands

        listed = "\n".join(f"- {command}" for command in asyncio.run(admissible_after_look()))
        turn = load_prompt_templates().observation_turn.format(step=2, observation=looked, admissible_actions=listed)
        assert turn in server.prompts[1]
        # and the whole row so far is the chat template's own rendering of the three turns (no stray closing token)
        first_user = server.prompts[0].split("<|im_start|>user\n", 1)[1].split("<|im_end|>", 1)[0]
        messages = [{"role": "user", "content": first_user}, {"role": "assistant", "content": "<action>look</action>"},
                    {"role": "user", "content": turn}]
        assert server.prompts[1] == qwen_tokenizer.apply_chat_template(messages, add_generation_prompt=True,
                                                                       tokenize=False)


@pytest.mark.parametrize(("our_cap", "reason"), [(50, "step_limit"), (51, "lost")])
def test_a_game_the_engine_ends_before_our_cap_is_lost(our_cap, reason, qwen_tokenizer, bundled_valid_tasks,
                                                       env_pool):
    """The pool's engine stops a game after its own 50 steps (``EnvPool(max_steps=50)``): at our cap of 50 that
    is our step limit; with a cap of 51 the game ended first, without the goal: lost."""
    policy = Policy(RecordingServer(qwen_tokenizer), ChatTokens(qwen_tokenizer), {"temperature": 1.0}, 32)
    limits = EpisodeLimits(max_steps=our_cap, response_budget=1 << 20, prompt_tokens=1 << 20, per_step=True,
                           history_window=1)

    async def play():
        async with env_pool.episode(bundled_valid_tasks[0]) as env:
            return await Episode(env, STRATEGY, policy, load_prompt_templates(), limits, judge=False).run()

    trajectory = asyncio.run(play())
    assert trajectory.num_steps == 50 and trajectory.end_reason == reason and not trajectory.won


def test_per_step_prompts_drop_the_oldest_steps_to_fit_the_prompt_budget(qwen_tokenizer, bundled_valid_tasks,
                                                                           env_pool):
    """``prompts.history_window`` unset: every step would be shown, so with a budget that holds two steps of
    history the episode must drop the oldest ones (its ``fits`` check), keeping the most recent."""

    def play(prompt_tokens: int) -> RecordingServer:
        server = RecordingServer(qwen_tokenizer)
        policy = Policy(server, ChatTokens(qwen_tokenizer), {"temperature": 1.0}, 32)
        limits = EpisodeLimits(max_steps=6, response_budget=1 << 20, prompt_tokens=prompt_tokens, per_step=True)

        async def run():
            async with env_pool.episode(bundled_valid_tasks[0]) as env:
                return await Episode(env, STRATEGY, policy, load_prompt_templates(), limits, judge=False).run()

        assert asyncio.run(run()).num_steps == 6
        return server

    unbounded = play(1 << 20)
    budget = unbounded.lengths[2]  # the prompt that shows steps 1 and 2
    assert unbounded.lengths[5] > budget and "[Step 1] Action: look" in unbounded.prompts[5]
    bounded = play(budget)
    assert bounded.lengths[:3] == unbounded.lengths[:3] and max(bounded.lengths) <= budget
    assert "[Step 5] Action: look" in bounded.prompts[5] and "[Step 1] Action: look" not in bounded.prompts[5]


def test_the_judge_prompt_omits_old_observations_to_fit_the_prompt_budget(qwen_tokenizer, bundled_valid_tasks,
                                                                           env_pool):
    def judged(prompt_tokens: int) -> RecordingServer:
        server = RecordingServer(qwen_tokenizer)
        policy = Policy(server, ChatTokens(qwen_tokenizer), {"temperature": 1.0}, 32)
        limits = EpisodeLimits(max_steps=4, response_budget=1 << 20, prompt_tokens=prompt_tokens)

        async def run():
            async with env_pool.episode(bundled_valid_tasks[0]) as env:
                return await Episode(env, STRATEGY, policy, load_prompt_templates(), limits, judge=True).run()

        assert asyncio.run(run()).num_steps == 4 and len(server.prompts) == 5  # 4 actions, then the judge
        return server

    whole = judged(1 << 20)
    assert "(omitted)" not in whole.prompts[-1] and STRATEGY in whole.prompts[-1]

    async def task_of_the_game():
        async with env_pool.episode(bundled_valid_tasks[0]) as env:
            return env.task_description

    assert f"The agent's task was to: {asyncio.run(task_of_the_game())}\n" in whole.prompts[-1]
    budget = whole.lengths[-1] - 1  # one token short of the whole episode
    cut = judged(budget)
    assert "(omitted)" in cut.prompts[-1] and cut.lengths[-1] <= budget
    assert cut.prompts[-1].count("Action: look") == 4  # actions are what is judged: all kept
