"""`strata doctor`: every start-up check on this machine for a recipe or config, one line each, in a second.

A recipe is run as the user runs it (its variables, working folder and exports such as ``HF_HUB_OFFLINE``
all count) with ``STRATA_DOCTOR=1``, which makes ``strata.trainer.main`` run the checks instead of training,
and ``DRY_RUN=1``, which makes the recipes skip what follows the trainer. Only a file that declares itself a
recipe (a ``# strata-recipe: train`` or ``evaluate`` line, `strata.recipes.check_recipe`) is run; anything
else is refused before bash sees it, with one ``error:`` line. Exit status: 0 all fine, 1 only
warnings, 2 an error that would fail the run (or a config that does not compose).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from omegaconf import DictConfig

from strata.recipes import RecipeError, check_recipe
from strata.trainer.checks import Finding, Level, run_checks

EXAMPLE = ("strata doctor recipes/train-strata-alfworld-text-qwen2.5-1.5b.sh\n"
           "  strata doctor recipes/train-strata-alfworld-text-qwen2.5-7b.sh trainer.nnodes=2\n"
           "  strata doctor --config-name strata_trainer data.train_files=... (a config in configs/)")
DOCTOR_ENV = "STRATA_DOCTOR"


def exit_status(findings: list[Finding]) -> int:
    levels = {f.level for f in findings}
    return 2 if Level.ERROR in levels else 1 if Level.WARNING in levels else 0


def format_report(findings: list[Finding], seconds: float) -> str:
    """One line per check result, then the summary (``OK`` when nothing is wrong)."""
    errors = sum(f.level is Level.ERROR for f in findings)
    warnings = sum(f.level is Level.WARNING for f in findings)
    if errors or warnings:
        summary = (f"strata doctor: {errors} error(s) (the run would fail), {warnings} warning(s); "
                   f"checked in {seconds:.1f} s")
    else:
        summary = f"strata doctor: OK, {len(findings)} checks passed in {seconds:.1f} s"
    return "\n".join([*(f.line() for f in findings), summary])


def run_doctor(config: DictConfig) -> int:
    """Run every check on ``config``, print the report, return the exit status."""
    start = time.perf_counter()
    findings = run_checks(config)
    print(format_report(findings, time.perf_counter() - start), flush=True)
    return exit_status(findings)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", nargs="?", help="a recipe script (recipes/train-*.sh, recipes/evaluate-*.sh, "
                                                  "with its `# strata-recipe:` line) to check as it would run")
    parser.add_argument("--config-name", help="check a config in configs/ instead of a recipe")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, passed through as to the recipe")


def run(args: argparse.Namespace) -> int:
    if args.config_name:
        from strata.trainer.main import main

        overrides = [args.target, *args.overrides] if args.target else args.overrides
        return main(["--doctor", "--config-name", args.config_name, *overrides])
    if not args.target:
        print("error: give a recipe script (recipes/train-*.sh, recipes/evaluate-*.sh) or --config-name NAME",
              file=sys.stderr)
        return 2
    try:
        check_recipe(args.target)  # read, not run: bash must never see a Makefile or the demo script
    except RecipeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    env = {**os.environ, DOCTOR_ENV: "1", "DRY_RUN": "1"}
    env.setdefault("PY", sys.executable)  # the interpreter strata runs in, unless the user names one
    return subprocess.run(["bash", args.target, *args.overrides], env=env, check=False).returncode
