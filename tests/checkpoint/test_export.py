"""Export to a Hugging Face folder: loadable by transformers, bf16 weights equal to the FSDP weights."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
import torch
from safetensors import safe_open

import strata.checkpoint.export as export
from strata.checkpoint.export import export_hf
from strata.checkpoint.inspect import CheckpointError, check_resumable, find_latest_checkpoint
from tests.checkpoint.interruptions import interrupt_after


def _safetensors_keys(folder: Path) -> set[str]:
    keys: set[str] = set()
    for file in folder.glob("*.safetensors"):
        with safe_open(file, "pt") as handle:
            assert handle.metadata() == {"format": "pt"}
            keys |= set(handle.keys())
    return keys


@pytest.mark.slow
def test_export_loads_with_transformers_and_matches_fsdp_weights(fsdp_checkpoints, loaded_by_verl,
                                                                 tiny_model_dir, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = export_hf(fsdp_checkpoints[2], tmp_path / "hf")
    assert "lm_head.weight" not in _safetensors_keys(out)  # tied: omitted, as in the Qwen2.5 release
    assert json.loads((out / "config.json").read_text())["dtype"] == "bfloat16"
    assert stat.S_IMODE((out / "model.safetensors").stat().st_mode) == 0o644

    model, info = AutoModelForCausalLM.from_pretrained(out, output_loading_info=True)
    assert info["missing_keys"] == set() and info["unexpected_keys"] == set()
    assert model.dtype == torch.bfloat16
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()  # re-tied on load

    fsdp = loaded_by_verl(fsdp_checkpoints[2], 2)["params"]  # the fp32 weights verl trains
    exported = model.state_dict()
    for name, weight in fsdp.items():
        assert torch.equal(exported[name], weight.to(torch.bfloat16)), name
        # bf16 keeps 8 significant bits: round-to-nearest is off by at most half an ulp, 2^-8 of the value
        assert torch.all((exported[name].float() - weight).abs() <= weight.abs() * 2.0**-8), name
    trained = fsdp["model.layers.0.mlp.up_proj.weight"]
    initial = AutoModelForCausalLM.from_pretrained(tiny_model_dir).state_dict()["model.layers.0.mlp.up_proj.weight"]
    assert not torch.equal(trained, initial)  # the export carries the trained weights, not the initial ones

    tokenizer = AutoTokenizer.from_pretrained(out)
    reference = AutoTokenizer.from_pretrained(tiny_model_dir)
    assert tokenizer.chat_template == reference.chat_template and len(tokenizer) == len(reference)
    assert (out / "generation_config.json").is_file()


@pytest.mark.slow
def test_a_float32_export_holds_the_fsdp_weights_exactly(fsdp_checkpoints, loaded_by_verl, tmp_path: Path) -> None:
    """What DAgger from an RL step trains further (strata.assets.dagger): the weights RL left, not a bf16 copy."""
    from transformers import AutoModelForCausalLM

    out = export_hf(fsdp_checkpoints[2], tmp_path / "hf", dtype=torch.float32)
    assert json.loads((out / "config.json").read_text())["dtype"] == "float32"
    model = AutoModelForCausalLM.from_pretrained(out)
    assert model.dtype == torch.float32
    exported = model.state_dict()
    for name, weight in loaded_by_verl(fsdp_checkpoints[2], 2)["params"].items():
        assert torch.equal(exported[name], weight), name


@pytest.mark.slow
def test_release_layout_holds_resumable_training_state(fsdp_checkpoints, tmp_path: Path) -> None:
    out = export_hf(fsdp_checkpoints[2], tmp_path / "release", release=True)
    state_root = out / "training_state"
    step = find_latest_checkpoint(state_root)
    assert step == state_root / "global_step_1"
    check_resumable(step, world_size=2, dataloader_num_workers=0)
    names = {p.name for p in (step / "actor").iterdir()}
    assert {f"{kind}_world_size_2_rank_{rank}.pt" for kind in ("model", "optim", "extra_state")
            for rank in (0, 1)} <= names
    assert (out / "model.safetensors").is_file() and (out / "tokenizer.json").is_file()


@pytest.mark.slow
def test_sharded_export_writes_an_index(fsdp_checkpoints, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM

    out = export_hf(fsdp_checkpoints[1], tmp_path / "hf", max_shard_size="10MB")
    index = json.loads((out / "model.safetensors.index.json").read_text())
    assert len(set(index["weight_map"].values())) >= 2 and "lm_head.weight" not in index["weight_map"]
    _, info = AutoModelForCausalLM.from_pretrained(out, output_loading_info=True)
    assert info["missing_keys"] == set()


@pytest.mark.slow
def test_untied_head_is_kept(tmp_path: Path, fsdp_writer) -> None:
    from strata.assets import build_tiny_model

    model_dir = build_tiny_model(tmp_path / "untied", seed=1, tie_word_embeddings=False)
    step = tmp_path / "ckpt" / "global_step_1"
    fsdp_writer(model_dir, 1, out=step)
    out = export_hf(step, tmp_path / "hf")
    assert "lm_head.weight" in _safetensors_keys(out)


def test_refuses_a_non_empty_folder(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path / "run", 1)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_text("x")
    with pytest.raises(CheckpointError, match="not empty"):
        export_hf(step, tmp_path / "out")


def test_release_needs_a_complete_step(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path / "run", 1, data=False)
    with pytest.raises(CheckpointError, match="drop --release"):
        export_hf(step, tmp_path / "out", release=True)


@pytest.mark.slow
def test_hf_weights_saved_by_verl_are_not_copied(fsdp_checkpoints, tmp_path: Path) -> None:
    """With save_contents=[..., hf_model] verl also writes weights to huggingface/: the shards are the truth."""
    import shutil

    step = tmp_path / "run" / "global_step_1"
    shutil.copytree(fsdp_checkpoints[1], step)
    for name in ("model-00001-of-00002.safetensors", "model.safetensors.index.json"):
        (step / "actor/huggingface" / name).write_text("stale")
    out = export_hf(step, tmp_path / "hf")
    assert sorted(p.name for p in out.iterdir()) == [
        "chat_template.jinja", "config.json", "generation_config.json", "model.safetensors",
        "tokenizer.json", "tokenizer_config.json"]


def test_an_interrupted_export_leaves_no_model_folder(fsdp_checkpoints, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(export, "write_latest_pointer", interrupt_after(export.write_latest_pointer))
    with pytest.raises(KeyboardInterrupt):  # at the very end of a release: weights, config, training state written
        export.export_hf(fsdp_checkpoints[2], tmp_path / "release", release=True)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    out = export.export_hf(fsdp_checkpoints[2], tmp_path / "release", release=True)  # the same command again
    assert (out / "model.safetensors").is_file() and (out / "training_state" / "global_step_1").is_dir()
    assert [p.name for p in tmp_path.iterdir()] == ["release"]
