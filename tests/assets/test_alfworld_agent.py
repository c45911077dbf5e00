"""The tiny ALFWorld agent's warm start trains on exactly what the per-step rollout renders, with a loss
whose sampled softmax is the full one when it samples every token."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re

import pytest
import torch

from strata.assets.alfworld_agent import (
    MIXTURE_SHARES,
    AgentRecipe,
    expert_traces,
    tokenize_dialogues,
    trace_dialogues,
    training_mixture,
)
from strata.assets.warm_start import Example, SampledSoftmax, response_loss
from strata.envs.alfworld.bundled import bundled_data_path
from strata.envs.alfworld.discovery import load_split
from strata.envs.pool import EnvPool
from strata.workflow.chat import ChatTokens
from strata.workflow.episode import EpisodeLimits
from strata.workflow.group import GroupShape, rollout_task
from strata.workflow.policy import Policy

RECIPE = AgentRecipe()


class ReplayServer:
    """Answers with the given responses in order, and records every prompt it gets."""

    def __init__(self, responses: list[list[int]]):
        self.responses = list(responses)
        self.prompts: list[list[int]] = []

    async def generate(self, request_id, prompt_ids, sampling_params):
        from verl.workers.rollout.replica import TokenOutput

        self.prompts.append(list(prompt_ids))
        ids = self.responses.pop(0)
        return TokenOutput(token_ids=ids, log_probs=[-0.1] * len(ids), stop_reason="completed")


@pytest.fixture(scope="module")
def pool():
    with EnvPool(num_workers=1, max_steps=RECIPE.max_steps) as p:
        yield p


@pytest.fixture(scope="module")
def traced(tmp_path_factory, pool, qwen_tokenizer):
    tasks = [t for t in load_split(bundled_data_path(tmp_path_factory.mktemp("games")), "train")
             if t.task_type == "pick_and_place_simple"][:3]
    traces = asyncio.run(expert_traces(pool, tasks, orders_per_game=2, seed=0, slip_rate=0.3,
                                       misplaced_take_rate=0.5))
    chat = ChatTokens(qwen_tokenizer)
    strata, grpo = (RECIPE.strata_config(a) for a in ("strata", "grpo"))
    dialogues = trace_dialogues(strata.prompts.templates(), grpo.prompts.templates(), traces, RECIPE.history_window)
    examples = tokenize_dialogues(chat, dialogues)
    return traces, chat, examples


@pytest.mark.parametrize("algorithm", ["strata", "grpo"])
def test_examples_are_the_per_step_rollouts_own_prompts(traced, pool, algorithm):
    traces, chat, examples = traced
    index, trace = next((i, t) for i, t in enumerate(traces) if t.won and any(s.slip for s in t.steps))
    steps = len(trace.steps)
    assert steps >= 4  # enough steps for the history window to slide
    kind = "action" if algorithm == "strata" else "action_grpo"
    first = sum(len([s for s in t.steps if not s.slip]) for t in traces[:index] if t.won)
    targets = iter(examples[kind][first:])

    def answer(text: str) -> list[int]:
        return chat.tokenizer.encode(text, add_special_tokens=False) + [chat.tokenizer.eos_token_id]

    won_before = sum(t.won for t in traces[:index])
    strategy = [examples["strategy"][won_before]] if algorithm == "strata" else []
    server = ReplayServer([e.response_ids for e in strategy] + [answer(f"<action>{s.action}</action>")
                                                                for s in trace.steps])
    config = RECIPE.strata_config(algorithm)
    limits = EpisodeLimits(max_steps=RECIPE.max_steps, response_budget=10_000, prompt_tokens=2048, per_step=True,
                           history_window=config.prompts.history_window)
    policy = Policy(server, chat, {"temperature": 1.0}, config.max_tokens_per_response)
    rollout = asyncio.run(rollout_task(trace.task, GroupShape.evaluation(config), policy, pool,
                                       config.prompts.templates(), limits, None))
    (trajectory,) = rollout.strategies[0].trajectories
    assert trajectory.won and [s.action for s in trajectory.steps] == [s.action for s in trace.steps]
    # Every prompt the rollout sent is an example's prompt, except those that the slips answered.
    action_prompts = server.prompts[len(strategy):]
    assert [e.prompt_ids for e in strategy] == server.prompts[: len(strategy)]
    kept = [p for p, s in zip(action_prompts, trace.steps, strict=True) if not s.slip]
    assert kept == [next(targets).prompt_ids for _ in kept]
    shown = chat.decode(server.prompts[-1])
    assert ("Strategy: look for the" in shown) == (algorithm == "strata")
    numbered = [line.split(".")[0] for line in shown.splitlines() if re.match(r"^\d+\. ", line)]
    assert numbered == [str(steps - 2), str(steps - 1)]  # the window: the 2 steps before the last one


def test_slips_are_history_never_targets_and_the_judgment_flags_them(traced):
    traces, chat, examples = traced
    won = [t for t in traces if t.won]
    assert len(examples["strategy"]) == len(examples["judge"]) == len(won)
    targets = sum(not s.slip for t in won for s in t.steps)
    assert len(examples["action"]) == len(examples["action_grpo"]) == targets
    assert any(s.slip for t in won for s in t.steps)
    # Misplaced takes are slips the game refuses, each followed by the expert's own next move, never repeated.
    misplaced = [(t, i) for t in won for i, s in enumerate(t.steps) if s.misplaced_take]
    assert misplaced and all(t.steps[i].slip and t.steps[i].observation == "Nothing happens." for t, i in misplaced)
    assert all(not t.steps[i + 1].misplaced_take for t, i in misplaced if i + 1 < len(t.steps))
    for trace, judge in zip(won, examples["judge"], strict=True):
        flagged = [n for n, s in enumerate(trace.steps, start=1) if s.slip]
        assert chat.tokenizer.decode(judge.response_ids, skip_special_tokens=True) == f"<judgment>{flagged}</judgment>"


def test_sampled_softmax_over_every_token_is_the_full_cross_entropy(traced, tiny_model_dir):
    from transformers import AutoModelForCausalLM

    _, chat, examples = traced
    batch = [examples["strategy"][0], examples["action"][1], examples["judge"][0]]
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32).eval()
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        full = response_loss(model, batch, chat.tokenizer.pad_token_id)
        everything = SampledSoftmax.of(batch, negatives=model.config.vocab_size)
        assert response_loss(model, batch, chat.tokenizer.pad_token_id, everything, generator).item() == (
            pytest.approx(full.item(), rel=1e-5))
        # Fewer negatives: a different estimate, but the weight keeps it near the full loss on a random model.
        sampled = response_loss(model, batch, chat.tokenizer.pad_token_id, SampledSoftmax.of(batch, 2048), generator)
        assert sampled.item() == pytest.approx(full.item(), rel=0.02)
        assert sampled.item() != full.item()


def test_dagger_labels_take_half_of_their_kinds_share_of_a_batch():
    examples = {kind: [Example([1], [number])] for number, kind in enumerate(MIXTURE_SHARES)}
    recipe = AgentRecipe()
    assert [count for _, count in training_mixture(examples, recipe)] == [16, 10, 4, 2]
    labels = [Example([2], [9])]
    mixture = training_mixture(examples, recipe, {"action": labels, "action_grpo": []})
    assert mixture == [(examples["action"], 8), (labels, 8), (examples["action_grpo"], 10),
                       (examples["strategy"], 4), (examples["judge"], 2)]
    half = AgentRecipe(batch_size=16)
    assert [count for _, count in training_mixture(examples, half, {"action": labels})] == [4, 4, 5, 2, 1]


def test_the_recipe_sets_the_two_prompt_kinds_shares_of_the_action_examples():
    examples = {kind: [Example([1], [number])] for number, kind in enumerate(MIXTURE_SHARES)}
    equal = AgentRecipe(action_shares=(13, 13))
    assert [count for _, count in training_mixture(examples, equal)] == [13, 13, 4, 2]
    # agent.json stores the shares as a JSON list; read back, the recipe is the one that was built.
    assert AgentRecipe(**json.loads(json.dumps(dataclasses.asdict(equal)))) == equal
    for bad in ((0, 13), (20, 10), (13,)):
        with pytest.raises(ValueError, match="action_shares"):
            AgentRecipe(action_shares=bad)
