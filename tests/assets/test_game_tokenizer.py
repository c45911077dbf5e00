"""The agent's own tokenizer: small, lossless on any text, and the same chat structure as Qwen2.5's."""

from __future__ import annotations

import pytest

from strata.assets.tokenizer import build_game_tokenizer
from strata.workflow.chat import ChatTokens

CORPUS = ["You arrive at cabinet 1. The cabinet 1 is closed.", "<action>go to countertop 2</action>",
          "look for the mug in drawer 1, countertop 1; take it to the shelf and put it there."] * 50


@pytest.fixture(scope="module")
def game_tokenizer(tmp_path_factory):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(build_game_tokenizer(tmp_path_factory.mktemp("tok"), CORPUS, 400))


def test_it_is_small_and_lossless_on_text_it_never_saw(game_tokenizer):
    assert len(game_tokenizer) <= 400
    for text in [*CORPUS[:3], "Ünïcode, tabs\tand 12345 — never in the corpus", "  two  spaces\n\nand lines"]:
        assert game_tokenizer.decode(game_tokenizer.encode(text, add_special_tokens=False)) == text
    # The corpus is cheap: words it was trained on take a few tokens, not one per byte.
    assert len(game_tokenizer.encode("go to countertop 2", add_special_tokens=False)) < len("go to countertop 2") / 2


def test_it_renders_the_qwen25_chat_and_the_rollouts_turns(game_tokenizer, qwen_tokenizer):
    messages = [{"role": "user", "content": "Task: put a mug in shelf"}]
    render = [t.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
              for t in (game_tokenizer, qwen_tokenizer)]
    assert render[0] == render[1]
    assert (game_tokenizer.eos_token, game_tokenizer.pad_token) == ("<|im_end|>", "<|endoftext|>")
    chat, qwen = ChatTokens(game_tokenizer), ChatTokens(qwen_tokenizer)
    assert chat.template == qwen.template
    response = game_tokenizer.encode("<action>look</action>", add_special_tokens=False) + [game_tokenizer.eos_token_id]
    turn = chat.environment_turn(response, "Observation: nothing")
    assert game_tokenizer.decode(response + turn) == ("<action>look</action><|im_end|>\n<|im_start|>user\n"
                                                      "Observation: nothing<|im_end|>\n<|im_start|>assistant\n")
