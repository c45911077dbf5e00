"""`strata.checkpoint.lora` on hand-made PEFT-style state dicts: names, the merge formula, refusals."""

from __future__ import annotations

import json

import pytest
import torch

from strata.checkpoint.inspect import CheckpointError, describe_checkpoint
from strata.checkpoint.lora import LoraMeta, adapted_layers, merged_tensors, plain_key, read_lora_meta

LAYER = "base_model.model.model.layers.0.self_attn.q_proj"


def peft_state(out_features: int = 4, in_features: int = 3, rank: int = 2) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    return {
        "base_model.model.model.embed_tokens.weight": torch.randn(5, in_features, generator=generator),
        f"{LAYER}.base_layer.weight": torch.randn(out_features, in_features, generator=generator),
        f"{LAYER}.base_layer.bias": torch.randn(out_features, generator=generator),
        f"{LAYER}.lora_A.default.weight": torch.randn(rank, in_features, generator=generator),
        f"{LAYER}.lora_B.default.weight": torch.randn(out_features, rank, generator=generator),
    }


def test_plain_names_drop_the_peft_wrapping():
    assert plain_key(f"{LAYER}.base_layer.weight") == "model.layers.0.self_attn.q_proj.weight"
    assert plain_key("base_model.model.lm_head.weight") == "lm_head.weight"
    assert plain_key("model.norm.weight") == "model.norm.weight"  # a full fine-tune's names are unchanged


def test_the_merge_is_w_plus_alpha_over_r_times_b_a():
    state = peft_state()
    merged = dict(merged_tensors(state, state.__getitem__, LoraMeta(rank=2, alpha=8)))
    assert set(merged) == {"model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight",
                           "model.layers.0.self_attn.q_proj.bias"}
    expected = state[f"{LAYER}.base_layer.weight"] + 4.0 * state[f"{LAYER}.lora_B.default.weight"] @ state[
        f"{LAYER}.lora_A.default.weight"]
    torch.testing.assert_close(merged["model.layers.0.self_attn.q_proj.weight"], expected)
    assert torch.equal(merged["model.layers.0.self_attn.q_proj.bias"], state[f"{LAYER}.base_layer.bias"])


@pytest.mark.parametrize(("drop", "add", "message"), [
    (f"{LAYER}.lora_B.default.weight", None, "without both A and B"),
    (None, f"{LAYER}.lora_magnitude_vector.default.weight", "only linear LoRA layers"),
    (None, f"{LAYER}.lora_A.second.weight", "only linear LoRA layers"),
])
def test_an_adapter_it_cannot_merge_is_refused(drop, add, message):
    state = peft_state()
    state.pop(drop, None)
    if add:
        state[add] = torch.zeros(1)
    with pytest.raises(ValueError, match=message):
        adapted_layers(state)


def test_a_wrapped_layer_without_its_adapter_is_refused():
    state = {key: value for key, value in peft_state().items() if ".lora_" not in key}
    with pytest.raises(ValueError, match="no lora_A / lora_B"):
        list(merged_tensors(state, state.__getitem__, LoraMeta(rank=2, alpha=2)))


def test_lora_metadata_is_read_and_a_damaged_file_named(tmp_path):
    assert read_lora_meta(tmp_path) is None
    (tmp_path / "lora_train_meta.json").write_text(json.dumps({"r": 64, "lora_alpha": 32, "task_type": "CAUSAL_LM"}))
    meta = read_lora_meta(tmp_path)
    assert meta == LoraMeta(64, 32) and meta.scale == 0.5
    (tmp_path / "lora_train_meta.json").write_text("{}")
    with pytest.raises(ValueError, match="lora_train_meta.json does not hold"):
        read_lora_meta(tmp_path)


def test_inspect_reports_a_damaged_lora_metadata_file(tmp_path):
    actor = tmp_path / "global_step_3/actor"
    actor.mkdir(parents=True)
    (actor / "lora_train_meta.json").write_text('{"r": 0, "lora_alpha": 16}')
    with pytest.raises(CheckpointError, match="rank 0 and alpha 16"):
        describe_checkpoint(tmp_path / "global_step_3")
