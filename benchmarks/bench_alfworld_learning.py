"""The ALFWorld learning benchmark: does RL improve the tiny ALFWorld agent, measured with a paired evaluation.

    .venv/bin/python benchmarks/bench_alfworld_learning.py --out outputs/alfworld-learning \\
        --algorithms strata grpo control --seeds 0 1                     # issue #35's runs, from nothing (~8 h)
    .venv/bin/python benchmarks/bench_alfworld_learning.py --out DIR --report-only             # re-read runs
    .venv/bin/python benchmarks/bench_alfworld_learning.py --out DIR2 --runs-dir RUNS2 --algorithms strata --seeds 1 \
        --override actor_rollout_ref.actor.kl_loss_coef=0.1 --override trainer.save_freq=60   # a variant; its last
        # step kept (DIR2/strata-seed1/checkpoints/global_step_60) for `strata dagger-alfworld-agent --checkpoint`
    M=8 TASKS=2 .venv/bin/python benchmarks/bench_alfworld_learning.py --out DIR3 --runs-dir RUNS3 \
        --algorithms strata --seeds 0      # another group shape: the recipe's variables (N, M, TASKS) pass through

From nothing, in one invocation:

1. builds the agent once unless it is there (`agent_build_commands`): `strata build-alfworld-agent --valid-games H`
   with the reported agent's width, warm-start steps and learning rate (``DIR/agent-base``, ~37 min on 2 cores),
   then `strata dagger-alfworld-agent --rounds R` from it (``DIR/agent``, ~33 min); ``--dagger-rounds 0`` makes the
   base the agent, ``--agent-action-shares 13 13`` practises StraTA's and the flat baselines' prompts equally;
2. writes two fixed game sets: ``held_out`` (the first H ``valid_seen`` games, never trained on) and
   ``train_fixed`` (the first F of the ``rl_train`` games RL trains on);
3. runs ``recipes/train-strata-alfworld-agent-cpu.sh`` per algorithm and seed (``DIR/<algorithm>-seed<S>``).
   Every validation plays a game with the same sampling seed (a paired evaluation); step 0 and the last step
   play both sets, the validations in between only ``train_fixed`` (``data.interim_val_files``). ``control`` is
   StraTA with each task's rewards shuffled across its episodes (``+strata_test.permute_rewards=true``): it moves
   the policy as much, without the signal;
4. records, per run, ``<runs-dir>/<algorithm>-seed<S>/outcomes.jsonl`` (one line per validation episode,
   `strata.report.outcomes`), ``trained.jsonl`` (the games each training step drew, `strata.report.trained_games`)
   and ``memory.jsonl`` (PSS and RSS of the run's whole process tree every ``--memory-every`` seconds, PSS by kind
   of process);
5. writes ``DIR/RESULTS.md`` and ``DIR/curve.png``: paired differences with 95% intervals (bootstrap over games,
   `strata.report.paired`), each algorithm against the control and against GRPO, the fixed games once trained on
   against those not yet, per run and with an algorithm's seeds pooled (how much of the fixed-set gain is learning
   those games), admissible-action rates, the step's time split and the memory over each run, and whether the
   targets of issue #35 are met. The step-time table gives each run's shape (tasks x strategies x trajectories).

No setting is chosen by the held-out games.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from strata.envs.task_list import read_task_list, write_task_list  # noqa: E402
from strata.report.dumps import dump_files, load_step  # noqa: E402
from strata.report.markdown import markdown_table  # noqa: E402
from strata.report.outcomes import read_outcomes, validation_outcomes, write_outcomes  # noqa: E402
from strata.report.paired import (  # noqa: E402
    Interval,
    bootstrap_mean,
    difference_in_differences,
    difference_in_differences_over_runs,
    paired_difference,
    paired_difference_over_runs,
    per_game,
    runs_as_one,
    trained_effect,
)
from strata.report.run_files import saved_setting  # noqa: E402
from strata.report.situations import (  # noqa: E402
    FOLLOWS,
    credit_table,
    follows_table,
    refused_repeats,
    situation_table,
)
from strata.report.trained_games import ReplayError, trained_by_step, trained_games  # noqa: E402

RECIPE = ROOT / "recipes" / "train-strata-alfworld-agent-cpu.sh"
ALGORITHMS = ("strata", "grpo", "gigpo", "gigpo_state", "control")
SPLITS = {"valid_seen": "held_out", "train": "train_fixed"}  # the dumped ALFWorld split -> the benchmark's set
RECIPE_ALGORITHM = {"strata": "strata", "grpo": "grpo", "gigpo": "gigpo", "gigpo_state": "gigpo", "control": "strata"}
# gigpo_state: GiGPO whose anchors keep the room after "Nothing happens." (strata.gigpo.anchor, not verl-agent's).
EXTRA_OVERRIDES = {"control": ["+strata_test.permute_rewards=true"],
                   "gigpo_state": ["strata.gigpo.anchor=last_admitted"]}
# The recipe's variables a caller may set in the environment (``M=8 TASKS=2 bench...``): they change the run, so
# each run's record keeps those that were set.
RECIPE_VARIABLES = ("N", "M", "SIGMA", "TASKS", "LR", "TRAIN", "PLATFORM")
SITUATION_VERBS = ("take", "go", "open", "put")
TIMINGS = ("gen", "old_log_prob", "ref", "update_actor", "step", "testing")
SAMPLING_BLOCK = 8  # training steps a row of the sampling table averages
# Targets of issue #35, in points: on train_fixed StraTA beats the control by this much, on held_out it gains this.
TRAIN_TARGET, HELD_OUT_TARGET = 0.15, 0.05


class AgentRecipe(NamedTuple):
    """How the benchmark builds its agent from nothing. The defaults are the agent of the reported 60-step runs
    (benchmarks/RESULTS_alfworld_learning.md: width 128, 3,000 warm-start steps at 1.5e-3, two DAgger rounds)."""

    width: int = 128
    steps: int = 3000
    lr: float = 0.0015
    dagger_rounds: int = 2
    # Action examples a warm-start batch holds under StraTA's and the flat baselines' prompts; None: the build's
    # default (16, 10). (13, 13) gives StraTA and GRPO the same practice, and so a comparable start.
    action_shares: tuple[int, int] | None = None


def run_name(algorithm: str, seed: int) -> str:
    return f"{algorithm}-seed{seed}"


def agent_build_commands(agent: Path, held_out_games: int, recipe: AgentRecipe) -> list[list[str]]:
    """The `strata` commands still needed to build ``agent`` (none once it holds agent.json): the base agent, into
    ``<agent>-base`` when DAgger follows (the DAgger agent reads its games from there), and the DAgger rounds."""
    if (agent / "agent.json").is_file():
        return []
    base = agent.with_name(f"{agent.name}-base") if recipe.dagger_rounds else agent
    commands = []
    if not (base / "agent.json").is_file():
        commands.append(["build-alfworld-agent", "--out", str(base), "--valid-games", str(held_out_games),
                         "--hidden-size", str(recipe.width), "--steps", str(recipe.steps), "--lr", str(recipe.lr),
                         *(["--action-shares", *map(str, recipe.action_shares)] if recipe.action_shares else [])])
    if recipe.dagger_rounds:
        commands.append(["dagger-alfworld-agent", "--agent", str(base), "--out", str(agent),
                         "--rounds", str(recipe.dagger_rounds)])
    return commands


def build_agent(agent: Path, held_out_games: int, recipe: AgentRecipe) -> None:
    for command in agent_build_commands(agent, held_out_games, recipe):
        subprocess.run([sys.executable, "-m", "strata.cli", *command], check=True, cwd=ROOT)
    games = json.loads((agent / "agent.json").read_text(encoding="utf-8"))["splits"]["valid_seen"]["games"]
    if games < held_out_games:
        raise SystemExit(f"{agent} holds {games} held-out games, fewer than --held-out-games {held_out_games}: "
                         f"build another agent (strata build-alfworld-agent --valid-games {held_out_games})")


def write_game_sets(agent: Path, sets: Path, held_out_games: int, train_fixed_games: int) -> dict[str, Path]:
    """The two fixed evaluation sets as task lists: the first games of ``valid_seen`` and of ``rl_train``."""
    paths = {"held_out": sets / "held_out.parquet", "train_fixed": sets / "train_fixed.parquet"}
    rl_games = read_task_list(agent / "rl_train.parquet")
    if len(rl_games) < train_fixed_games:
        raise SystemExit(f"{agent} has {len(rl_games)} RL games, fewer than --train-fixed-games {train_fixed_games}")
    write_task_list(read_task_list(agent / "valid_seen.parquet")[:held_out_games], paths["held_out"])
    write_task_list(rl_games[:train_fixed_games], paths["train_fixed"])
    return paths


def descendants(pid: int) -> list:
    import psutil

    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def process_kind(process) -> str:
    """A short name for a process of the run: Ray actors by their class, engines and workers by their name."""
    try:
        command = process.cmdline()
    except Exception:  # noqa: BLE001 - a process that ended while being read
        return "gone"
    head = command[0] if command else process.name()
    if head.startswith("ray::"):
        return head.split(".")[0][:40]
    if any("strata.trainer.main" in part for part in command):
        return "trainer"
    if any("raylet" in part or "gcs_server" in part for part in command):
        return "ray-system"
    return Path(head).name[:40]


class MemorySampler(threading.Thread):
    """Every ``every`` seconds, the memory (MiB) of the run's whole process tree by kind, with the step it is on.

    PSS (each shared page split between the processes that map it) is what the tree really holds: a sum of RSS
    counts torch's libraries once per Ray worker (21 GiB of RSS on this 24 GiB machine). Both are recorded."""

    def __init__(self, pid: int, metrics: Path, out: Path, every: float) -> None:
        super().__init__(daemon=True)
        self.pid, self.metrics, self.out, self.every = pid, metrics, out, every
        self.stopped = threading.Event()
        self.started_at = time.perf_counter()

    def _step(self) -> int:
        if not self.metrics.is_file():
            return 0
        lines = self.metrics.read_text(encoding="utf-8").splitlines()
        return json.loads(lines[-1]).get("step", 0) if lines else 0

    def run(self) -> None:
        with self.out.open("w", encoding="utf-8") as handle:
            while not self.stopped.wait(self.every):
                by_kind: dict[str, float] = {}
                rss = 0.0
                for process in descendants(self.pid):
                    try:
                        memory = process.memory_full_info()
                    except Exception:  # noqa: BLE001 - ended, or not ours to read
                        continue
                    kind = process_kind(process)
                    by_kind[kind] = round(by_kind.get(kind, 0.0) + memory.pss / 2**20, 1)
                    rss += memory.rss / 2**20
                handle.write(json.dumps({"seconds": round(time.perf_counter() - self.started_at), "step": self._step(),
                                         "pss_mib": round(sum(by_kind.values()), 1), "rss_mib": round(rss, 1),
                                         "pss_by_kind": by_kind}) + "\n")
                handle.flush()


def hydra_override(text: str) -> str:
    """``--override``'s value: one Hydra override, ``key=value`` (``+key=value`` adds a key)."""
    key, equals, _ = text.partition("=")
    if not equals or not key.lstrip("+~"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a Hydra override: write key=value, e.g. "
                                         "actor_rollout_ref.actor.kl_loss_coef=0.1")
    return text


def chosen_overrides(train_temperature: float | None, overrides: list[str]) -> list[str]:
    """The settings a benchmark invocation gives every run (beside each algorithm's own, `EXTRA_OVERRIDES`)."""
    temperature = [] if train_temperature is None else [f"actor_rollout_ref.rollout.temperature={train_temperature}"]
    return [*temperature, *overrides]


def recipe_variables(environ: Mapping[str, str]) -> list[str]:
    """The recipe's variables set in ``environ``, as ``NAME=value``: what a run was given beside its overrides."""
    return [f"{name}={environ[name]}" for name in RECIPE_VARIABLES if name in environ]


def train(out: Path, runs_dir: Path, agent: Path, sets: dict[str, Path], algorithm: str, seed: int, steps: int,
          test_freq: int, memory_every: float, chosen: list[str]) -> float:
    """One run of the recipe; its wall time in seconds. Writes the run's outcome and memory files, and with its wall
    time the ``chosen`` overrides (`chosen_overrides`) and the recipe variables (`recipe_variables`) it ran with."""
    target, record = out / run_name(algorithm, seed), runs_dir / run_name(algorithm, seed)
    target.mkdir(parents=True, exist_ok=True)
    record.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "AGENT": str(agent), "ALGO": RECIPE_ALGORITHM[algorithm], "SEED": str(seed),
           "OUT": str(target), "STEPS": str(steps), "TEST_FREQ": str(test_freq), "PY": sys.executable,
           "VAL": f"[{sets['held_out']},{sets['train_fixed']}]", "INTERIM_VAL": str(sets["train_fixed"])}
    env.pop("DRY_RUN", None)
    began = time.perf_counter()
    with open(target / "bench.log", "w", encoding="utf-8") as log:
        process = subprocess.Popen(["bash", str(RECIPE), *EXTRA_OVERRIDES.get(algorithm, []), *chosen], cwd=ROOT,
                                   env=env, stdout=log, stderr=subprocess.STDOUT)
        sampler = MemorySampler(process.pid, target / "metrics.jsonl", record / "memory.jsonl", memory_every)
        sampler.start()
        code = process.wait()
        sampler.stopped.set()
        sampler.join()
    seconds = time.perf_counter() - began
    if code:
        raise SystemExit(f"{run_name(algorithm, seed)} failed (exit {code}); see {target / 'bench.log'}")
    (record / "wall_time.json").write_text(json.dumps({"seconds": round(seconds, 1), "steps": steps,
                                                       "recipe_variables": recipe_variables(os.environ),
                                                       "overrides": chosen}) + "\n", encoding="utf-8")
    write_outcomes(validation_outcomes(target, seed, SPLITS, root=agent), record / "outcomes.jsonl")
    return seconds


# --- the report -----------------------------------------------------------------------------------------------

def load_runs(runs_dir: Path, algorithms: list[str], seeds: list[int]) -> dict[str, list[dict]]:
    """Algorithm -> the outcome rows of all its seeds' runs (those that finished), each marked with its run's seed."""
    runs: dict[str, list[dict]] = {}
    for algorithm in algorithms:
        for seed in seeds:
            path = runs_dir / run_name(algorithm, seed) / "outcomes.jsonl"
            if path.is_file():
                runs.setdefault(algorithm, []).extend({**row, "run": seed} for row in read_outcomes(path))
    return runs


def seeds_apart(rows: list[dict]) -> list[list[dict]]:
    """An algorithm's rows from `load_runs`, one list a run."""
    runs: dict[int, list[dict]] = {}
    for row in rows:
        runs.setdefault(row["run"], []).append(row)
    return list(runs.values())


def change_over_runs(rows: list[dict], last: int, split: str) -> Interval | None:
    """The paired success change with the runs' spread in its interval (`paired_difference_over_runs`); None for
    one run (its interval is the games' one) or runs that cannot all be paired at ``last``."""
    runs = seeds_apart(rows)
    try:
        return paired_difference_over_runs(runs, 0, last, split) if len(runs) > 1 else None
    except ValueError:
        return None


def steps_of(rows: list[dict], split: str) -> list[int]:
    return sorted({row["step"] for row in rows if row["split"] == split})


def curve(rows: list[dict], split: str, field: str = "won") -> list[tuple[int, Interval]]:
    """Per validated step: the mean of ``field`` over games (averaged over seeds) with its bootstrap interval."""
    return [(step, bootstrap_mean(list(per_game(rows, step, split, field).values()))) for step in steps_of(rows, split)]


def plot(runs: dict[str, list[dict]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for axis, split in zip(axes, ("train_fixed", "held_out"), strict=True):
        for algorithm, rows in sorted(runs.items()):
            points = curve(rows, split)
            if not points:
                continue
            steps = [s for s, _ in points]
            axis.plot(steps, [100 * i.mean for _, i in points], marker="o", label=algorithm)
            axis.fill_between(steps, [100 * i.low for _, i in points], [100 * i.high for _, i in points], alpha=0.2)
        games = max((len(per_game(rows, 0, split)) for rows in runs.values()), default=0)
        axis.set_title(f"{split} ({games} games, mean and 95% interval)")
        axis.set_xlabel("training step")
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("success, %")
    axes[0].legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def _last_common_step(rows: list[dict], split: str) -> int | None:
    steps = steps_of(rows, split)
    return steps[-1] if len(steps) > 1 else None


def paired_rows(runs: dict[str, list[dict]]) -> list[list[str]]:
    """Per algorithm and set: success and admissible rate at step 0 and at the last step, and their paired change;
    with several seeds, each seed's run on a row of its own below its algorithm's."""
    table = []
    for algorithm, rows in sorted(runs.items()):
        apart = seeds_apart(rows)
        for split in ("train_fixed", "held_out"):
            last = _last_common_step(rows, split)
            if last is None:
                continue
            over_runs = runs_label(change_over_runs(rows, last, split), rows)
            table.append(_change_row(algorithm, rows, split, last, over_runs))
            if len(apart) > 1:
                table.extend(_change_row(f"{algorithm}, seed {run[0]['run']}", run, split, last, "-")
                             for run in apart if per_game(run, 0, split) and per_game(run, last, split))
    return table


def _change_row(label: str, rows: list[dict], split: str, last: int, over_runs: str) -> list[str]:
    first, final = per_game(rows, 0, split), per_game(rows, last, split)
    return [label, split, str(len(first)), f"0 -> {last}", f"{100 * _mean(first):.1f} -> {100 * _mean(final):.1f}",
            paired_difference(rows, 0, last, split).as_points(), over_runs,
            f"{100 * _mean(per_game(rows, 0, split, 'admissible_rate')):.1f} -> "
            f"{100 * _mean(per_game(rows, last, split, 'admissible_rate')):.1f}",
            paired_difference(rows, 0, last, split, "admissible_rate").as_points()]


def _mean(values: dict[str, float]) -> float:
    return sum(values.values()) / len(values) if values else 0.0


def difference_over_runs(rows: list[dict], reference: list[dict], last: int, split: str) -> Interval | None:
    """How much more ``rows``' runs changed than ``reference``'s, with both settings' run spread in the interval
    (`difference_in_differences_over_runs`); None when each has one run (the interval is the games' one) or the
    runs cannot all be paired at ``last``."""
    treated, baseline = seeds_apart(rows), seeds_apart(reference)
    try:
        return (difference_in_differences_over_runs(treated, baseline, 0, last, split)
                if max(len(treated), len(baseline)) > 1 else None)
    except ValueError:
        return None


def runs_label(interval: Interval | None, *settings: list[dict]) -> str:
    """An interval over runs as a table cell, with the runs it drew from (``2 runs``, ``2 vs 1 runs``)."""
    if interval is None:
        return "-"
    return f"{interval.as_points()} ({' vs '.join(str(len(seeds_apart(rows))) for rows in settings)} runs)"


class Comparison(NamedTuple):
    """One algorithm's paired change minus a baseline's on one set: over games, and over runs as well when either
    has several."""

    over_games: Interval
    over_runs: Interval | None

    def judged(self) -> Interval:
        """The interval a target is judged on: the one over runs where there is one."""
        return self.over_runs or self.over_games


def against(runs: dict[str, list[dict]], baseline: str) -> tuple[list[list[str]], dict[str, Comparison]]:
    """Each algorithm's paired change minus ``baseline``'s, per set, on the games both played; the control is only
    ever the baseline (its change is drift, no method's)."""
    table, found = [], {}
    reference = runs.get(baseline)
    for algorithm, rows in sorted(runs.items()):
        if reference is None or algorithm in (baseline, "control"):
            continue
        for split in ("train_fixed", "held_out"):
            last, last_reference = _last_common_step(rows, split), _last_common_step(reference, split)
            if last is None or last != last_reference:
                continue
            comparison = Comparison(difference_in_differences(rows, reference, 0, last, split),
                                    difference_over_runs(rows, reference, last, split))
            found[f"{algorithm}/{split}"] = comparison
            table.append([algorithm, split, f"0 -> {last}", str(comparison.over_games.games),
                          comparison.over_games.as_points(), runs_label(comparison.over_runs, rows, reference)])
    return table, found


def targets(runs: dict[str, list[dict]], versus_control: dict[str, Comparison]) -> list[str]:
    lines = []
    train = versus_control.get("strata/train_fixed")
    if train is None:
        lines.append("- Fixed training set, StraTA vs control: not measured (needs both runs, ending at one step).")
    else:
        judged = train.judged()
        met = judged.mean >= TRAIN_TARGET and judged.excludes_zero()
        runs_part = (f"; {train.over_runs.as_points()} over their {len(seeds_apart(runs['strata']))} and "
                     f"{len(seeds_apart(runs['control']))} runs and games" if train.over_runs else "")
        lines.append(f"- Fixed training set, StraTA's gain minus the control's: {train.over_games.as_points()} points "
                     f"over games{runs_part} (target >= +{100 * TRAIN_TARGET:.0f}, "
                     f"{'the interval over runs' if train.over_runs else 'interval'} excluding 0): "
                     f"**{'met' if met else 'not met'}**.")
    strata = runs.get("strata")
    last = _last_common_step(strata, "held_out") if strata else None
    if last is None:
        lines.append("- Held-out games, StraTA's paired difference: not measured.")
    else:
        held_out = paired_difference(strata, 0, last, "held_out")
        over_runs = change_over_runs(strata, last, "held_out")
        judged = over_runs or held_out
        met = judged.mean >= HELD_OUT_TARGET and judged.excludes_zero()
        runs_part = f"; {over_runs.as_points()} over its {len(seeds_apart(strata))} runs and games" if over_runs else ""
        lines.append(f"- Held-out games, StraTA's paired difference (step 0 -> {last}): {held_out.as_points()} points "
                     f"over games{runs_part} (target >= +{100 * HELD_OUT_TARGET:.0f}, "
                     f"{'the interval over runs' if over_runs else 'interval'} excluding 0): "
                     f"**{'met' if met else 'not met'}**.")
    return lines


def episodes_shape(run: Path) -> str:
    """A run's episodes a step as tasks x strategies x trajectories a strategy (GRPO and GiGPO: one strategy), from
    its saved config: runs of one benchmark may differ in shape (the recipe's TASKS, N and M)."""
    shape = [saved_setting(run, key) for key in
             ("data.train_batch_size", "strata.num_stras_per_run", "strata.num_trajs_per_stra")]
    if not all(isinstance(part, int) for part in shape):
        return "-"
    tasks, strategies, trajectories = shape
    return f"{tasks} x {strategies} x {trajectories} = {tasks * strategies * trajectories}"


def timing_rows(out: Path, names: list[str]) -> list[list[str]]:
    """A run's episodes a step, and the mean seconds of each phase over its training steps (verl's ``timing_s/*``)."""
    table = []
    for name in names:
        metrics = out / name / "metrics.jsonl"
        if not metrics.is_file():
            continue
        steps = [json.loads(line)["data"] for line in metrics.read_text(encoding="utf-8").splitlines()]
        steps = [row for row in steps if "timing_s/step" in row]
        cells = []
        for phase in TIMINGS:
            values = [row[f"timing_s/{phase}"] for row in steps if f"timing_s/{phase}" in row]
            cells.append(f"{sum(values) / len(values):.1f}" if values else "-")
        table.append([name, str(len(steps)), episodes_shape(out / name), *cells])
    return table


def sampling_rows(out: Path, runs_dir: Path, names: list[str], block: int) -> list[list[str]]:
    """The training side, every ``block`` steps: the training batch as sampled (at the run's training temperature T:
    success, admissible-action rate, share of steps that repeat a refused command, share of trajectory groups with no
    reward variance, from the run's metrics) beside the fixed training games at the block's last validation
    (validation sampling, T = 0.7: success and admissible rate, per-game means, and the refused repeats). How the two
    samplings differ on the same kind of games is what the choice of training temperature reads (issue #35 §2:
    training-side signals only)."""

    def percent(rows: list[dict], key: str) -> str:
        values = [row[key] for row in rows if key in row]
        return f"{100 * sum(values) / len(values):.1f}" if values else "-"

    table = []
    for name in names:
        metrics = out / name / "metrics.jsonl"
        outcomes = runs_dir / name / "outcomes.jsonl"
        if not metrics.is_file():
            continue
        logged = {row["step"]: row["data"] for row in map(json.loads, metrics.read_text(encoding="utf-8").splitlines())}
        steps = {step: data for step, data in logged.items() if "strata/success_rate" in data}
        temperature = saved_setting(out / name, "actor_rollout_ref.rollout.temperature")
        fixed = [row for row in read_outcomes(outcomes) if row["split"] == "train_fixed"] if outcomes.is_file() else []
        for first in range(1, max(steps, default=0) + 1, block):
            rows = [steps[step] for step in range(first, first + block) if step in steps]
            if not rows:
                continue
            last = first + len(rows) - 1
            cells = [percent(rows, key) for key in ("strata/success_rate", "strata/admissible_action_rate",
                                                    "strata/refused_repeat_rate", "strata/zero_var_trajectory_groups")]
            checked = max((row["step"] for row in fixed if first <= row["step"] <= last), default=None)
            validated = [row for row in fixed if row["step"] == checked]
            cells += ([f"{100 * sum(r['won'] for r in validated) / len(validated):.1f} (step {checked})",
                       f"{100 * sum(r['admissible_rate'] for r in validated) / len(validated):.1f}",
                       fixed_games_percent(logged.get(checked, {}), "refused_repeat_rate")]
                      if validated else ["-", "-", "-"])
            table.append([name, "-" if temperature is None else str(temperature), f"{first}-{last}", *cells])
    return table


def fixed_games_percent(logged: dict, metric: str) -> str:
    """A validation metric of the fixed training games: ``val/split/train/<metric>`` where the validation played
    both sets (the first and the last), ``val/average/metrics/<metric>`` where it played only them (in between)."""
    value = logged.get(f"val/split/train/{metric}", logged.get(f"val/average/metrics/{metric}"))
    return "-" if value is None else f"{100 * value:.1f}"


MEMORY_WINDOW = 5  # steps whose medians are compared: the driver's buffers swell for a step or two at a time


def ray_system(sample: dict) -> float:
    """The PSS (MiB) of Ray's own processes (GCS, raylet) in a memory sample."""
    return sample["pss_by_kind"].get("ray-system", 0.0)


def _median_pss(largest: dict[int, dict], steps: list[int], kind: str | None = None) -> float:
    """The median PSS (MiB) of ``steps``' samples, of the whole tree or of one ``kind`` of process."""
    return statistics.median(largest[step]["pss_mib"] if kind is None else largest[step]["pss_by_kind"].get(kind, 0.0)
                             for step in steps)


def memory_rows(runs_dir: Path, names: list[str]) -> list[list[str]]:
    """PSS of a run's process tree: the largest sample of its first training step and of its last one before the
    final validation, and the largest overall. verl logs a step only after its validation, so the two highest
    step numbers sampled hold the final validation and the teardown, and are left out of the comparison.

    The first step or two allocate once what later steps reuse (the driver's batch buffers, the engines' first
    games), and a validation step swells the driver for a while, so the steady growth, what a leak would show as, is
    read as the median of the steps after the first `MEMORY_WINDOW` against the median of the last ones, with the
    kinds of process that grew most."""
    table = []
    for name in names:
        path = runs_dir / name / "memory.jsonl"
        samples = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.is_file() else []
        largest: dict[int, dict] = {}  # step -> its largest sample
        for sample in samples:
            if sample["step"] >= 1 and sample["pss_mib"] > largest.get(sample["step"], {"pss_mib": -1.0})["pss_mib"]:
                largest[sample["step"]] = sample
        compared = sorted(largest)[:-2]
        if len(compared) < 3:
            continue
        first, last = largest[compared[0]], largest[compared[-1]]
        early, late = compared[1:1 + MEMORY_WINDOW], compared[-MEMORY_WINDOW:]
        kinds = {kind: _median_pss(largest, late, kind) - _median_pss(largest, early, kind)
                 for kind in {kind for step in early + late for kind in largest[step]["pss_by_kind"]}}
        growing = sorted((kind for kind in kinds if kinds[kind] >= 0.5), key=lambda k: (-kinds[k], k))[:3]
        steady = _median_pss(largest, late) - _median_pss(largest, early)
        table.append([name, f"{first['pss_mib']:.0f} (step {first['step']})",
                      f"{last['pss_mib']:.0f} (step {last['step']})", f"{last['pss_mib'] - first['pss_mib']:+.0f}",
                      f"{ray_system(last) - ray_system(first):+.0f}",
                      f"{steady:+.0f} (steps {early[0]}-{early[-1]} -> {late[0]}-{late[-1]})",
                      ", ".join(f"{kind} {kinds[kind]:+.0f}" for kind in growing) or "-",
                      f"{max(s['pss_mib'] for s in samples):.0f}"])
    return table


@functools.cache
def validations(run: Path) -> dict[int, dict[str, list[dict]]]:
    """A run's dumped validation records: step -> benchmark set (``held_out``, ``train_fixed``) -> records; read once
    (several report tables use them), so call it only for a finished run."""
    by_step = {}
    for step, files in dump_files(run / "rollouts", "valid").items():
        sets: dict[str, list[dict]] = {}
        for record in load_step(files):
            if record["task"]["split"] in SPLITS:
                sets.setdefault(SPLITS[record["task"]["split"]], []).append(record)
        by_step[step] = sets
    return by_step


def first_and_last(steps: list[int]) -> list[int]:
    return sorted(steps)[:1] + sorted(steps)[1:][-1:]


def situation_rows(out: Path, names: list[str]) -> list[list[str]]:
    """Held-out admissible rate by verb and by whether the task's object was in view, at each run's first and last
    validation (from its dumps): where the agent's actions are refused, and whether RL changed it."""
    table = []
    for name in names:
        held_out = {step: sets["held_out"] for step, sets in validations(out / name).items() if "held_out" in sets}
        for step in first_and_last(list(held_out)):
            for (verb, in_view), (admitted, total) in situation_table(held_out[step]).items():
                if verb in SITUATION_VERBS:
                    table.append([name, str(step), verb, "yes" if in_view else "no", str(total),
                                  f"{100 * admitted / total:.1f}"])
    return table


def take_rows(out: Path, names: list[str]) -> list[list[str]]:
    """Held-out ``take`` steps with the task's object out of view, by what they follow (`FOLLOWS`), at each run's
    first and last validation: whether the agent makes the mistake afresh on arrival or repeats it in a loop."""
    table = []
    for name in names:
        held_out = {step: sets["held_out"] for step, sets in validations(out / name).items() if "held_out" in sets}
        for step in first_and_last(list(held_out)):
            counts = follows_table(held_out[step], "take", object_in_view=False)
            table.append([name, str(step), *(str(counts[follows]) for follows in FOLLOWS)])
    return table


def credit_rows(out: Path, names: list[str]) -> list[list[str]]:
    """The advantage each kind of step was trained with (every dumped training step of a run, by verb and whether
    the task's object was in view): whether the update tells a ``take`` where the object is from one where it is
    not, the link between the reward and the conditioning the agent lacks."""
    table = []
    for name in names:
        records = [record for files in dump_files(out / name / "rollouts", "train").values()
                   for record in load_step(files)]
        for (verb, in_view), credit in credit_table(records).items():
            if verb in SITUATION_VERBS:
                table.append([name, verb, "yes" if in_view else "no", str(credit.steps),
                              f"{credit.mean_advantage:+.3f}", f"{100 * credit.positive_share:.1f}"])
    return table


def loop_rows(out: Path, names: list[str]) -> list[list[str]]:
    """The share of validation steps that send again a command the environment just refused, on each set, at each
    run's first and last validation of both sets (from its dumps)."""
    table = []
    for name in names:
        both = {step: sets for step, sets in validations(out / name).items() if len(sets) == len(SPLITS)}
        for step in first_and_last(list(both)):
            cells = []
            for split in ("held_out", "train_fixed"):
                repeats, steps = refused_repeats(both[step][split])
                cells.append(f"{100 * repeats / steps:.1f}" if steps else "-")
            table.append([name, str(step), *cells])
    return table


def trained_rows(out: Path, runs_dir: Path, algorithms: list[str], seeds: list[int], agent: Path) -> list[list[str]]:
    """Per run, the fixed games' paired change once trained on against not yet trained on, at the same steps
    (`strata.report.paired.trained_effect`): how much of the fixed-set gain is the policy learning those games.
    A run's ``trained.jsonl`` is written here, replayed from its run folder, the first time a report reads the run
    (at the end of the invocation that ran it, or with --report-only): a replay that fails costs a table row, never
    the runs still to come."""
    table = []
    for algorithm in algorithms:
        runs = []
        for name in (run_name(algorithm, seed) for seed in seeds):
            record, outcomes = runs_dir / name / "trained.jsonl", runs_dir / name / "outcomes.jsonl"
            if not record.is_file() and (out / name / "config.yaml").is_file():
                try:
                    write_outcomes(trained_games(out / name, root=agent), record)
                except ReplayError as error:
                    print(f"no trained.jsonl for {name}: {error}", file=sys.stderr)
            if record.is_file() and outcomes.is_file():
                runs.append((read_outcomes(outcomes), trained_by_step(read_outcomes(record))))
                table += _trained_row(name, *runs[-1])
        if len(runs) > 1:  # the seeds together: each run's games its own units (`strata.report.paired.runs_as_one`)
            table += _trained_row(f"{algorithm}, {len(runs)} runs pooled", *runs_as_one(runs))
    return table


def _trained_row(name: str, outcomes: list[dict], trained: dict[int, set[str]]) -> list[list[str]]:
    """`trained_rows`' row of one run or of runs pooled; none where no step has games of both kinds."""
    effect = trained_effect(outcomes, trained, "train_fixed")
    if effect is None:
        return []
    return [[name, ", ".join(map(str, effect.steps)), str(effect.difference.games), f"{100 * effect.trained:+.1f}",
             f"{100 * effect.not_yet:+.1f}", effect.difference.as_points()]]


def draws_line(out: Path, names: list[str], rl_games: int) -> str:
    """How often a run's training drew each RL game: steps x tasks a step over the pool, the first link of transfer
    (a pool drawn more than once a run lets the policy learn its games rather than the skill)."""
    parts = []
    for name in names:
        metrics = out / name / "metrics.jsonl"
        tasks = saved_setting(out / name, "data.train_batch_size")
        if not metrics.is_file() or not isinstance(tasks, int):
            continue
        steps = sum("timing_s/step" in json.loads(line)["data"]
                    for line in metrics.read_text(encoding="utf-8").splitlines())
        parts.append(f"{name} {steps} x {tasks} = {steps * tasks} draws ({steps * tasks / rl_games:.2f} a game)")
    return f"RL games: {rl_games} (rl_train); drawn by " + ("; ".join(parts) or "no run yet") + "."


def write_report(out: Path, runs_dir: Path, agent: Path, algorithms: list[str], seeds: list[int]) -> Path:
    runs = load_runs(runs_dir, algorithms, seeds)
    names = [run_name(a, s) for a in algorithms for s in seeds]
    plot(runs, out / "curve.png")
    manifest = json.loads((agent / "agent.json").read_text(encoding="utf-8"))
    walls = {name: json.loads((runs_dir / name / "wall_time.json").read_text())
             for name in names if (runs_dir / name / "wall_time.json").is_file()}
    control_table, versus_control = against(runs, "control")
    text = "\n".join([
        "# ALFWorld learning benchmark (generated by benchmarks/bench_alfworld_learning.py)", "",
        f"Agent: {agent}: held-out success at build {manifest['held_out_success']:.1%} on "
        f"{manifest['splits']['valid_seen']['games']} games (in-process evaluation, StraTA, T=0.7)"
        + (f"; {manifest['train_fixed_success']:.1%} on its first "
           f"{min(manifest['recipe']['rl_eval_games'], manifest['recipe']['rl_games'])} RL games, "
           f"{manifest['train_fixed_refused_repeat_rate']:.1%} of their steps refused repeats"
           if "train_fixed_success" in manifest else "")
        + (f"; DAgger, {len(manifest['dagger']['rounds'])} round(s) from {manifest['dagger']['base']}: "
           f"fixed RL games {manifest['dagger']['train_fixed_change']} points (paired)"
           if "train_fixed_change" in manifest.get("dagger", {}) else "") + ".", "",
        draws_line(out, names, manifest["splits"]["rl_train"]["games"]), "",
        "## Targets", "", *targets(runs, versus_control), "",
        "## Paired change from step 0 (per game, averaged over seeds; 95% bootstrap interval over games, points)", "",
        "With several seeds, the success change's interval over runs as well resamples the runs too: the spread of "
        "RL itself, which the games' interval leaves out (`strata.report.paired.paired_difference_over_runs`).", "",
        markdown_table(["algorithm", "set", "games", "steps", "success %", "success change", "over runs as well",
                        "admissible %", "admissible change"], paired_rows(runs)), "",
        "## Against the control (each algorithm's paired change minus the control's, same games)", "",
        markdown_table(["algorithm", "set", "steps", "games", "difference", "over runs as well"], control_table), "",
        "## Against GRPO (each algorithm's paired change minus GRPO's, same games; a seed plays every game with "
        "the same sampling seed in both)", "",
        markdown_table(["algorithm", "set", "steps", "games", "difference", "over runs as well"],
                       against(runs, "grpo")[0]), "",
        "## Curves (mean over games and seeds, 95% interval)", "",
        markdown_table(["algorithm", "set", "step", "success %", "95% interval"],
                       [[a, split, str(step), f"{100 * i.mean:.1f}", f"[{100 * i.low:.1f}, {100 * i.high:.1f}]"]
                        for a, rows in sorted(runs.items()) for split in ("train_fixed", "held_out")
                        for step, i in curve(rows, split)]), "",
        "## Fixed games trained on by then, against those not yet (change from step 0 at the same steps, points)", "",
        "RL draws its games in a random order, so at each validation some fixed games have been trained on and the "
        "others not yet, by chance: their difference is what training on a game adds to the skill's transfer.", "",
        markdown_table(["run", "steps", "games", "trained on", "not yet", "difference"],
                       trained_rows(out, runs_dir, algorithms, seeds, agent)), "",
        "## Where actions are refused (held-out, by verb and whether the task's object was in view)", "",
        markdown_table(["run", "step", "verb", "object in view", "steps", "admitted %"], situation_rows(out, names)),
        "",
        "## Held-out `take` steps with the object out of view, by what they follow", "",
        markdown_table(["run", "step", *FOLLOWS], take_rows(out, names)), "",
        "## Where the advantage goes (every dumped training step, by verb and whether the task's object was in "
        "view)", "",
        markdown_table(["run", "verb", "object in view", "steps", "mean advantage", "positive %"],
                       credit_rows(out, names)), "",
        "## Loops (validation steps that repeat a command the environment just refused, %)", "",
        markdown_table(["run", "step", "held_out", "train_fixed"], loop_rows(out, names)), "",
        "## Training sampling (at T) beside the fixed training games at validation sampling (T = 0.7)", "",
        "Refused repeats: steps that send again the command the environment just refused (a loop).", "",
        markdown_table(["run", "T", "steps", "training success %", "training admissible %",
                        "training refused repeats %", "flat groups %", "train_fixed success % (last validation)",
                        "train_fixed admissible %", "train_fixed refused repeats %"],
                       sampling_rows(out, runs_dir, names, SAMPLING_BLOCK)), "",
        "## Step time (episodes a step: tasks x strategies x trajectories a strategy; mean seconds over a run's "
        "steps)", "",
        markdown_table(["run", "steps", "episodes a step", *TIMINGS], timing_rows(out, names)), "",
        "## Memory (PSS of the run's process tree, MiB; largest sample of a step)", "",
        markdown_table(["run", "first step", "last step", "growth", "of it Ray's GCS and raylet",
                        "steady growth (medians)", "grew most (kind of process, medians)", "largest"],
                       memory_rows(runs_dir, names)), "",
        "Wall time per run: " + ", ".join(f"{k} {v['seconds'] / 60:.1f} min ({v['steps']} steps"
                                          + "".join(f"; {o}" for o in [*v.get("recipe_variables", []),
                                                                        *v.get("overrides", [])]) + ")"
                                          for k, v in walls.items()), "",
    ])
    report = out / "RESULTS.md"
    report.write_text(text, encoding="utf-8")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--agent", type=Path, help="a built agent folder (default: OUT/agent, built if missing)")
    defaults = AgentRecipe()
    parser.add_argument("--agent-width", type=int, default=defaults.width, help="the built agent's hidden size")
    parser.add_argument("--agent-steps", type=int, default=defaults.steps, help="the built agent's warm-start steps")
    parser.add_argument("--agent-lr", type=float, default=defaults.lr, help="the built agent's warm-start rate")
    parser.add_argument("--dagger-rounds", type=int, default=defaults.dagger_rounds,
                        help="DAgger rounds after the build (0: the base is the agent)")
    parser.add_argument("--agent-action-shares", type=int, nargs=2, metavar=("STRATA", "FLAT"),
                        help="the built agent's action examples a warm-start batch of 32 holds under StraTA's and "
                             "the flat baselines' prompts (default: the build's, 16 and 10)")
    parser.add_argument("--runs-dir", type=Path, default=ROOT / "benchmarks" / "runs" / "alfworld",
                        help="where each run's outcomes.jsonl, memory.jsonl and wall_time.json go")
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS), choices=ALGORITHMS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--test-freq", type=int, default=10, help="train_fixed every this many steps")
    parser.add_argument("--held-out-games", type=int, default=300)
    parser.add_argument("--train-fixed-games", type=int, default=64)
    parser.add_argument("--train-temperature", type=float,
                        help="the training rollout's sampling temperature (default: the recipe's, the spec's 1.0; "
                             "validation samples at 0.7 either way)")
    parser.add_argument("--override", type=hydra_override, action="append", default=[],
                        help="a Hydra override every run gets (repeatable), e.g. actor_rollout_ref.actor.kl_loss_coef="
                             "0.1; recorded beside each run's wall time. Give such runs their own --out and --runs-dir")
    parser.add_argument("--memory-every", type=float, default=20.0, help="seconds between memory samples")
    parser.add_argument("--report-only", action="store_true", help="only read the runs already recorded")
    args = parser.parse_args()
    out = args.out.resolve()
    agent = (args.agent or out / "agent").resolve()
    runs_dir = args.runs_dir.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        build_agent(agent, args.held_out_games,
                    AgentRecipe(args.agent_width, args.agent_steps, args.agent_lr, args.dagger_rounds,
                                tuple(args.agent_action_shares) if args.agent_action_shares else None))
        sets = write_game_sets(agent, out / "sets", args.held_out_games, args.train_fixed_games)
        for seed in args.seeds:
            for algorithm in args.algorithms:
                seconds = train(out, runs_dir, agent, sets, algorithm, seed, args.steps, args.test_freq,
                                args.memory_every, chosen_overrides(args.train_temperature, args.override))
                print(f"{run_name(algorithm, seed)}: {seconds / 60:.1f} min", flush=True)
    report = write_report(out, runs_dir, agent, args.algorithms, args.seeds)
    print(report.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
