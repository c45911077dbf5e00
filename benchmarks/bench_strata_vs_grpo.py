"""Step wall time of StraTA vs the GRPO baseline with equal trajectories per step, split by phase.

    .venv/bin/python benchmarks/bench_strata_vs_grpo.py                  # cpu_vllm, 3 steps each
    .venv/bin/python benchmarks/bench_strata_vs_grpo.py --platform cpu --steps 4

Runs the tiny CPU recipes through verl's real trainer, one after the other:

- ``strata``: recipes/train-strata-alfworld-text-tiny-cpu.sh (2 tasks x N=2 strategies of σ·N=4
  candidates x M=2 episodes = 8 trajectories per step, judge on);
- ``strata, no judge``: the same with ``strata.judge.enable=false`` (the judge's cost is the difference);
- ``grpo``: recipes/train-grpo-alfworld-text-tiny-cpu.sh (2 tasks x G=4 episodes = 8 trajectories).

Each run validates only after its last step. Step 1 is left out of the averages (start-up compilation and
first-touch allocations). verl's own timers give the phases: ``gen`` (the rollout: strategy sampling,
selection, episodes with their environment steps, judge), ``old_log_prob``, ``ref``, ``update_actor``,
``step`` (the whole step); ``timing_s/strata_selection`` is the embedding + farthest-point selection
summed over the step's tasks (which run concurrently, so it can exceed its share of ``gen``).
The paper's ratio on GPU is 378 s / 302 s = 1.25 per step. Not a test: results depend on machine and load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUNS = {
    "strata": ("recipes/train-strata-alfworld-text-tiny-cpu.sh", ()),
    "strata, no judge": ("recipes/train-strata-alfworld-text-tiny-cpu.sh", ("strata.judge.enable=false",)),
    "grpo": ("recipes/train-grpo-alfworld-text-tiny-cpu.sh", ()),
}
PHASES = ("gen", "strata_selection", "old_log_prob", "ref", "update_actor", "step")


def run(name: str, recipe: str, overrides: tuple[str, ...], steps: int, platform: str, root: Path) -> dict:
    out = root / name.replace(", ", "-").replace(" ", "-")
    env = dict(os.environ, OUT=str(out), STEPS=str(steps), VAL_SPLIT="valid_unseen", PLATFORM=platform,
               PY=str(REPO / ".venv/bin/python"))
    command = ["bash", str(REPO / recipe), "trainer.val_before_train=false", f"trainer.test_freq={steps}",
               *overrides]
    started = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, text=True, cwd=REPO)
    if result.returncode != 0:
        raise SystemExit(f"{name} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    by_step: dict[int, dict] = {}
    for row in map(json.loads, (out / "metrics.jsonl").read_text().splitlines()):
        by_step.setdefault(row["step"], {}).update(row["data"])
    timed = [by_step[s] for s in range(2, steps + 1)]
    phases = {p: statistics.mean(m.get(f"timing_s/{p}", 0.0) for m in timed) for p in PHASES}
    trajectories = statistics.mean(m["strata/num_trajectory_rows"] for m in timed)
    return {"phases": phases, "trajectories": trajectories, "wall_s": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=3, help="training steps per run (step 1 is not timed)")
    parser.add_argument("--platform", default="cpu_vllm", choices=("cpu", "cpu_vllm"))
    parser.add_argument("--out", help="folder for the runs (default: a temporary one)")
    args = parser.parse_args()
    if args.steps < 2:
        parser.error("--steps must be >= 2: step 1 is not timed")
    root = Path(args.out or tempfile.mkdtemp(prefix="bench-strata-vs-grpo-"))
    results = {name: run(name, recipe, overrides, args.steps, args.platform, root)
               for name, (recipe, overrides) in RUNS.items()}

    print(f"\nplatform {args.platform}, mean of steps 2..{args.steps}, seconds per training step\n")
    print("| phase | " + " | ".join(results) + " |")
    print("| --- |" + " ---: |" * len(results))
    for phase in PHASES:
        print(f"| {phase} | " + " | ".join(f"{r['phases'][phase]:.1f}" for r in results.values()) + " |")
    print("| trajectories per step | " + " | ".join(f"{r['trajectories']:.0f}" for r in results.values()) + " |")
    strata, no_judge, grpo = (results[name]["phases"] for name in RUNS)
    print(f"\nstep time StraTA / GRPO: {strata['step'] / grpo['step']:.2f} (paper, GPU: 378/302 = 1.25)")
    print(f"judge's share of StraTA's rollout: {(strata['gen'] - no_judge['gen']) / strata['gen']:.0%}")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
