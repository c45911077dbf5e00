"""Each request's sampling seed depends on its stream and position, never on the order requests interleave;
each stream sends all its calls under one request id of its own."""

from __future__ import annotations

import asyncio

from strata.workflow.chat import ChatTokens
from strata.workflow.policy import Policy


class SeedRecorder:
    """A server that answers one token and records the seed (None: no seed sent) and request id of every
    request, in arrival order."""

    def __init__(self, eos: int):
        self.eos = eos
        self.seeds: list[int | None] = []
        self.request_ids: list[str] = []

    async def generate(self, request_id, prompt_ids, sampling_params):
        from verl.workers.rollout.replica import TokenOutput

        self.seeds.append(sampling_params.get("seed"))
        self.request_ids.append(request_id)
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


def test_seeding_switch_off_sends_no_seed(qwen_tokenizer):
    server = SeedRecorder(qwen_tokenizer.eos_token_id)
    policy = Policy(server, ChatTokens(qwen_tokenizer), {"temperature": 1.0}, 8, seed=7, seeded=False)

    async def play():
        for name in ("x", "y"):
            stream = policy.stream(name)
            await stream.generate([1, 2, 3])
            await stream.generate([1, 2, 3])

    asyncio.run(play())
    assert server.seeds == [None] * 4


def test_one_request_id_per_stream_never_shared(qwen_tokenizer):
    server = SeedRecorder(qwen_tokenizer.eos_token_id)
    chat = ChatTokens(qwen_tokenizer)
    # Two tasks whose policies have the same seed (e.g. the same task at two validations) still get
    # different ids: an id is unique to its stream object, so no stale sticky session is ever reused.
    tasks = [Policy(server, chat, {"temperature": 1.0}, 8, seed=7) for _ in range(2)]

    async def play():
        for policy in tasks:
            for name in ("candidate/0", "strategy/0/trajectory/0"):
                stream = policy.stream(name)
                for _ in range(3):  # an episode's turns, then its judgment
                    await stream.generate([1, 2, 3])

    asyncio.run(play())
    ids = server.request_ids
    assert len(ids) == 12
    per_stream = [ids[i : i + 3] for i in range(0, 12, 3)]
    assert all(len(set(calls)) == 1 for calls in per_stream)
    assert len({calls[0] for calls in per_stream}) == 4
