"""An episode's turns stay on one rollout replica (its prefix cache), through verl's own client and balancer.

verl's ``LLMServerClient`` asks its ``GlobalRequestLoadBalancer`` for a replica per call: a request id it
has seen goes back to the same replica (sticky session), a new one to the least-loaded replica. The
balancer and client here are verl's real classes; only the Ray actor handles and the vLLM replicas are
stand-ins (a handle whose ``.method.remote(...)`` runs the method in this process, and a replica that
records which episode's turn it served).
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from uuid import uuid4

import pytest
from omegaconf import OmegaConf
from verl.workers.rollout.llm_server import LLMServerClient
from verl.workers.rollout.replica import TokenOutput
from verl.workers.rollout.router import GlobalRequestLoadBalancer

from strata.workflow.chat import ChatTokens
from strata.workflow.policy import Policy

EPISODES = 64
TURNS = 12


class InProcessHandle:
    """Stands in for a Ray actor handle: ``handle.method.remote(...)`` runs ``method`` here and returns an
    awaitable (the coroutine of an async method, else a finished future), as a Ray ObjectRef is."""

    def __init__(self, target: object):
        self._target = target

    def __getattr__(self, name: str):
        method = getattr(self._target, name)

        class _Method:
            @staticmethod
            def remote(*args, **kwargs) -> Awaitable:
                result = method(*args, **kwargs)
                if asyncio.iscoroutine(result):
                    return result
                future = asyncio.get_running_loop().create_future()
                future.set_result(result)
                return future

        return _Method()


class Replica:
    """A rollout replica that takes a little time per request and records (episode, turn) of each one."""

    def __init__(self, name: str, served: dict[int, dict[int, str]], eos: int, rng: random.Random):
        self.name, self.served, self.eos, self.rng = name, served, eos, rng

    async def generate(self, request_id, prompt_ids, sampling_params, **_):
        episode, turn = prompt_ids[:2]
        self.served[episode][turn] = self.name
        await asyncio.sleep(self.rng.uniform(0.0, 0.002))
        return TokenOutput(token_ids=[self.eos], log_probs=[0.0], stop_reason="completed")


def make_client(replicas: int, eos: int, seed: int) -> tuple[LLMServerClient, dict[int, dict[int, str]]]:
    served: dict[int, dict[int, str]] = defaultdict(dict)
    rng = random.Random(seed)
    servers = {f"replica-{i}": InProcessHandle(Replica(f"replica-{i}", served, eos, rng)) for i in range(replicas)}
    balancer = InProcessHandle(GlobalRequestLoadBalancer(servers=servers))
    config = OmegaConf.create({"actor_rollout_ref": {"rollout": {"name": "vllm", "full_determinism": False}}})
    return LLMServerClient(config, load_balancer_handle=balancer), served


def same_replica_share(served: dict[int, dict[int, str]]) -> float:
    """Share of turns after the first that went to the replica of the episode's previous turn."""
    stays = [turns[t] == turns[t - 1] for turns in served.values() for t in range(1, len(turns))]
    assert len(stays) == EPISODES * (TURNS - 1)
    return sum(stays) / len(stays)


def play(replicas: int, send: Callable[[LLMServerClient, int, int, ChatTokens], Awaitable], chat: ChatTokens,
         seed: int = 0) -> dict[int, dict[int, str]]:
    """All episodes concurrently, each a sequence of turns, as a StraTA group runs them; which replica
    served each episode's each turn."""
    random.seed(seed)  # the balancer breaks ties among least-loaded replicas with `random`
    client, served = make_client(replicas, min(chat.stop_token_ids), seed)
    rng = random.Random(seed + 1)

    async def episodes():
        async def episode(index: int):
            turn_of = await send(client, index, 0, chat)
            for turn in range(1, TURNS):
                await asyncio.sleep(rng.uniform(0.0, 0.002))  # the environment's step
                await turn_of(turn)

        await asyncio.gather(*(episode(i) for i in range(EPISODES)))

    asyncio.run(episodes())
    return served


async def through_policy_streams(client, index, turn, chat):
    """Today's path: one `Policy` stream per episode."""
    stream = Policy(client, chat, {"temperature": 1.0}, 8, seed=0).stream(f"strategy/0/trajectory/{index}")

    async def turn_of(t: int):
        await stream.generate([index, t])

    await turn_of(turn)
    return turn_of


async def with_a_fresh_id_per_call(client, index, turn, chat):
    """The old path: every call a new uuid4 request id."""

    async def turn_of(t: int):
        await client.generate(uuid4().hex, prompt_ids=[index, t], sampling_params={"max_tokens": 8})

    await turn_of(turn)
    return turn_of


@pytest.mark.parametrize("replicas", [2, 4])
def test_an_episode_stays_on_one_replica(qwen_tokenizer, replicas):
    chat = ChatTokens(qwen_tokenizer)
    served = play(replicas, through_policy_streams, chat)
    assert same_replica_share(served) == 1.0
    # Sticky, yet still balanced: the least-loaded choice spreads the episodes over every replica.
    episodes_per_replica = Counter(turns[0] for turns in served.values())
    assert len(episodes_per_replica) == replicas
    assert min(episodes_per_replica.values()) >= EPISODES / replicas / 2, episodes_per_replica
    # The same load through the same balancer with a fresh id per call stays only ~1/replicas of the time.
    old = same_replica_share(play(replicas, with_a_fresh_id_per_call, chat))
    assert old < 1.0 / replicas + 0.15, old
