"""`strata curve`: the validation success rate per step from a run's logs, as a table and a plot."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from strata.report.curve import SUCCESS_KEY, extract_curve, write_curve
from strata.report.logs import LogError, read_metrics
from strata.report.run_files import find_logs

EXAMPLE = "strata curve --run-dir outputs/run   (or --log outputs/run/metrics.jsonl --out outputs/run/curve)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run-dir", help="the run folder: its metric logs are found there, the curve written to "
                                          "RUN/curve unless --out says otherwise")
    parser.add_argument("--log", action="append", default=[],
                        help="verl JSONL (trainer.logger=[file]) or console log; repeat for a resumed run's "
                             "parts, oldest first (default: the logs found in --run-dir)")
    parser.add_argument("--out", help="folder for curve.md, curve.json and curve.png (default: RUN/curve)")
    parser.add_argument("--metric", default=SUCCESS_KEY,
                        help=f"metric key (default {SUCCESS_KEY}; per-subtask lines replace 'average')")
    parser.add_argument("--raw", action="store_true", help="print values as logged instead of in percent")


def run(args: argparse.Namespace) -> int:
    if not args.run_dir and not (args.log and args.out):
        print("error: give --run-dir, or --log and --out", file=sys.stderr)
        return 2
    try:
        logs = args.log or find_logs(args.run_dir)
        curve = extract_curve(read_metrics(logs), args.metric)
    except (KeyError, FileNotFoundError, LogError) as error:
        print(f"error: {error.args[0] if error.args else error}", file=sys.stderr)
        return 2
    files = write_curve(curve, args.out or Path(args.run_dir) / "curve", as_percent=not args.raw)
    print(curve.to_markdown(as_percent=not args.raw))
    print("\nwritten: " + " ".join(str(path) for path in files.values()))
    return 0
