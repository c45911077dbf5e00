"""A dumped step's episodes as a ``wandb.Table``: the trajectories where wandb users already look.

Users of verl and its peers read scalars in wandb and episodes elsewhere; this puts one row per episode of a
dumped step (the dump files `strata.workflow.dump` wrote, read back) into the run's wandb page: the task, its
subtask, the strategy, whether the episode entered the update, its reward, how it ended, its length and a plain
transcript (strategy, then each action and observation). ``run.dump.wandb_rows`` caps the rows per step.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from strata.report.dumps import dump_files, load_step

COLUMNS = ("step", "kind", "task", "subtask", "strategy", "kept", "reward", "end_reason", "length", "transcript")
TRANSCRIPT_CHARS = 4000
"""A transcript longer than this is cut (a 50-step ScienceWorld episode runs to ~20k characters)."""


def episode_rows(records: Sequence[dict[str, Any]], max_rows: int) -> list[list[Any]]:
    """One row per episode of the task ``records`` (dump schema), in task order, at most ``max_rows``.
    ``kept``: the episode entered the update (its strategy was kept and scored, and the environment did not
    cut it short); validation episodes are never trained on."""
    rows: list[list[Any]] = []
    for record in records:
        task = record["task"]
        for strategy in record["strategies"]:
            for trajectory in strategy["trajectories"]:
                if len(rows) == max_rows:
                    return rows
                rows.append([record["step"], record["kind"], f"{task['index']}: {record['task_description']}",
                             task["subtask"], strategy["strategy"] or "", bool(trajectory["trained"]),
                             float(trajectory["reward"]), trajectory["end_reason"], trajectory["num_steps"],
                             transcript(strategy["strategy"], trajectory)])
    return rows


def transcript(strategy: str | None, trajectory: dict[str, Any]) -> str:
    """The episode as text: the strategy, then per step the command sent (or the raw response when it had no
    action) and the observation."""
    lines = [f"strategy: {strategy}"] if strategy else []
    for step in trajectory["steps"]:
        said = step["command"] if step["command"] is not None else f"(no action) {step['response']}"
        lines.append(f"{step['step']}. > {said}\n{step['observation']}")
    text = "\n".join(lines)
    return text if len(text) <= TRANSCRIPT_CHARS else text[:TRANSCRIPT_CHARS] + " [...]"


def log_episode_table(run_dir: str | Path, kind: str, step: int, max_rows: int) -> int:
    """Log ``kind`` (train or valid) dumps of ``step`` in ``run_dir`` as ``strata/<kind>_episodes`` to the live
    wandb run at ``step``; the number of rows logged (0 when there is no run, no dump or ``max_rows`` is 0)."""
    import wandb

    rollouts = Path(run_dir) / "rollouts"
    files = dump_files(rollouts, kind).get(step) if rollouts.is_dir() else None
    if wandb.run is None or not files or max_rows == 0:
        return 0
    rows = episode_rows(load_step(files), max_rows)
    wandb.log({f"strata/{kind}_episodes": wandb.Table(columns=list(COLUMNS), data=rows)}, step=step)
    return len(rows)
