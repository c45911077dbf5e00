"""Every recipe's exact command line composes and validates as verl does at start-up (DRY_RUN=1), so a
typo or a missing key in a recipe fails CI; the GPU recipes themselves cannot run here."""

from __future__ import annotations

import pytest

from strata.report.config_diff import INFRASTRUCTURE, diff_configs
from strata.report.config_resolve import flatten
from tests.recipes.resolved import RECIPES, resolve


@pytest.mark.parametrize("recipe", [r for r in RECIPES if r.startswith("train-strata")])
def test_training_recipes_resolve(recipe):
    config = resolve(recipe)
    assert config["trainer"]["v1"]["trainer_mode"] == "strata"
    assert config["actor_rollout_ref"]["rollout"]["n"] == 1
    assert config["strata"]["num_stras_per_run"] >= 1


@pytest.mark.parametrize("recipe", [r for r in RECIPES if r.startswith("evaluate-strata")])
def test_evaluation_recipes_resolve_to_the_spec_protocol(recipe):
    config = resolve(recipe, "/ckpt/global_step_150", "3")
    assert config["trainer"]["val_only"] is True
    assert config["trainer"]["resume_from_path"] == "/ckpt/global_step_150"
    assert config["actor_rollout_ref"]["rollout"]["seed"] == 3
    val = config["actor_rollout_ref"]["rollout"]["val_kwargs"]
    assert (val["temperature"], val["top_p"], val["top_k"], val["n"]) == (0.7, 0.8, 20, 1)
    assert config["env"]["max_steps"] == 50
    assert config["data"]["val_files"].endswith("valid_seen.parquet")


def test_the_gpu_recipes_differ_only_in_infrastructure():
    small = flatten(resolve("train-strata-alfworld-text-qwen2.5-1.5b.sh"))
    large = flatten(resolve("train-strata-alfworld-text-qwen2.5-7b.sh"))
    diff = diff_configs(small, large, "1.5b", "7b")
    assert diff.deltas, "the recipes should differ in GPU count and offload"
    assert {d.kind for d in diff.deltas} == {INFRASTRUCTURE}, diff.to_markdown()


# Model facts for the rollout sizing check (config.json of the Qwen2.5-Instruct models; bf16 everywhere).
GiB = 2**30
A100_BYTES = 80 * GiB
ACTIVATION_RESERVE_BYTES = 3 * GiB  # per GPU: vLLM's profiled activations, CUDA graphs, sampler buffers
FIRST_PROMPT_TOKENS = 1_000  # an episode's first action prompt (strategy prompt, task, first observation)
MODELS = {  # recipe: (parameters, layers, KV heads, head dim, CPU cores of its node)
    "train-strata-alfworld-text-qwen2.5-1.5b.sh": (1.54e9, 28, 2, 128, 64),  # 2x A100
    "train-strata-alfworld-text-qwen2.5-7b.sh": (7.62e9, 28, 4, 128, 128),  # 8x A100
}


@pytest.mark.parametrize("recipe", sorted(MODELS))
def test_gpu_recipe_kv_cache_holds_its_running_episodes(recipe):
    """vLLM's KV cache on an 80 GB A100 holds every sequence a replica runs at once at an average episode
    context: an episode grows from its first prompt to the row budget, so it holds their mean on average."""
    config = resolve(recipe)
    params, layers, kv_heads, head_dim, cores = MODELS[recipe]
    rollout, strata = config["actor_rollout_ref"]["rollout"], config["strata"]
    tp = rollout["tensor_model_parallel_size"]
    replicas = config["trainer"]["n_gpus_per_node"] * config["trainer"]["nnodes"] // tp
    episodes = config["data"]["train_batch_size"] * strata["num_stras_per_run"] * strata["num_trajs_per_stra"]
    running = min(rollout["max_num_seqs"], episodes // replicas)

    kv_bytes_per_token_per_gpu = 2 * layers * kv_heads * head_dim * 2 // tp
    free_per_gpu = rollout["gpu_memory_utilization"] * A100_BYTES - params * 2 / tp - ACTIVATION_RESERVE_BYTES
    tokens = free_per_gpu / kv_bytes_per_token_per_gpu
    average_context = (FIRST_PROMPT_TOKENS + config["data"]["max_prompt_length"]
                       + config["data"]["max_response_length"]) / 2
    assert tokens >= running * average_context, (tokens, running, average_context)
    assert rollout["enable_prefix_caching"] is True  # an episode's turns reuse its cached prefix
    # Game processes: no more than the node's cores (the engine is CPU-bound), each holding several episodes.
    processes = rollout["agent"]["num_workers"] * config["env"]["num_workers"]
    assert processes <= cores and episodes >= processes, (processes, cores, episodes)
