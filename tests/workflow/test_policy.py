"""Each request's sampling seed depends on its stream and position, never on the order requests interleave."""

from __future__ import annotations

import asyncio

from strata.workflow.chat import ChatTokens
from strata.workflow.policy import Policy


class SeedRecorder:
    """A server that answers one token and records the seed of every request, in arrival order."""

    def __init__(self, eos: int):
        self.eos = eos
        self.seeds: list[int] = []

    async def generate(self, request_id, prompt_ids, sampling_params):
        from verl.workers.rollout.replica import TokenOutput

        self.seeds.append(sampling_params["seed"])
        await asyncio.sleep(0)
        return TokenOutput(token_ids=[self.eos], log_probs=[0.0], stop_reason="completed")


def seeds_by_stream(qwen_tokenizer, order: list[str], root_seed: int = 7) -> dict[str, list[int]]:
    server = SeedRecorder(qwen_tokenizer.eos_token_id)
    policy = Policy(server, ChatTokens(qwen_tokenizer), {"temperature": 1.0}, 8, seed=root_seed)
    streams = {name: policy.stream(name) for name in sorted(set(order))}
    seeds: dict[str, list[int]] = {name: [] for name in streams}

    async def play():
        for name in order:
            await streams[name].generate([1, 2, 3])
            seeds[name].append(server.seeds[-1])

    asyncio.run(play())
    return seeds


def test_seeds_follow_streams_not_interleaving(qwen_tokenizer):
    a = seeds_by_stream(qwen_tokenizer, ["x", "y", "x", "y", "x"])
    b = seeds_by_stream(qwen_tokenizer, ["y", "y", "x", "x", "x"])
    assert a == b
    every = [s for stream in a.values() for s in stream]
    assert len(set(every)) == len(every) == 5
    assert seeds_by_stream(qwen_tokenizer, ["x"], root_seed=8)["x"][0] != a["x"][0]
