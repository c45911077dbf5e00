"""StraTA's own bookkeeping per training step, outside generation and the actor update (issue target <10%).

Times, for paper-size groups (σ·N = 32 candidates, N = 4 kept, M = 8 trajectories of T steps), the work
StraTA adds to a GRPO step: diverse selection (MiniLM embedding + FPS), parsing 32 judgments, the
hierarchical advantages and the training rows (token-level assembly), on synthetic records with
realistic sizes. The paper measures 378 s per StraTA training step (16 tasks); the share reported is
this bookkeeping for 16 tasks, run one task after another on one CPU core, against that step time.
(Selection runs in a thread per task in the agent-loop workers, so on a real node it overlaps with the
generation of other tasks; one core serially is the worst case.)

Usage:
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_workflow_overhead.py [--steps 14] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).parent))

from bench_selection import candidate_strategies  # noqa: E402

from strata.core.config import StrataConfig  # noqa: E402
from strata.core.diversity import select_strategies  # noqa: E402
from strata.core.embedding import SentenceTransformerEmbedder  # noqa: E402
from strata.core.parsing import extract_tag, parse_judgment  # noqa: E402
from strata.workflow.records import (  # noqa: E402
    Generation,
    Step,
    StrategyCandidate,
    StrategyRollout,
    TaskRollout,
    Trajectory,
)
from strata.workflow.rows import ZeroVariance, group_advantages, rollout_stats, training_rows  # noqa: E402

PAPER_STEP_SECONDS = 378.0
TASKS_PER_STEP = 16


def generation(rng: random.Random, text: str, num_tokens: int, prompt_tokens: int) -> Generation:
    return Generation(prompt_ids=[rng.randrange(151_000) for _ in range(prompt_tokens)],
                      token_ids=[rng.randrange(151_000) for _ in range(num_tokens)],
                      logprobs=[-1.0] * num_tokens, text=text, truncated=False)


def synthetic_candidates(rng: random.Random, config: StrataConfig) -> list[StrategyCandidate]:
    return [StrategyCandidate(generation(rng, f"<strategy>{t}</strategy>", 80, 400), t)
            for t in candidate_strategies(config.num_candidates)]


def synthetic_trajectory(rng: random.Random, steps: int) -> Trajectory:
    trajectory = Trajectory(prompt_ids=[rng.randrange(151_000) for _ in range(900)])
    for _ in range(steps):
        g = generation(rng, "I should look in the fridge. <action>go to fridge 1</action>", 60, 0)
        trajectory.steps.append(Step(g, extract_tag(g.text, "action"), "You arrive at fridge 1.",
                                     env_tokens=[rng.randrange(151_000) for _ in range(150)]))
    trajectory.won = rng.random() < 0.5
    trajectory.end_reason = "won" if trajectory.won else "step_limit"
    trajectory.judge = generation(rng, "Steps 2 and 5 repeat earlier actions. <judgment>[2, 5]</judgment>", 40, 0)
    return trajectory


def one_task(rng: random.Random, config: StrataConfig, embedder, steps: int) -> dict[str, float]:
    candidates = synthetic_candidates(rng, config)
    count = config.num_stras_per_run * config.num_trajs_per_stra
    trajectories = [synthetic_trajectory(rng, steps) for _ in range(count)]
    timings = {}
    start = time.perf_counter()
    kept = select_strategies([c.text_for_conditioning for c in candidates], [c.well_formed for c in candidates],
                             config.num_stras_per_run, embedder).kept
    timings["selection"] = time.perf_counter() - start

    start = time.perf_counter()
    for t in trajectories:
        t.flagged_steps = parse_judgment(t.judge.text, t.num_steps) or []
        t.judge_parsed = True
    timings["judge parsing"] = time.perf_counter() - start

    m = config.num_trajs_per_stra
    rollout = TaskRollout(candidates, kept, [StrategyRollout(candidates[i], trajectories[k * m:(k + 1) * m])
                                             for k, i in enumerate(kept)])
    start = time.perf_counter()
    advantages = group_advantages(rollout, config)
    timings["advantages"] = time.perf_counter() - start

    start = time.perf_counter()
    constant = ZeroVariance.of(rollout, config.delta_coef)
    rows = training_rows(rollout, advantages, constant)
    rollout_stats(rollout, "pick") | constant.counts()
    timings["rows + stats"] = time.perf_counter() - start
    assert len(rows) == config.num_stras_per_run * (1 + m)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=14, help="steps per trajectory (reproduction mean: 13-14)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    config = StrataConfig()
    embedder = SentenceTransformerEmbedder()
    rng = random.Random(0)
    one_task(rng, config, embedder, args.steps)  # warm-up
    runs = [one_task(rng, config, embedder, args.steps) for _ in range(args.repeats)]
    medians = {stage: statistics.median(r[stage] for r in runs) for stage in runs[0]}
    total = sum(medians.values())
    print(f"paper-size group: N={config.num_stras_per_run} M={config.num_trajs_per_stra} "
          f"σ·N={config.num_candidates}, {args.steps} steps per trajectory, median of {args.repeats}\n")
    print("| stage | per task (ms) | per 16-task step (s) |")
    print("|---|---|---|")
    for stage, seconds in medians.items():
        print(f"| {stage} | {1000 * seconds:.1f} | {TASKS_PER_STEP * seconds:.2f} |")
    step = TASKS_PER_STEP * total
    print(f"| **total** | {1000 * total:.1f} | {step:.2f} |")
    print(f"\nshare of the paper's {PAPER_STEP_SECONDS:.0f} s StraTA step: {100 * step / PAPER_STEP_SECONDS:.1f}%")


if __name__ == "__main__":
    main()
