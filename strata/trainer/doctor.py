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
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator

from omegaconf import DictConfig, OmegaConf

from strata.recipes import RecipeError, check_recipe
from strata.trainer.checks import Finding, Level, run_checks
from strata.trainer.checks.nodes import joins_cluster
from strata.trainer.checks.packages import DOCTOR_PYTHON_ENV
from strata.trainer.preflight import judged

EXAMPLE = ("strata doctor recipes/train-strata-alfworld-text-qwen2.5-1.5b.sh\n"
           "  strata doctor recipes/train-strata-alfworld-text-qwen2.5-7b.sh trainer.nnodes=2\n"
           "  strata doctor --config-name strata_trainer data.train_files=... (a config in configs/)")
DOCTOR_ENV = "STRATA_DOCTOR"
START_ENV = "STRATA_DOCTOR_START"  # time.time() when `strata doctor` started, for the wall time
VERBOSE = "verbose"


def exit_status(findings: list[Finding]) -> int:
    levels = {f.level for f in findings}
    return 2 if Level.ERROR in levels else 1 if Level.WARNING in levels else 0


def format_report(findings: list[Finding], seconds: float, checks_seconds: float | None = None) -> str:
    """One line per check result, then the summary (``OK`` when nothing is wrong) with the wall time
    ``seconds``, and how much of it the checks took when that is given."""
    errors = sum(f.level is Level.ERROR for f in findings)
    warnings = sum(f.level is Level.WARNING for f in findings)
    took = f"{seconds:.1f} s"
    if checks_seconds is not None:
        took += f" (the checks {checks_seconds:.1f} s; the rest is Python's start-up and composing the config)"
    if errors or warnings:
        summary = f"strata doctor: {errors} error(s) (the run would fail), {warnings} warning(s); checked in {took}"
    else:
        summary = f"strata doctor: OK, {len(findings)} checks passed in {took}"
    return "\n".join([*(f.line() for f in findings), summary])


def process_start() -> float | None:
    """When this process started (``time.time()`` scale); None when psutil (Ray's dependency) is missing."""
    try:
        import psutil
    except ImportError:
        return None
    return psutil.Process().create_time()


def started_at() -> float | None:
    """When this doctor started: `strata doctor`'s own start, passed to the recipe it runs, else this
    process's start; None when neither is known."""
    try:
        return float(os.environ[START_ENV])
    except (KeyError, ValueError):
        return process_start()


@contextlib.contextmanager
def held_output() -> Iterator[list[str]]:
    """Hold back everything written to stdout and stderr inside: Python's ``sys.stdout``/``sys.stderr`` and
    warnings, and file descriptors 1 and 2 (C libraries, logging handlers bound to the original streams);
    the list holds it afterwards."""
    held: list[str] = []
    text = io.StringIO()
    with tempfile.TemporaryFile(mode="w+b") as sink:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            with (contextlib.redirect_stdout(text), contextlib.redirect_stderr(text),
                  warnings.catch_warnings(record=True) as caught):
                yield held
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            sink.seek(0)
            held += sink.read().decode("utf-8", "replace").splitlines()
            held += text.getvalue().splitlines()
            held += [f"{w.filename}:{w.lineno}: {w.category.__name__}: {w.message}" for w in caught]


def cluster_findings(config: DictConfig) -> list[Finding]:
    """The machine's own checks on every node of the Ray cluster the run would join (`strata.trainer.checks.nodes`),
    connected as the run connects (its address and runtime env); one ERROR when the cluster does not answer."""
    import ray

    from strata.trainer.checks.nodes import check_nodes

    address = OmegaConf.select(config, "ray_kwargs.ray_init.address") or os.environ["RAY_ADDRESS"]
    runtime_env = OmegaConf.to_container(OmegaConf.select(config, "ray_kwargs.ray_init.runtime_env") or {})
    try:
        ray.init(address=address, runtime_env=runtime_env, logging_level="ERROR")
    except (ConnectionError, RuntimeError, ValueError) as err:
        return [Finding("cluster", Level.ERROR, f"cannot join the Ray cluster at {address}: {err}")]
    try:
        return check_nodes(config)
    finally:
        ray.shutdown()


def run_doctor(config: DictConfig) -> int:
    """Run every check on ``config``, print the report, return the exit status."""
    start = time.perf_counter()
    with held_output() as held:
        findings = judged(run_checks(config), config, os.environ)
        if joins_cluster(config, os.environ):
            findings += judged(cluster_findings(config), config, os.environ)
    checks_seconds = time.perf_counter() - start
    began = started_at()
    wall = time.time() - began if began is not None else checks_seconds
    print(format_report(findings, wall, checks_seconds if began is not None else None), flush=True)
    held = [line for line in held if line.strip()]
    if held and os.environ.get(DOCTOR_ENV) == VERBOSE:
        print(f"\n{len(held)} line(s) the libraries printed during the checks:", *held, sep="\n", flush=True)
    elif held:
        print(f"({len(held)} line(s) of library output held back: strata doctor --verbose prints them)", flush=True)
    return exit_status(findings)


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
