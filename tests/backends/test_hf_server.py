"""The `hf` generation server against plain transformers: log-probs, sampling controls, stopping."""

from __future__ import annotations

import pytest
import torch

from strata.backends.hf_server import HFGenerationServer, SamplingSettings, choose_token, kept_tokens, sample_index

PROMPT = [151644, 872, 198, 9707, 0, 151645, 198, 151644, 77091, 198]  # "<|im_start|>user\nHello!..."


@pytest.fixture(scope="module")
def server(tiny_model_dir) -> HFGenerationServer:
    return HFGenerationServer(str(tiny_model_dir), response_length=12, seed=0)


def reference_logprobs(model, prompt: list[int], tokens: list[int], temperature: float) -> torch.Tensor:
    """Log-probs of ``tokens`` after ``prompt`` from one full forward pass (no KV cache)."""
    ids = torch.tensor([prompt + tokens])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, len(prompt) - 1 : -1].float() / temperature
    return torch.log_softmax(logits, -1).gather(-1, torch.tensor(tokens)[:, None])[:, 0]


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_sampled_token_logprobs_match_a_plain_forward_pass(server, temperature):
    out = server.generate(prompt_ids=PROMPT, sampling_params={"temperature": temperature, "logprobs": True})
    assert len(out.token_ids) == 12 and len(out.log_probs) == 12
    expected = reference_logprobs(server.model, PROMPT, out.token_ids, temperature)
    assert torch.allclose(torch.tensor(out.log_probs), expected, atol=1e-4)


def test_logprobs_are_omitted_unless_asked(server):
    assert server.generate(prompt_ids=PROMPT, sampling_params={"temperature": 1.0}).log_probs is None


def test_temperature_zero_is_greedy_and_deterministic(server):
    params = {"temperature": 0, "logprobs": True}
    first = server.generate(prompt_ids=PROMPT, sampling_params=params)
    second = server.generate(prompt_ids=PROMPT, sampling_params=params)
    assert first.token_ids == second.token_ids
    # Greedy: each token is the argmax after the prefix so far.
    ids = torch.tensor([PROMPT + first.token_ids])
    with torch.no_grad():
        logits = server.model(input_ids=ids).logits[0, len(PROMPT) - 1 : -1]
    assert logits.argmax(-1).tolist() == first.token_ids


def test_top_k_one_equals_greedy(server):
    greedy = server.generate(prompt_ids=PROMPT, sampling_params={"temperature": 0})
    top1 = server.generate(prompt_ids=PROMPT, sampling_params={"temperature": 1.5, "top_k": 1})
    assert top1.token_ids == greedy.token_ids


def test_temperature_widens_and_top_p_narrows_the_distribution(server):
    def distinct_first_tokens(params: dict) -> int:
        params = {**params, "max_tokens": 1}
        return len({server.generate(prompt_ids=PROMPT, sampling_params=params).token_ids[0] for _ in range(40)})

    # A random tiny model is close to uniform over 151k tokens: at T=1 nearly every draw differs.
    assert distinct_first_tokens({"temperature": 1.0}) >= 35
    assert distinct_first_tokens({"temperature": 1.0, "top_k": 3}) <= 3
    assert distinct_first_tokens({"temperature": 1e-6}) == 1
    assert distinct_first_tokens({"temperature": 1.0, "top_p": 1e-6}) == 1


def test_max_tokens_and_stop_tokens_end_generation(server):
    assert len(server.generate(prompt_ids=PROMPT, sampling_params={"max_tokens": 3}).token_ids) == 3
    greedy_first = server.generate(prompt_ids=PROMPT, sampling_params={"temperature": 0}).token_ids[0]
    server.stop_token_ids.add(greedy_first)
    try:
        out = server.generate(prompt_ids=PROMPT, sampling_params={"temperature": 0})
    finally:
        server.stop_token_ids.discard(greedy_first)
    assert out.token_ids == [greedy_first]
    assert out.stop_reason == "completed"


def test_load_weights_changes_generation_and_rejects_foreign_weights(server):
    before = server.generate(prompt_ids=PROMPT, sampling_params={"temperature": 0}).token_ids
    original = {k: v.clone() for k, v in server.model.state_dict().items() if k != "lm_head.weight"}
    torch.manual_seed(1)
    perturbed = {k: v + 0.5 * torch.randn_like(v) for k, v in original.items()}
    try:
        info = server.load_weights(perturbed, global_steps=3)
        after = server.generate(prompt_ids=PROMPT, sampling_params={"temperature": 0})
        assert after.token_ids != before
        assert info["global_steps"] == 3 and after.extra_fields["global_steps"] == 3
        with pytest.raises(ValueError, match="unexpected"):
            server.load_weights({"not.a.weight": torch.zeros(1)})
    finally:
        server.load_weights(original)
    assert server.generate(prompt_ids=PROMPT, sampling_params={"temperature": 0}).token_ids == before


def test_kept_tokens_by_hand():
    logits = torch.log(torch.tensor([0.15, 0.5, 0.05, 0.3]))

    def kept(top_k: int, top_p: float) -> list[int]:
        values, ids = kept_tokens(logits, top_k, top_p)
        assert torch.equal(values, logits[ids])
        return ids.tolist()

    assert kept(top_k=2, top_p=1.0) == [1, 3]  # the two largest, most likely first
    assert kept(top_k=-1, top_p=0.8) == [1, 3]  # 0.5 < 0.8, 0.5+0.3 = 0.8 reaches it
    assert kept(top_k=-1, top_p=0.81) == [1, 3, 0]  # needs the third token too
    assert kept(top_k=1, top_p=0.5) == [1]
    values, ids = kept_tokens(logits, top_k=0, top_p=1.0)  # nothing filtered
    assert ids is None and values is logits


def test_sample_index_follows_the_softmax():
    probs = torch.tensor([0.1, 0.0, 0.6, 0.3])
    generator = torch.Generator().manual_seed(0)
    counts = torch.bincount(torch.tensor([sample_index(torch.log(probs), generator) for _ in range(4000)]),
                            minlength=4)
    assert counts[1] == 0  # a zero-probability entry is never drawn
    assert torch.allclose(counts / 4000, probs, atol=0.03)


def test_choose_token_reports_unfiltered_tempered_logprob():
    logits = torch.tensor([2.0, 1.0, 0.0])
    settings = SamplingSettings(max_tokens=1, temperature=0.5, top_k=1)
    token, logprob = choose_token(logits, settings, torch.Generator().manual_seed(0))
    assert token == 0
    assert logprob == pytest.approx(float(torch.log_softmax(logits / 0.5, -1)[0]), abs=1e-6)


def test_sampling_settings_cap_max_tokens_at_the_response_length():
    assert SamplingSettings.from_verl({"max_tokens": 99}, default_max_tokens=12).max_tokens == 12
    assert SamplingSettings.from_verl({}, default_max_tokens=12).max_tokens == 12
    assert SamplingSettings.from_verl({"top_k": None, "top_p": None}, 5).top_k == -1


def test_a_request_seed_repeats_its_sample_whatever_came_before(server):
    params = {"temperature": 1.0, "seed": 1234}
    first = server.generate(prompt_ids=PROMPT, sampling_params=params).token_ids
    server.generate(prompt_ids=PROMPT, sampling_params={"temperature": 1.0})  # advances the server's own stream
    assert server.generate(prompt_ids=PROMPT, sampling_params=params).token_ids == first
    others = {tuple(server.generate(prompt_ids=PROMPT, sampling_params={"temperature": 1.0, "seed": s}).token_ids)
              for s in range(5)}
    assert len(others) > 1  # different seeds, different samples
