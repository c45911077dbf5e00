"""A generation server on plain `transformers`, speaking verl's token-in/token-out protocol.

verl 0.9.1 generates only through rollout *servers* (vLLM, SGLang, TensorRT-LLM), all GPU-only. This
server answers the same ``generate(request_id, prompt_ids, sampling_params) -> TokenOutput`` call
with a KV-cached sampling loop over a Hugging Face causal LM, so the whole verl pipeline (agent
loops, load balancer, weight sync) runs unchanged on a CPU.

Log-probs: for each sampled token the server returns ``log softmax(logits / T)`` at that token,
the quantity verl's actor recomputes (it divides logits by the rollout temperature too), before any
top-k/top-p truncation. Greedy decoding (``temperature == 0``) reports ``log softmax(logits)``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import torch
from verl.workers.rollout.replica import TokenOutput

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SamplingSettings:
    """The sampling parameters the server honours, normalised from verl's ``sampling_params`` dict.

    Args:
        max_tokens: new tokens to generate at most (capped by the server's response length).
        temperature: 0 means greedy decoding.
        top_p: nucleus mass kept (1.0 keeps all).
        top_k: tokens kept by probability rank; 0 or -1 keeps all (vLLM's convention is -1).
        want_logprobs: whether to return per-token log-probs (verl's ``logprobs`` key).
        seed: this request's own sampling seed (vLLM's per-request ``seed``); None uses the server's stream.
    """

    max_tokens: int
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    want_logprobs: bool = False
    seed: int | None = None

    @classmethod
    def from_verl(cls, params: dict[str, Any], default_max_tokens: int) -> SamplingSettings:
        max_tokens = params.get("max_tokens") or params.get("max_new_tokens") or default_max_tokens
        return cls(
            max_tokens=max(1, min(int(max_tokens), default_max_tokens)),
            temperature=float(params.get("temperature", 1.0) or 0.0),
            top_p=float(params.get("top_p", 1.0) if params.get("top_p") is not None else 1.0),
            top_k=int(params.get("top_k", -1) if params.get("top_k") is not None else -1),
            want_logprobs=bool(params.get("logprobs", False)),
            seed=None if params.get("seed") is None else int(params["seed"]),
        )


def kept_tokens(logits: torch.Tensor, top_k: int, top_p: float) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The logits of the tokens that survive top-k, then the top-p nucleus, and their ids; shape [V] in.

    Returns ``(logits, None)`` when nothing is filtered (the ids are then the positions). The nucleus keeps
    the smallest prefix of tokens (by descending probability) whose mass reaches ``top_p``; the most
    likely token is always kept. Only the k kept logits are sorted when top-k applies (Qwen's evaluation
    setting, k=20), not the whole 151k-token vocabulary.
    """
    vocab = logits.shape[-1]
    k = top_k if 0 < top_k < vocab else vocab
    if k == vocab and top_p >= 1.0:
        return logits, None
    values, ids = torch.topk(logits, k)  # sorted, descending
    if top_p < 1.0:
        probs = torch.softmax(values, dim=-1)
        keep = probs.cumsum(dim=-1) - probs < top_p  # the mass before this token is not yet enough
        values, ids = values[keep], ids[keep]
    return values, ids


def sample_index(logits: torch.Tensor, generator: torch.Generator) -> int:
    """An index drawn with probability softmax(logits), by inverting the cumulative distribution.

    ``torch.multinomial`` over a 151k-entry vector takes ~6 ms on a CPU, longer than a forward pass of
    the tiny model; a cumulative sum and a binary search take ~0.3 ms.
    """
    cumulative = torch.softmax(logits, dim=-1).cumsum(dim=-1)
    draw = torch.rand(1, generator=generator, dtype=cumulative.dtype) * cumulative[-1]
    return min(int(torch.searchsorted(cumulative, draw, right=True)), logits.shape[-1] - 1)


def choose_token(
    logits: torch.Tensor, settings: SamplingSettings, generator: torch.Generator
) -> tuple[int, float]:
    """Pick the next token from last-position logits [V]; return it and its log-prob (see module doc)."""
    logits = logits.float()
    if settings.temperature <= 0.0:
        token = int(torch.argmax(logits))
        return token, float(torch.log_softmax(logits, dim=-1)[token])
    scaled = logits / settings.temperature
    values, ids = kept_tokens(scaled, settings.top_k, settings.top_p)
    index = sample_index(values, generator)
    token = index if ids is None else int(ids[index])
    return token, float(scaled[token] - torch.logsumexp(scaled, dim=-1))


class HFGenerationServer:
    """One model replica serving ``generate`` calls; runs as a Ray actor (see `strata.backends.hf_rollout`).

    Args:
        model_path: a Hugging Face model folder.
        response_length: the per-response token budget (verl's ``rollout.response_length``).
        seed: seeds the generator of requests that bring no ``seed`` of their own.
        attn_implementation: passed to ``from_pretrained``; ``sdpa`` works everywhere.
    """

    def __init__(self, model_path: str, response_length: int, seed: int = 0, attn_implementation: str = "sdpa"):
        from transformers import AutoModelForCausalLM

        self.model = AutoModelForCausalLM.from_pretrained(
            model_path, dtype=torch.float32, attn_implementation=attn_implementation
        ).eval()
        self.response_length = response_length
        eos = self.model.generation_config.eos_token_id
        if eos is None:
            eos = self.model.config.eos_token_id
        self.stop_token_ids = set(eos if isinstance(eos, list) else [eos])
        self.generator = torch.Generator().manual_seed(seed)
        self.weights_version: int | None = None

    def load_weights(self, state_dict: dict[str, torch.Tensor], global_steps: int | None = None) -> dict:
        """Replace the model weights (the trainer pushes them after every update)."""
        missing, unexpected = self.model.load_state_dict(state_dict, strict=False)
        # Tied embeddings: lm_head.weight is the embedding and never sent separately.
        missing = [k for k in missing if not (k == "lm_head.weight" and self.model.config.tie_word_embeddings)]
        if missing or unexpected:
            raise ValueError(f"weight update does not match the model: missing={missing} unexpected={unexpected}")
        self.weights_version = global_steps
        return {"num_tensors": len(state_dict), "global_steps": global_steps}

    @torch.no_grad()
    def generate(
        self, request_id: str = "", prompt_ids: list[int] | None = None,
        sampling_params: dict[str, Any] | None = None, **unused: Any,
    ) -> TokenOutput:
        """Sample a continuation of ``prompt_ids``; stop at an end-of-sequence token or the token budget."""
        settings = SamplingSettings.from_verl(sampling_params or {}, self.response_length)
        input_ids = torch.tensor([list(prompt_ids or [])], dtype=torch.long)
        generator = self.generator if settings.seed is None else torch.Generator().manual_seed(settings.seed)
        tokens: list[int] = []
        logprobs: list[float] = []
        past = None
        for _ in range(settings.max_tokens):
            # Only the last position's logits are needed: over a 151k vocabulary, the full prompt's logits
            # would cost ~20x the rest of a 500-token prefill on a small model.
            out = self.model(input_ids=input_ids, past_key_values=past, use_cache=True, logits_to_keep=1)
            past = out.past_key_values
            token, logprob = choose_token(out.logits[0, -1], settings, generator)
            tokens.append(token)
            logprobs.append(logprob)
            if token in self.stop_token_ids:
                break
            input_ids = torch.tensor([[token]], dtype=torch.long)
        return TokenOutput(
            token_ids=tokens,
            log_probs=logprobs if settings.want_logprobs else None,
            # vLLM reports "completed" for both a stop token and the length limit; so does this server,
            # so callers detect truncation the same way on CPU and GPU (no stop token at the end).
            stop_reason="completed",
            num_preempted=0,
            extra_fields={"global_steps": self.weights_version},
        )

    # Lifecycle calls verl's replica makes on every server; a CPU model has no cache to free.
    def wake_up(self) -> None: ...
    def sleep(self) -> None: ...
    def clear_kv_cache(self) -> None: ...
    def release_kv_cache(self) -> None: ...
    def resume_kv_cache(self) -> None: ...
    def abort_all_requests(self, reject_request: bool = False) -> None: ...
    def resume_generation(self) -> None: ...
    def start_profile(self, **kwargs: Any) -> None: ...
    def stop_profile(self) -> None: ...
