"""An episode records, per step, the command the environment sent and whether it was admissible; with the
reasoning preset, the action is read after the model's <think> block."""

from __future__ import annotations

import asyncio

from strata.core.prompting import load_prompt_templates
from strata.workflow.chat import ChatTokens
from strata.workflow.episode import Episode, EpisodeLimits
from strata.workflow.policy import Policy


class ListServer:
    """Answers verl's ``generate`` calls with the given texts, in order, and keeps the prompts it saw."""

    def __init__(self, tokenizer, answers: list[str]) -> None:
        self.tokenizer = tokenizer
        self.answers = list(answers)
        self.prompts: list[str] = []

    async def generate(self, request_id, prompt_ids, sampling_params):
        from verl.workers.rollout.replica import TokenOutput

        self.prompts.append(self.tokenizer.decode(prompt_ids))
        ids = self.tokenizer.encode(self.answers.pop(0), add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


def test_steps_record_the_command_sent_and_whether_it_was_admissible(qwen_tokenizer, bundled_valid_tasks, env_pool):
    task = bundled_valid_tasks[0]

    async def play() -> tuple:
        async with env_pool.episode(task) as probe:
            target = next(c for c in probe.admissible_commands if c.startswith("go to "))
        answers = [
            # Thinks first, mentions the tag in prose, then writes the action as a person would.
            "<think>The task needs a mug. The answer goes inside <action> tags, so first I look around: "
            f"{target} is a likely place.</think>\n<action>- {target.capitalize()}.</action>",
            "I will look around now.",  # no action tag: malformed, the environment is not stepped
            "<think>Nothing else to do.</think> <action>dance with the fridge</action>",
        ]
        server = ListServer(qwen_tokenizer, answers)
        policy = Policy(server, ChatTokens(qwen_tokenizer), {}, 256)
        limits = EpisodeLimits(max_steps=3, response_budget=8192, prompt_tokens=4096)
        templates = load_prompt_templates("alfworld_reasoning")
        async with env_pool.episode(task) as env_episode:
            trajectory = await Episode(env_episode, "look around", policy, templates, limits, False).run()
        return target, trajectory, server.prompts

    target, trajectory, prompts = asyncio.run(play())
    steps = trajectory.steps
    assert [s.action for s in steps] == [f"- {target.capitalize()}.", None, "dance with the fridge"]
    assert [s.command for s in steps] == [target, None, "dance with the fridge"]
    assert [s.admissible for s in steps] == [True, None, False]
    assert steps[0].observation.startswith("You arrive at ")
    assert steps[2].observation == "Nothing happens."
    assert trajectory.end_reason == "step_limit" and trajectory.num_steps == 3
    assert "in a few sentences inside <think> </think> tags" in prompts[0]  # the action prompt asks to think
    assert "First think briefly inside <think> </think> tags, then" in prompts[1]  # and so does each turn after
    assert "- help" not in prompts[0] and "- look" in prompts[0]  # the engine no longer offers `help`
