"""`strata show`: read a run's trajectory dumps, one task's group in the terminal or a step as HTML."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from strata.report.dumps import KINDS, SCHEMA, DumpError, dump_files, find_task, pick_step, read_step, rollouts_dir
from strata.report.run_files import saved_setting
from strata.report.show import Node, step_summary, task_summary, task_tree, to_text
from strata.report.show_html import step_page

EXAMPLE = "strata show outputs/run --step 3 --task 5   |   strata show outputs/run --split valid --html valid.html"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", help="the run folder holding rollouts/ (or the rollouts folder itself)")
    parser.add_argument("--step", type=int, help="training step (default: the latest with dumps of --split)")
    parser.add_argument("--task", type=int, help="task index to render (default: list the step's tasks, render "
                                                 "the first)")
    parser.add_argument("--split", choices=KINDS, default="train",
                        help="train: the training rollouts (default); valid: the validation ones")
    parser.add_argument("--html", metavar="OUT.html",
                        help="write the whole step (every task) as one self-contained page instead of printing")


def run(args: argparse.Namespace) -> int:
    try:
        rollouts = rollouts_dir(args.run)
        steps = dump_files(rollouts, args.split)
        step = pick_step(steps, args.step, args.split, rollouts)
        loaded = read_step(steps[step])
        records = loaded.records
        where = f"{args.split} step {step}"
        if not records:  # named, since an empty or damaged file is what the user must look at
            skipped = f" ({loaded.skipped_line()})" if loaded.skipped else ""
            names = ", ".join(str(path) for path in steps[step][:3]) + (", ..." if len(steps[step]) > 3 else "")
            raise DumpError(f"the dump files of {where} ({names}) hold no readable task{skipped}")
        record = records[0] if args.task is None else find_task(records, args.task, where)
        skipped = f", {loaded.skipped} damaged record(s) skipped" if loaded.skipped else ""
        heading = f"{where}: {len(records)} task(s) from {len(steps[step])} file(s){skipped}; steps with dumps: " + \
            ", ".join(map(str, steps))
        title = f"strata show: {rollouts.parent.name} {where}" if args.html else None
        output = _render(records, record, heading, title, show_list=args.task is None, env=run_env(rollouts))
    except DumpError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if loaded.skipped:
        print(f"warning: {loaded.skipped_line()}", file=sys.stderr)
    if args.html:
        out = Path(args.html)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(output, encoding="utf-8")
        print(f"{heading}\nwritten: {out}")
    else:
        print(output)
    return 0


def run_env(rollouts: Path) -> str | None:
    """The run's ``env.name`` from the config.yaml the trainer writes beside rollouts/; None without one."""
    name = saved_setting(rollouts.parent, "env.name")
    return str(name) if name else None


def _render(records: list[dict], record: dict, heading: str, html_title: str | None, show_list: bool,
            env: str | None = None) -> str:
    """The HTML page of the step (``html_title`` given) or the terminal text; a missing key is a DumpError."""
    try:
        if html_title is not None:
            return step_page(records, html_title, env)
        colour = sys.stdout.isatty()
        listing = to_text(Node([(heading, "head")], [Node(task_summary(r, env)) for r in records]), colour) + "\n"
        listing += to_text(step_summary(records), colour) + "\n\n"
        return (listing if show_list else "") + to_text(task_tree(record, env), colour)
    except KeyError as error:
        raise DumpError(f"a record has no key {error}: not a schema-{SCHEMA} dump") from error
