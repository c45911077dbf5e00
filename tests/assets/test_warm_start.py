"""The warm start trains on exactly the token sequences the rollout produces, with an exact, cheaper loss."""

from __future__ import annotations

import asyncio

import pytest
import torch

from strata.assets.warm_start import backward_in_parts, magic_word_examples, response_loss, warm_start
from strata.core.config import StrataConfig
from strata.core.prompting import load_prompt_templates
from strata.envs.magic_word.game import MagicWordEnv, load_game, write_games, write_prompt_preset
from strata.workflow.chat import ChatTokens
from strata.workflow.episode import EpisodeLimits
from strata.workflow.group import GroupShape, rollout_task
from strata.workflow.policy import Policy

WORD = "tiger"


class RecordingServer:
    """Answers like a perfectly warm-started model that picked WORD, and records every prompt it gets."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.prompts: list[list[int]] = []

    async def generate(self, request_id, prompt_ids, sampling_params):
        from verl.workers.rollout.replica import TokenOutput

        self.prompts.append(list(prompt_ids))
        tag = "strategy" if len(self.prompts) == 1 else "action"
        ids = self.tokenizer.encode(f"<{tag}>say {WORD}</{tag}>", add_special_tokens=False)
        ids.append(self.tokenizer.eos_token_id)
        return TokenOutput(token_ids=ids, log_probs=[-0.1] * len(ids), stop_reason="completed")


@pytest.fixture(scope="module")
def game_setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("magic-word")
    templates = load_prompt_templates(str(write_prompt_preset(root / "prompts.yaml")))
    return templates, write_games(root / "games", "train", 3)


def test_examples_are_the_rollouts_own_sequences(qwen_tokenizer, game_setup):
    templates, tasks = game_setup
    server = RecordingServer(qwen_tokenizer)
    policy = Policy(server, ChatTokens(qwen_tokenizer), {"temperature": 1.0}, 24)
    limits = EpisodeLimits(max_steps=1, response_budget=256, prompt_tokens=512)
    shape = GroupShape.evaluation(StrataConfig())
    rollout = asyncio.run(rollout_task(tasks[0], shape, policy, MagicWordEnv(max_steps=1), templates, limits,
                                       embedder=None))
    trajectory = rollout.strategies[0].trajectories[0]
    assert trajectory.won == (load_game(tasks[0].game_file).magic_word == WORD)

    strategies, actions = magic_word_examples(qwen_tokenizer, [load_game(tasks[0].game_file)], templates)
    words = load_game(tasks[0].game_file).words
    assert len(strategies) == len(actions) == len(words)
    strategy_example, action_example = strategies[words.index(WORD)], actions[words.index(WORD)]
    strategy_generation = rollout.strategies[0].candidate.generation
    assert strategy_example.prompt_ids == server.prompts[0] == strategy_generation.prompt_ids
    assert strategy_example.response_ids == strategy_generation.token_ids
    assert action_example.prompt_ids == server.prompts[1] == trajectory.prompt_ids
    assert action_example.response_ids == trajectory.steps[0].generation.token_ids
    # Every word once per game: the strategy word is uniform, and the action always follows it.
    assert {qwen_tokenizer.decode(e.response_ids, skip_special_tokens=True) for e in strategies} == {
        f"<strategy>say {w}</strategy>" for w in words}


def test_response_loss_is_the_full_models_cross_entropy_on_response_tokens(
        qwen_tokenizer, tiny_model_dir, game_setup):
    from transformers import AutoModelForCausalLM

    templates, tasks = game_setup
    strategies, actions = magic_word_examples(qwen_tokenizer, [load_game(t.game_file) for t in tasks], templates)
    batch = [strategies[0], actions[5], strategies[7]]  # different lengths: padding must not matter
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32).eval()
    with torch.no_grad():
        losses = []
        for example in batch:
            logits = model(torch.tensor([example.prompt_ids + example.response_ids])).logits[0]
            start = len(example.prompt_ids)
            predicted = logits[start - 1 : start - 1 + len(example.response_ids)]
            losses.append(torch.nn.functional.cross_entropy(predicted, torch.tensor(example.response_ids),
                                                            reduction="sum"))
        expected = sum(losses) / sum(len(e.response_ids) for e in batch)
        assert response_loss(model, batch, qwen_tokenizer.pad_token_id).item() == pytest.approx(
            expected.item(), rel=1e-4)


def test_a_batch_in_parts_has_the_whole_batch_s_loss_and_gradient(qwen_tokenizer, tiny_model_dir, game_setup):
    """Each part padded to its own length, the gradients added: the padded whole batch's mean, to float order."""
    from transformers import AutoModelForCausalLM

    templates, tasks = game_setup
    strategies, actions = magic_word_examples(qwen_tokenizer, [load_game(t.game_file) for t in tasks], templates)
    parts = [[actions[0], actions[5], actions[9]], [], [strategies[2]]]  # lengths differ between the parts
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32).train()
    whole = response_loss(model, [e for part in parts for e in part], qwen_tokenizer.pad_token_id)
    whole.backward()
    expected = {name: p.grad.clone() for name, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    assert backward_in_parts(model, parts, qwen_tokenizer.pad_token_id) == pytest.approx(whole.item(), rel=1e-5)
    for name, parameter in model.named_parameters():
        torch.testing.assert_close(parameter.grad, expected[name], rtol=1e-4, atol=1e-7, msg=name)


def test_warm_start_is_deterministic_and_saves_a_loadable_model(tiny_model_dir, game_setup, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    templates, tasks = game_setup
    first = warm_start(tiny_model_dir, tmp_path / "a", tasks, steps=3, batch_size=4, templates=templates)
    second = warm_start(tiny_model_dir, tmp_path / "b", tasks, steps=3, batch_size=4, templates=templates)
    a, b, start = (AutoModelForCausalLM.from_pretrained(p).state_dict() for p in (first, second, tiny_model_dir))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert any(not torch.equal(a[k], start[k]) for k in a)
    assert AutoTokenizer.from_pretrained(first).eos_token == "<|im_end|>"
