"""The policy as the rollout sees it: prompt tokens in, a `Generation` out, through verl's server manager.

All three generations (strategy, action, judge) go through the same rollout servers (vLLM on GPU,
`hf` on CPU) with the same weights; many requests are in flight at once, one per live episode.

Every request carries a sampling ``seed`` derived from a named *stream* (`Policy.stream`: one per
strategy candidate, one per episode) and the call's position in it, so the same run seed gives the same
responses however requests interleave, and a resumed run repeats the uninterrupted one (`strata.core.seeding`).
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
    """

    def __init__(self, server_manager: Any, chat: ChatTokens, sampling_params: dict[str, Any], max_tokens: int,
                 seed: int = 0):
        self.server_manager = server_manager
        self.chat = chat
        self.sampling_params = {**sampling_params, "max_tokens": max_tokens, "logprobs": True}
        self.max_tokens = max_tokens
        self.seed = seed
        self._calls = 0

    def stream(self, name: str) -> Policy:
        """The same policy with its own seed stream: calls made through it are numbered on their own, so
        their seeds do not depend on how they interleave with other streams' calls."""
        return Policy(self.server_manager, self.chat, self.sampling_params, self.max_tokens,
                      derive_seed(self.seed, name))

    async def generate(self, prompt_ids: list[int], max_tokens: int | None = None) -> Generation:
        """Sample a response to ``prompt_ids`` with at most ``max_tokens`` (default: L_max) new tokens."""
        params = {**self.sampling_params, "seed": derive_seed(self.seed, self._calls)}
        self._calls += 1
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        output = await self.server_manager.generate(
            request_id=uuid4().hex, prompt_ids=prompt_ids, sampling_params=params
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
