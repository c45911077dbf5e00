"""Every recipe's exact command line composes and validates as verl does at start-up (DRY_RUN=1), so a
typo or a missing key in a recipe fails CI; the GPU recipes themselves cannot run here."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from strata.report.config_diff import INFRASTRUCTURE, diff_configs
from strata.report.config_resolve import flatten
from tests.recipes.resolved import EVALUATION_ARGS, RECIPES, REPO, recipe_args, resolve


@pytest.mark.parametrize("recipe", [r for r in RECIPES if r.startswith(("train-strata", "train-grpo", "train-gigpo"))])
def test_training_recipes_resolve(recipe):
    config = resolve(recipe)
    assert config["trainer"]["v1"]["trainer_mode"] == "strata"
    assert config["actor_rollout_ref"]["rollout"]["n"] == 1
    assert config["strata"]["num_stras_per_run"] >= 1


def test_an_evaluation_recipe_without_a_checkpoint_says_so_in_one_line():
    done = subprocess.run(["bash", "recipes/evaluate-strata-alfworld-text-qwen2.5-1.5b.sh"], cwd=REPO,
                          capture_output=True, text=True, env={**os.environ, "DRY_RUN": "1"}, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("error: give the checkpoint to evaluate: bash recipes/evaluate-strata-alfworld-text-qwen2.5-"
                           "1.5b.sh CHECKPOINT [SEED] [overrides...] (a training step, .../global_step_N, or an "
                           "exported model folder)\n")


@pytest.mark.parametrize("recipe", [r for r in RECIPES if r.startswith("evaluate-")])
def test_evaluation_recipes_resolve_to_the_spec_protocol(recipe):
    config = resolve(recipe, *EVALUATION_ARGS)
    assert config["trainer"]["val_only"] is True
    assert config["trainer"]["resume_from_path"] == "/ckpt/global_step_150"
    assert config["actor_rollout_ref"]["rollout"]["seed"] == 3
    val = config["actor_rollout_ref"]["rollout"]["val_kwargs"]
    assert (val["temperature"], val["top_p"], val["top_k"], val["n"]) == (0.7, 0.8, 20, 1)
    assert config["env"]["max_steps"] == HORIZONS[config["env"]["name"]]
    assert config["data"]["val_files"].endswith(f"/{EVALUATION_SPLITS[config['env']['name']]}.parquet")
    # The evaluation's config.yaml and episode dumps go to its own folder, never into the training run's.
    assert config["run"]["dir"] != config["trainer"]["default_local_dir"] and config["run"]["dump"]["validation"]


# The split each environment's evaluation recipes evaluate by default: ALFWorld's in-distribution evaluation
# set, ScienceWorld's held-out test variations, WebShop's 500 test goals; and each one's horizon H.
EVALUATION_SPLITS = {"alfworld": "valid_seen", "sciworld": "test", "webshop": "test"}
HORIZONS = {"alfworld": 50, "sciworld": 50, "webshop": 15}


@pytest.mark.parametrize("recipe", [r for r in RECIPES if r.startswith("evaluate-") and "alfworld" in r])
def test_alfworld_evaluations_take_the_unseen_split_with_one_variable(recipe):
    """SPLIT=valid_unseen (134 games in rooms no training game uses) changes the evaluated task list only."""
    seen = flatten(resolve(recipe, *EVALUATION_ARGS))
    unseen = flatten(resolve(recipe, *EVALUATION_ARGS, SPLIT="valid_unseen"))
    assert unseen["data.val_files"].endswith("/valid_unseen.parquet")
    # run.dir is the evaluation's OUT, here the dry-run folder of whichever test worker resolved the recipe first.
    assert {key for key in seen if seen[key] != unseen.get(key)} - {"run.dir"} == {"data.val_files"}


@pytest.mark.parametrize("environment", ["alfworld-text", "sciworld", "webshop"])
def test_the_gpu_recipes_differ_only_in_infrastructure(environment):
    small = flatten(resolve(f"train-strata-{environment}-qwen2.5-1.5b.sh"))
    large = flatten(resolve(f"train-strata-{environment}-qwen2.5-7b.sh"))
    diff = diff_configs(small, large, "1.5b", "7b")
    assert diff.deltas, "the recipes should differ in GPU count and offload"
    assert {d.kind for d in diff.deltas} == {INFRASTRUCTURE}, diff.to_markdown()


# The GRPO baseline (configs/baseline/grpo.yaml): the StraTA recipe minus the strategy level, G = 8 episodes,
# and the environment's strategy-free prompts.
GRPO_KEYS = {"strata.algorithm": "grpo", "strata.num_stras_per_run": 1, "strata.num_cands_per_stra": 1,
             "strata.judge.enable": False}


@pytest.mark.parametrize(("environment", "preset"),
                         [("alfworld-text", "alfworld_grpo"), ("sciworld", "sciworld_grpo"),
                          ("webshop", "webshop_grpo")])
@pytest.mark.parametrize("size", ["1.5b", "7b"])
def test_the_grpo_recipes_are_the_strata_recipes_without_strategies(environment, preset, size):
    strata = flatten(resolve(f"train-strata-{environment}-qwen2.5-{size}.sh"))
    grpo = flatten(resolve(f"train-grpo-{environment}-qwen2.5-{size}.sh"))
    assert grpo["strata.num_trajs_per_stra"] == 8  # G, the paper's GRPO group size
    diff = diff_configs(strata, grpo, "strata", "grpo")
    algorithm = {d.key: d.b for d in diff.deltas if d.kind != INFRASTRUCTURE}
    assert algorithm == {**GRPO_KEYS, "strata.prompts.preset": preset}, diff.to_markdown()
    short = environment.removesuffix("-text")
    assert grpo["trainer.default_local_dir"] == str(REPO / f"checkpoints/grpo-{short}-qwen2.5-{size}")
    assert grpo["trainer.experiment_name"] == f"grpo-{short}-qwen2.5-{size}"


# GiGPO (configs/baseline/gigpo.yaml): the StraTA recipe minus the strategy level, G = 8 episodes, the
# strategy-free prompts, and its own credit keys (strata.gigpo.*, read only under it) and invalid-action handling.
GIGPO_KEYS = {**GRPO_KEYS, "strata.algorithm": "gigpo", "strata.format_penalty": 0.1,
              "strata.penalty_mode": "pre_norm", "strata.length_penalty.threshold": 1.0}


@pytest.mark.parametrize(("environment", "preset"), [("alfworld-text", "alfworld_grpo"), ("webshop", "webshop_grpo")])
@pytest.mark.parametrize("size", ["1.5b", "7b"])
def test_the_gigpo_recipes_differ_from_strata_and_grpo_in_algorithm_keys_only(environment, preset, size):
    strata = flatten(resolve(f"train-strata-{environment}-qwen2.5-{size}.sh"))
    gigpo = flatten(resolve(f"train-gigpo-{environment}-qwen2.5-{size}.sh"))
    diff = diff_configs(strata, gigpo, "strata", "gigpo")
    algorithm = {d.key: d.b for d in diff.deltas if d.kind != INFRASTRUCTURE}
    assert algorithm == {**GIGPO_KEYS, "strata.prompts.preset": preset}, diff.to_markdown()
    assert {k: gigpo[f"strata.gigpo.{k}"] for k in ("gamma", "step_weight", "mode", "episode_stats",
                                                    "reward_scale")} == {
        "gamma": 0.95, "step_weight": 1.0, "mode": "mean_norm", "episode_stats": "steps", "reward_scale": 10.0}
    against_grpo = diff_configs(flatten(resolve(f"train-grpo-{environment}-qwen2.5-{size}.sh")), gigpo, "grpo", "gigpo")
    assert {d.key for d in against_grpo.deltas if d.kind != INFRASTRUCTURE} == {
        "strata.algorithm", "strata.format_penalty", "strata.penalty_mode", "strata.length_penalty.threshold"}
    short = environment.removesuffix("-text")
    assert gigpo["trainer.default_local_dir"] == str(REPO / f"checkpoints/gigpo-{short}-qwen2.5-{size}")
    assert gigpo["trainer.experiment_name"] == f"gigpo-{short}-qwen2.5-{size}"


def test_gigpo_runs_on_sciworld_by_its_baseline_group_alone():
    config = resolve("train-strata-sciworld-qwen2.5-1.5b.sh", "+baseline=gigpo")
    strata = config["strata"]
    assert (strata["algorithm"], strata["prompts"]["preset"]) == ("gigpo", "sciworld_grpo")
    assert strata["num_stras_per_run"] == 1 and strata["judge"]["enable"] is False


# What LoRA changes on top of the full 7B recipe's algorithm: the adapter and its learning rate (the recipe
# says why); every other difference must be infrastructure.
LORA_KEYS = {"actor_rollout_ref.model.lora_rank": 64, "actor_rollout_ref.model.lora_alpha": 64,
             "actor_rollout_ref.actor.optim.lr": 1e-5}


def test_the_lora_recipe_trains_an_adapter_on_the_full_recipes_algorithm():
    full = flatten(resolve("train-strata-alfworld-text-qwen2.5-7b.sh"))
    lora = flatten(resolve("train-strata-alfworld-text-qwen2.5-7b-lora.sh"))
    assert lora["actor_rollout_ref.model.target_modules"] == "all-linear"
    assert lora["actor_rollout_ref.model.lora.merge"] is False  # vLLM gets the adapter, not merged weights
    # vLLM reads the base from the checkpoint; each sync sends only the adapter, one layer at a time.
    assert lora["actor_rollout_ref.rollout.load_format"] == "safetensors"
    assert lora["actor_rollout_ref.rollout.layered_summon"] is True
    assert lora["trainer.n_gpus_per_node"] == 2 and lora["actor_rollout_ref.rollout.tensor_model_parallel_size"] == 2
    assert lora["actor_rollout_ref.actor.use_kl_loss"] is True  # against the base model: the adapter switched off
    diff = diff_configs(full, lora, "7b", "7b-lora")
    algorithm = {d.key: d.b for d in diff.deltas if d.kind != INFRASTRUCTURE}
    assert algorithm == LORA_KEYS, diff.to_markdown()
    assert full["actor_rollout_ref.actor.optim.lr"] * 10 == pytest.approx(LORA_KEYS["actor_rollout_ref.actor.optim.lr"])


def test_the_lora_evaluation_recipe_loads_the_adapter_of_a_lora_checkpoint():
    evaluate = flatten(resolve("evaluate-strata-alfworld-text-qwen2.5-7b-lora.sh", *EVALUATION_ARGS))
    assert {key: evaluate[key] for key in LORA_KEYS if "lora" in key} == {
        key: value for key, value in LORA_KEYS.items() if "lora" in key}
    assert evaluate["trainer.n_gpus_per_node"] == 2


# Model facts for the rollout sizing check (config.json of the Qwen2.5-Instruct models; bf16 everywhere).
GiB = 2**30
A100_BYTES = 80 * GiB
ACTIVATION_RESERVE_BYTES = 3 * GiB  # per GPU: vLLM's profiled activations, CUDA graphs, sampler buffers
FIRST_PROMPT_TOKENS = 1_000  # an episode's first action prompt (strategy prompt, task, first observation)
MODELS = {  # recipe: (parameters, layers, KV heads, head dim, CPU cores of its node)
    "train-strata-alfworld-text-qwen2.5-1.5b.sh": (1.54e9, 28, 2, 128, 64),  # 2x A100
    "train-strata-alfworld-text-qwen2.5-7b.sh": (7.62e9, 28, 4, 128, 128),  # 8x A100
    "train-strata-alfworld-text-qwen2.5-7b-lora.sh": (7.62e9, 28, 4, 128, 64),  # 2x A100
    "train-strata-sciworld-qwen2.5-1.5b.sh": (1.54e9, 28, 2, 128, 64),  # 2x A100
    "train-strata-sciworld-qwen2.5-7b.sh": (7.62e9, 28, 4, 128, 128),  # 8x A100
    "train-strata-webshop-qwen2.5-1.5b.sh": (1.54e9, 28, 2, 128, 64),  # 2x A100
    "train-strata-webshop-qwen2.5-7b.sh": (7.62e9, 28, 4, 128, 128),  # 8x A100
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


@pytest.mark.parametrize("recipe", [r for r in RECIPES if "-sciworld-" in r])
def test_sciworld_recipes_play_sciworld_with_its_prompts(recipe):
    config = resolve(recipe, *recipe_args(recipe))
    preset = "sciworld_grpo" if "-grpo-" in recipe else "sciworld"
    assert config["env"]["name"] == "sciworld" and config["strata"]["prompts"]["preset"] == preset
    # AgentGym's reward (the simulator's score as the episode left it, /100), which the StraTA code trains on;
    # env.reward=success is the spec's outcome reward.
    assert config["env"]["reward"] == "final_score"


@pytest.mark.parametrize("recipe", [r for r in RECIPES if "-webshop-" in r])
def test_webshop_recipes_play_webshop_with_its_prompts(recipe):
    config = resolve(recipe, *recipe_args(recipe))
    preset = "webshop_grpo" if "-grpo-" in recipe or "-gigpo-" in recipe else "webshop"
    assert config["env"]["name"] == "webshop" and config["strata"]["prompts"]["preset"] == preset
    assert config["env"]["max_steps"] == (4 if "tiny" in recipe else 15) and config["env"]["reward"] == "success"
    if "-qwen2.5-" in recipe and recipe.startswith("train-"):
        assert config["data"]["val_files"].endswith("/100/test.parquet")  # the first 100 test goals, as verl-agent


GPU_RECIPES = [r for r in RECIPES if "-qwen2.5-" in r]


@pytest.mark.parametrize("recipe", GPU_RECIPES)
def test_gpu_recipes_keep_two_checkpoints_and_pass_the_vllm_runner_switch_to_ray(recipe):
    """Retention bounds the disk (verl keeps every checkpoint by default: 15 in 150 steps), the task-event cap
    Ray's GCS memory (~7 MiB a step without it on a CPU run); the runner switch
    reaches every Ray worker, vLLM's servers included, through the runtime env."""
    config = resolve(recipe, *recipe_args(recipe))
    assert config["trainer"]["max_actor_ckpt_to_keep"] == 2
    # Ray's GCS keeps a bounded record of tasks (every generation request is one), not its default 100,000.
    assert config["ray_kwargs"]["ray_init"]["_system_config"]["task_events_max_num_task_in_gcs"] == 10000
    assert config["ray_kwargs"]["ray_init"]["runtime_env"]["env_vars"]["VLLM_USE_V2_MODEL_RUNNER"] == "1"


def test_the_runner_switch_and_the_retention_are_one_variable_each():
    """``VLLM_USE_V2_MODEL_RUNNER=0 bash recipes/...`` is the fallback to V1; read off the trainer's command line
    (PY=echo prints it instead of running it), through the LoRA recipe's two levels of recipes."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), "PY": "echo",
           "VLLM_USE_V2_MODEL_RUNNER": "0", "KEEP_CKPTS": "3"}
    result = subprocess.run(["bash", "recipes/train-strata-alfworld-text-qwen2.5-7b-lora.sh"], cwd=REPO, env=env,
                            capture_output=True, text=True, check=True, timeout=30)
    command = result.stdout.split()
    assert "++ray_kwargs.ray_init.runtime_env.env_vars.VLLM_USE_V2_MODEL_RUNNER='0'" in command  # a string for Ray
    assert "trainer.max_actor_ckpt_to_keep=3" in command


def test_the_agent_recipe_shows_the_history_window_the_agent_was_built_with(tmp_path):
    """An agent warm-started on prompts with 4 past steps is trained on prompts with 4 (agent.json), not 2."""
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "agent.json").write_text(json.dumps({"recipe": {"history_window": 4}}))
    recipe = "train-strata-alfworld-agent-cpu.sh"
    assert resolve(recipe, AGENT=str(agent))["strata"]["prompts"]["history_window"] == 4
    assert resolve(recipe)["strata"]["prompts"]["history_window"] == 2  # no agent built yet: the default
