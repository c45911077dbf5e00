"""The ALFWorld learning benchmark: StraTA vs GRPO from the tiny ALFWorld agent, validation on held-out games.

    .venv/bin/python benchmarks/bench_alfworld_learning.py --out outputs/alfworld-learning        # everything
    .venv/bin/python benchmarks/bench_alfworld_learning.py --out DIR --report-only                 # re-read runs

Builds the agent once (`strata build-alfworld-agent`, into ``DIR/agent``) unless it is there, then runs
``recipes/train-strata-alfworld-agent-cpu.sh`` for each algorithm and seed (``DIR/<algo>-seed<k>``), each
validating on the agent's held-out ``valid_seen`` games before training and every ``--test-freq`` steps.
Then writes ``DIR/RESULTS.md`` and ``DIR/curve.png``: per algorithm and step, the mean success over seeds with
a 95% interval over the seeds' games (normal approximation over seeds x games Bernoulli outcomes), and the
runs' wall times. The held-out games are never trained on, and no setting is chosen by them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from strata.report.curve import SUCCESS_KEY, extract_curve  # noqa: E402
from strata.report.logs import read_metrics  # noqa: E402
from strata.report.markdown import markdown_table  # noqa: E402

RECIPE = ROOT / "recipes" / "train-strata-alfworld-agent-cpu.sh"


def run_dir(out: Path, algorithm: str, seed: int) -> Path:
    return out / f"{algorithm}-seed{seed}"


def build_agent(agent: Path) -> None:
    if (agent / "agent.json").is_file():
        return
    subprocess.run([sys.executable, "-m", "strata.cli", "build-alfworld-agent", "--out", str(agent)], check=True,
                   cwd=ROOT)


def train(out: Path, agent: Path, algorithm: str, seed: int, steps: int, test_freq: int) -> float:
    """One run of the recipe; its wall time in seconds (recorded next to its metrics)."""
    target = run_dir(out, algorithm, seed)
    env = {**os.environ, "AGENT": str(agent), "ALGO": algorithm, "SEED": str(seed), "OUT": str(target),
           "STEPS": str(steps), "TEST_FREQ": str(test_freq), "PY": sys.executable}
    began = time.perf_counter()
    subprocess.run(["bash", str(RECIPE)], check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - began
    (target / "wall_time.json").write_text(json.dumps({"seconds": round(seconds, 1)}) + "\n", encoding="utf-8")
    return seconds


def interval(rates: list[float], games: int) -> tuple[float, float]:
    """Mean over seeds and the half-width of a 95% interval over all seeds' games."""
    mean = sum(rates) / len(rates)
    n = games * len(rates)
    return mean, 1.96 * math.sqrt(max(mean * (1 - mean), 0.0) / n) if n else 0.0


def collect(out: Path, algorithms: list[str], seeds: list[int]) -> dict[str, dict[int, dict[int, float]]]:
    """algorithm -> step -> seed -> held-out success, for the runs that logged validation."""
    curves: dict[str, dict[int, dict[int, float]]] = {}
    for algorithm in algorithms:
        for seed in seeds:
            metrics = run_dir(out, algorithm, seed) / "metrics.jsonl"
            if not metrics.is_file():
                continue
            curve = extract_curve(read_metrics([metrics]), SUCCESS_KEY)
            for step, value in zip(curve.steps, curve.values, strict=True):
                curves.setdefault(algorithm, {}).setdefault(step, {})[seed] = value
    return curves


def write_report(out: Path, agent: Path, curves: dict, seeds: list[int]) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    manifest = json.loads((agent / "agent.json").read_text(encoding="utf-8"))
    games = manifest["recipe"]["valid_games"]
    rows = []
    figure, axes = plt.subplots(figsize=(6, 4))
    for algorithm, by_step in sorted(curves.items()):
        steps = sorted(by_step)
        means, halves = zip(*(interval(list(by_step[s].values()), games) for s in steps), strict=True)
        axes.plot(steps, [100 * m for m in means], marker="o", label=algorithm)
        axes.fill_between(steps, [100 * (m - h) for m, h in zip(means, halves, strict=True)],
                          [100 * (m + h) for m, h in zip(means, halves, strict=True)], alpha=0.2)
        for step, mean, half in zip(steps, means, halves, strict=True):
            per_seed = ", ".join(f"{by_step[step][k]:.0%}" for k in sorted(by_step[step]))
            rows.append([algorithm, str(step), f"{mean:.1%} ± {half:.1%}", per_seed])
    axes.set_xlabel("training step")
    axes.set_ylabel(f"held-out success, % ({games} valid_seen games)")
    axes.legend()
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(out / "curve.png", dpi=120)
    walls = {p.parent.name: json.loads(p.read_text())["seconds"] for p in sorted(out.glob("*/wall_time.json"))}
    text = "\n".join([
        "# ALFWorld learning benchmark (generated by benchmarks/bench_alfworld_learning.py)", "",
        f"Agent: {agent} — held-out success at build {manifest['held_out_success']:.0%} (StraTA, T=0.7)", "",
        markdown_table(["algorithm", "step", "success (mean ± 95%)", "per seed"], rows), "",
        "Wall time per run (s): " + ", ".join(f"{k} {v:.0f}" for k, v in walls.items()), "",
    ])
    report = out / "RESULTS.md"
    report.write_text(text, encoding="utf-8")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--agent", type=Path, help="a built agent folder (default: OUT/agent, built if missing)")
    parser.add_argument("--algorithms", nargs="+", default=["strata", "grpo"], choices=["strata", "grpo"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--test-freq", type=int, default=5)
    parser.add_argument("--report-only", action="store_true", help="only read the runs already in OUT")
    args = parser.parse_args()
    out = args.out.resolve()
    agent = (args.agent or out / "agent").resolve()
    out.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        build_agent(agent)
        for seed in args.seeds:
            for algorithm in args.algorithms:
                seconds = train(out, agent, algorithm, seed, args.steps, args.test_freq)
                print(f"{algorithm} seed {seed}: {seconds / 60:.1f} min", flush=True)
    report = write_report(out, agent, collect(out, args.algorithms, args.seeds), args.seeds)
    print(report.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
