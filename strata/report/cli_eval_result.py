"""`strata eval-result`: write an evaluation run's per-seed JSON and Markdown table from its metrics log."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from strata.envs.errors import TaskListError
from strata.envs.registry import all_splits, described_task_set
from strata.envs.task_list import read_task_list, task_list_digest
from strata.report.dumps import DumpError
from strata.report.eval_result import episodes_from_dumps, eval_result_from_metrics
from strata.report.eval_table import combine_evaluations
from strata.report.logs import LogError, read_metrics
from strata.report.run_files import saved_setting
from strata.report.schema import EvalSchemaError

EXAMPLE = ("strata eval-result --metrics outputs/eval/seed0/metrics.jsonl --seed 0 --split valid_seen "
           "--checkpoint checkpoints/run/global_step_150 --out outputs/eval/seed0")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--metrics", required=True, help="JSONL metrics (VERL_FILE_LOGGER_PATH) or console log")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--split", default="valid_seen", choices=all_splits(),
                        help="the evaluated split, recorded in the file (default valid_seen)")
    parser.add_argument("--checkpoint", default=None, help="the evaluated checkpoint, recorded in the file")
    parser.add_argument("--task-list", default=None,
                        help="the evaluated task list (parquet): its digest (which games, in which order) is recorded")
    parser.add_argument("--dumps", default=None,
                        help="the run folder (run.dir): its validation dumps give each task's outcome, which "
                             "`strata report-eval` needs for pass@k over seeds, and its config.yaml the horizon "
                             "(env.max_steps) recorded beside the numbers")
    parser.add_argument("--out", required=True, help="folder for eval_seed<SEED>.json and .md")


def run(args: argparse.Namespace) -> int:
    try:
        metrics = read_metrics([args.metrics])
        validated = [step for step, values in metrics.items() if "val/average/metrics/success_rate" in values]
        if not validated:
            raise EvalSchemaError(f"{args.metrics} holds no validation metrics")
        step = validated[-1]
        try:
            result = eval_result_from_metrics(metrics[step], args.seed, args.split, args.checkpoint, step)
        except EvalSchemaError as error:  # named: the log is what the user must look at
            raise EvalSchemaError(f"{args.metrics}, step {step}: {error}") from None
        if args.dumps:
            try:
                result = dataclasses.replace(result, episodes=episodes_from_dumps(args.dumps, step))
            except DumpError as error:  # run.dump.validation=false: the table stands, without pass@k
                print(f"warning: {error}; the tasks' outcomes are not recorded (no pass@k over seeds)",
                      file=sys.stderr)
            horizon = saved_setting(args.dumps, "env.max_steps")
            if isinstance(horizon, int) and horizon >= 1:
                result = dataclasses.replace(result, max_steps=horizon)
        if args.task_list:
            tasks = read_task_list(args.task_list)
            if len(tasks) == result.num_tasks:
                result = dataclasses.replace(result, task_list_sha256=task_list_digest(tasks),
                                             task_set=described_task_set(tasks))
            else:  # a part of it (data.val_max_samples): the list's digest would not name what was evaluated
                print(f"warning: {args.task_list} lists {len(tasks)} tasks but the validation evaluated "
                      f"{result.num_tasks}; its digest is not recorded", file=sys.stderr)
    except (EvalSchemaError, FileNotFoundError, TaskListError, LogError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"eval_seed{args.seed}"
    result.save(stem.with_suffix(".json"))
    table = combine_evaluations([result]).to_markdown()
    stem.with_suffix(".md").write_text(table + "\n")
    print(table)
    print(f"\nwritten: {stem}.json, {stem}.md")
    return 0
