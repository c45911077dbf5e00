"""Turn the validation metrics an evaluation run logged into its evaluation JSON (`EvalResult`).

The evaluation recipes run the trainer in val-only mode with verl's file logger; this reads the
``val/...`` metrics of that run (the names `strata.trainer.metrics.validation_metrics` logs) and writes
the per-seed file that ``strata report-eval`` and ``strata model-card`` read.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from strata.report.dumps import dump_files, pick_step, read_step, rollouts_dir
from strata.report.schema import ALL_SUBTASKS, EvalResult, EvalSchemaError, SubtaskResult, TaskOutcome


def eval_result_from_metrics(
    metrics: Mapping[str, float], seed: int, split: str, checkpoint: str | None = None, step: int | None = None
) -> EvalResult:
    """The evaluation of one logged validation (one step's metrics).

    Raises:
        EvalSchemaError: a metric the evaluation needs is not logged (a log of another trainer, or cut short
            inside the step's record), named, rather than a KeyError's traceback.
    """
    prefix = "val/average/metrics/"
    if prefix + "success_rate" not in metrics:
        raise EvalSchemaError("the log holds no validation metrics (val/average/metrics/success_rate)")
    subtasks = [name for name in ALL_SUBTASKS if f"val/{name}/metrics/num_tasks" in metrics]
    needed = [*(prefix + name for name in ("num_tasks", "format_rate", "episode_length")),
              *(f"val/{name}/metrics/success_rate" for name in subtasks)]
    missing = [key for key in needed if key not in metrics]
    if missing:
        raise EvalSchemaError(f"the validation metrics lack {', '.join(missing)}")
    per_subtask = {
        name: SubtaskResult(float(metrics[f"val/{name}/metrics/success_rate"]),
                            int(metrics[f"val/{name}/metrics/num_tasks"]),
                            _optional(metrics, f"val/{name}/metrics/score"))
        for name in subtasks
    }
    return EvalResult(
        seed=seed,
        split=split,
        num_tasks=int(metrics[prefix + "num_tasks"]),
        success_rate=float(metrics[prefix + "success_rate"]),
        per_subtask=per_subtask,
        format_rate=float(metrics[prefix + "format_rate"]),
        mean_episode_length=float(metrics[prefix + "episode_length"]),
        score=_optional(metrics, prefix + "score"),
        end_reasons=_end_reasons(metrics),
        checkpoint=checkpoint,
        step=step,
    )


def _optional(metrics: Mapping[str, float], key: str) -> float | None:
    """A metric logged only where the environment has it (the progress score), else None."""
    return float(metrics[key]) if key in metrics else None


def _end_reasons(metrics: Mapping[str, float]) -> dict[str, int] | None:
    """Episode counts per end reason (``val/end_reason/<reason>``), None in logs from before they were logged."""
    prefix = "val/end_reason/"
    counts = {key.removeprefix(prefix): int(value) for key, value in metrics.items() if key.startswith(prefix)}
    return counts or None


def episodes_from_dumps(run: str | Path, step: int) -> tuple[TaskOutcome, ...]:
    """Each task's outcome in the validation ``step`` dumped in ``run`` (``run.dir``): what pass@k over seeds
    needs and the metrics log does not hold. `EvalResult` checks them against the logged rates.

    Raises:
        DumpError: ``run`` has no validation dumps of ``step``.
        EvalSchemaError: a dumped record is damaged.
    """
    rollouts = rollouts_dir(run)
    steps = dump_files(rollouts, "valid")
    read = read_step(steps[pick_step(steps, step, "valid", rollouts)])
    if read.skipped:
        raise EvalSchemaError(f"{read.skipped_line()}: a task's outcome is missing")
    return tuple(TaskOutcome(record["task"]["index"], record["task"]["subtask"],
                             bool(record["strategies"][0]["trajectories"][0]["won"]))
                 for record in read.records)
