"""`strata compare`: several runs' evaluations side by side, refused unless they played the same games."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from strata.report.cli_eval import publish
from strata.report.compare import compare_reports
from strata.report.eval_table import read_evaluation_inputs
from strata.report.schema import EvalSchemaError

EXAMPLE = ("strata compare --run strata eval/strata/eval_seed*.json --run gigpo eval/gigpo/eval_seed*.json "
           "--out eval/compare")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run", nargs="+", action="append", required=True, metavar=("NAME", "EVALUATION"),
                        help="a run's name then its evaluation JSONs (one per seed); give --run once per run")
    parser.add_argument("--out", required=True, help="output stem: writes OUT.md and OUT.json")


def run(args: argparse.Namespace) -> int:
    try:
        runs = {}
        for name, *paths in args.run:
            if not paths:
                raise EvalSchemaError(f"--run {name} names no evaluation JSON")
            if name in runs:
                raise EvalSchemaError(f"--run {name} is given twice")
            runs[name] = read_evaluation_inputs(paths)
        comparison = compare_reports(runs)
    except EvalSchemaError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return publish(comparison, Path(args.out))
