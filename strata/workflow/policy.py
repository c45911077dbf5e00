"""The policy as the rollout sees it: prompt tokens in, a `Generation` out, through verl's server manager.

All three generations (strategy, action, judge) go through the same rollout servers (vLLM on GPU,
`hf` on CPU) with the same weights; many requests are in flight at once, one per live episode.

Each named *stream* (`Policy.stream`: one per strategy candidate, one per episode with its judgment)
sends all its calls under one request id. verl's load balancer keeps a request id on the replica that
served it first (a sticky session), so an episode's turns stay where their prefix is cached; a fresh id
per call would let every turn land on any replica (half of them elsewhere with 2 replicas, 3/4 with 4)
and re-prefill the whole conversation. verl still gives vLLM a fresh request id per call.

With ``seeded`` (``strata.seeded_sampling``), every request also carries a sampling ``seed`` derived from
its stream and the call's position in it, so the same run seed gives the same responses however requests
interleave, and a resumed run repeats the uninterrupted one (`strata.core.seeding`).
"""

from __future__ import annotations

from typing import Any
from uuid import uuid4

from strata.core.seeding import derive_seed
from strata.workflow.chat import ChatTokens
from strata.workflow.records import Generation


class Policy:
    """Generates one response per call.

    Args:
        server_manager: verl's ``LLMServerClient`` (anything with ``async generate(request_id, prompt_ids,
            sampling_params)`` returning a ``TokenOutput``).
        chat: the tokenizer's chat helpers.
        sampling_params: verl's sampling parameters for this phase (training or validation).
        max_tokens: L_max, the per-response token budget.
        seed: the seed of this stream; the n-th call samples with ``derive_seed(seed, n)``.
        seeded: send that seed with every request (exact resume); False leaves sampling to the server's own
            random stream, which on vLLM keeps its batched sampler (``strata.seeded_sampling``).

    Attributes:
        request_id: this stream's request id, unique to this object (a new stream gets a new one), so
            no two episodes, tasks or steps share a sticky session.
    """

    def __init__(self, server_manager: Any, chat: ChatTokens, sampling_params: dict[str, Any], max_tokens: int,
                 seed: int = 0, seeded: bool = True):
        self.server_manager = server_manager
        self.chat = chat
        self.sampling_params = {**sampling_params, "max_tokens": max_tokens, "logprobs": True}
        self.max_tokens = max_tokens
        self.seed = seed
        self.seeded = seeded
        self.request_id = uuid4().hex
        self._calls = 0

    def stream(self, name: str) -> Policy:
        """The same policy with its own stream: its own request id (one replica serves all its calls) and
        its own numbering of calls, so its seeds do not depend on how they interleave with other streams'.
        A stream's calls must be sequential (one episode's turns, then its judgment), as an episode's are."""
        return Policy(self.server_manager, self.chat, self.sampling_params, self.max_tokens,
                      derive_seed(self.seed, name), self.seeded)

    async def generate(self, prompt_ids: list[int], max_tokens: int | None = None) -> Generation:
        """Sample a response to ``prompt_ids`` with at most ``max_tokens`` (default: L_max) new tokens."""
        params = dict(self.sampling_params)
        if self.seeded:
            params["seed"] = derive_seed(self.seed, self._calls)
        self._calls += 1
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        output = await self.server_manager.generate(
            request_id=self.request_id, prompt_ids=prompt_ids, sampling_params=params
        )
        tokens = list(output.token_ids)
        limit = params["max_tokens"]
        # vLLM and the hf server both report "completed" at the length limit: truncation is "no stop token".
        truncated = len(tokens) >= limit and (not tokens or tokens[-1] not in self.chat.stop_token_ids)
        return Generation(
            prompt_ids=list(prompt_ids),
            token_ids=tokens,
            logprobs=list(output.log_probs) if output.log_probs is not None else None,
            text=self.chat.decode(tokens),
            truncated=truncated,
            weights_version=output.extra_fields.get("global_steps"),
        )
