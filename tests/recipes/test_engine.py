"""The GPU recipes train on the engine the tests run: FSDP2 actor and reference, and sdpa attention with
verl's remove-padding (rows packed into one sequence), which needs no build on a fresh GPU install."""

from __future__ import annotations

import pytest
import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

from tests.recipes.resolved import RECIPES, recipe_args, resolve

# The CPU learning benchmark's recipe pads its rows: packed rows cost ~3x on a CPU's sdpa (its header says why).
PADDED = {"train-strata-alfworld-agent-cpu.sh"}


@pytest.mark.parametrize("recipe", [r for r in RECIPES if r.startswith(("train-strata", "evaluate-strata"))])
def test_every_strata_recipe_runs_fsdp2_with_sdpa_and_remove_padding(recipe):
    config = resolve(recipe, *recipe_args(recipe))
    actor_rollout_ref = config["actor_rollout_ref"]
    for role in ("actor", "ref"):
        assert actor_rollout_ref[role]["strategy"] == "fsdp2", role
        assert actor_rollout_ref[role]["fsdp_config"]["strategy"] == "fsdp2", role
    assert actor_rollout_ref["model"]["override_config"]["attn_implementation"] == "sdpa"
    assert actor_rollout_ref["model"]["use_remove_padding"] is (recipe not in PADDED)


def test_sdpa_keeps_packed_rows_apart():
    """verl's remove-padding concatenates a micro-batch's rows into one sequence whose position_ids restart
    at every row, and calls the model without a KV cache. transformers then masks each row off from the
    others for sdpa, so a row's logits are the ones it gets alone; without that, sdpa would let every row
    attend to the rows packed before it."""
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, attn_implementation="sdpa")
    model = Qwen2ForCausalLM(config).eval()
    first, second = torch.randint(0, 128, (1, 7)), torch.randint(0, 128, (1, 5))
    packed = torch.cat([first, second], dim=1)
    position_ids = torch.cat([torch.arange(7), torch.arange(5)])[None]
    with torch.no_grad():
        alone = torch.cat([model(first).logits, model(second).logits], dim=1)
        together = model(packed, position_ids=position_ids, use_cache=False).logits
        leaked = model(packed, position_ids=torch.arange(12)[None], use_cache=False).logits
    torch.testing.assert_close(together, alone, atol=1e-5, rtol=1e-5)
    assert (leaked[:, 7:] - alone[:, 7:]).abs().max() > 1e-3  # the check can tell packed from joined rows


def test_the_cpu_benchmark_takes_log_probs_from_the_fused_torch_kernel():
    """Without flash-attn, verl's log-softmax loops over a micro-batch one token at a time; the CPU learning
    benchmark's recipe asks for verl's fused kernel (chunks of tokens) instead. The GPU recipes keep verl's
    default."""
    for recipe in RECIPES:
        if not recipe.startswith(("train-", "evaluate-")):
            continue
        model = resolve(recipe, *recipe_args(recipe))["actor_rollout_ref"]["model"]
        fused = recipe in PADDED
        assert model["use_fused_kernels"] is fused, recipe
        if fused:
            assert model["fused_kernel_options"]["impl_backend"] == "torch"


def test_the_fused_torch_kernel_gives_the_log_probs_and_gradients_of_the_log_softmax():
    """What the benchmark's switch relies on: verl's fused kernel and its per-token log-softmax agree in fp32 on a
    CPU, values and gradients (of the hidden states and of the output layer), for rows longer than one chunk."""
    from verl.utils.experimental.torch_functional import FusedLinearForPPO
    from verl.utils.torch_functional import logprobs_from_logits

    torch.manual_seed(0)
    tokens, width, vocab = 700, 32, 96  # 700 tokens: two chunks of the kernel's 512
    hidden = torch.randn(tokens, width, requires_grad=True)
    weight = torch.randn(vocab, width, requires_grad=True)
    labels = torch.randint(0, vocab, (tokens,))
    direction = torch.randn(tokens)

    fused, _ = FusedLinearForPPO(impl_backend="torch")(hidden, weight, labels)
    (fused * direction).sum().backward()
    fused_grads = hidden.grad.clone(), weight.grad.clone()
    hidden.grad, weight.grad = None, None

    plain = logprobs_from_logits(hidden @ weight.T, labels)
    (plain * direction).sum().backward()

    torch.testing.assert_close(fused, plain, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(fused_grads[0], hidden.grad, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(fused_grads[1], weight.grad, atol=1e-5, rtol=1e-5)
