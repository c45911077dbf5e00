"""`strata report-eval`: combine per-seed evaluation JSONs into the per-subtask table."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from strata.report.eval_table import read_evaluation_inputs
from strata.report.schema import EvalSchemaError

EXAMPLE = "strata report-eval eval/seed0.json eval/seed1.json eval/seed2.json --out eval/report"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("evaluations", nargs="+", help="evaluation JSONs, one per seed (strata.report.schema)")
    parser.add_argument("--out", required=True, help="output stem: writes OUT.md and OUT.json")


def run(args: argparse.Namespace) -> int:
    try:
        report = read_evaluation_inputs(args.evaluations)
    except EvalSchemaError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return publish(report, Path(args.out))


def publish(report: Any, out: Path) -> int:
    """Write ``report`` (``to_markdown()``, ``to_json()``) as ``OUT.md`` and ``OUT.json``, print it, and return the
    exit status: 2 with one ``error:`` line when a file cannot be written."""
    markdown, data = out.with_name(out.name + ".md"), out.with_name(out.name + ".json")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text(report.to_markdown() + "\n")
        data.write_text(report.to_json() + "\n")
    except OSError as error:
        print(f"error: cannot write {markdown} ({error.strerror}: {error.filename})", file=sys.stderr)
        return 2
    print(report.to_markdown())
    print(f"\nwritten: {markdown} {data}")
    return 0
