"""`strata doctor`: every start-up check on this machine for a recipe or config, one line each, in 7-20 s.

A recipe is run as the user runs it (its variables, working folder and exports such as ``HF_HUB_OFFLINE``
all count) with ``STRATA_DOCTOR=1``, which makes ``strata.trainer.main`` run the checks instead of training,
and ``DRY_RUN=1``, which makes the recipes skip what follows the trainer. Only a file that declares itself a
recipe (a ``# strata-recipe: train`` or ``evaluate`` line, `strata.recipes.check_recipe`) is run; anything
else is refused before bash sees it, with one ``error:`` line. The recipe chooses its Python as a run does, and the
checks run in that interpreter, so they are about the run's packages (the ``python`` line names it). Exit status:
0 all fine, 1 only warnings, 2 an error that would fail the run (or a config that does not compose). When the run
would join a Ray cluster (``RAY_ADDRESS``), the machine's own checks run on every node of it, each line named
``check@node``, and this machine's own errors count as warnings.

What the libraries print while the checks run (verl's platform probe, its validation banner, Python
warnings) is held back, so the table is all there is; ``strata doctor --verbose`` (``STRATA_DOCTOR=verbose``)
prints it after the table. The time in the summary is the wall time since ``strata doctor`` started: bash,
Python's imports and composing the recipe's config take most of it, the checks a fraction.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from strata.recipes import RecipeError, check_recipe
from strata.trainer.checks.packages import DOCTOR_PYTHON_ENV
from strata.trainer.checkup import DOCTOR_ENV, START_ENV, VERBOSE, process_start

EXAMPLE = ("strata doctor recipes/train-strata-alfworld-text-qwen2.5-1.5b.sh\n"
           "  strata doctor recipes/train-strata-alfworld-text-qwen2.5-7b.sh trainer.nnodes=2\n"
           "  strata doctor --config-name strata_trainer data.train_files=... (a config in configs/)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", nargs="?", help="a recipe script (recipes/train-*.sh, recipes/evaluate-*.sh, "
                                                  "with its `# strata-recipe:` line) to check as it would run")
    parser.add_argument("--config-name", help="check a config in configs/ instead of a recipe")
    parser.add_argument("--verbose", action="store_true",
                        help="also print what the libraries print during the checks (held back by default)")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, passed through as to the recipe")


def run(args: argparse.Namespace) -> int:
    os.environ[START_ENV] = repr(process_start() or time.time())
    if args.verbose:
        os.environ[DOCTOR_ENV] = VERBOSE
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
    # The recipe picks its interpreter as it does for a run (PY=, else the project's .venv, else python on PATH), and
    # the checks run in it: they are the run's. This one's path lets the `python` line say when the two differ.
    env = {**os.environ, DOCTOR_ENV: VERBOSE if args.verbose else "1", "DRY_RUN": "1",
           DOCTOR_PYTHON_ENV: sys.executable}
    return subprocess.run(["bash", args.target, *args.overrides], env=env, check=False).returncode
