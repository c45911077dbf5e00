"""What ``strata.trainer.main --doctor`` does with a composed config: run every start-up check, print one line
each and a summary, and return the doctor's exit status (0 fine, 1 only warnings, 2 an error).

`strata doctor` (strata.trainer.doctor) runs a recipe with ``STRATA_DOCTOR`` set, and the recipe's trainer
command lands here; the two modules are apart so that the trainer's entry point and the command that starts it
do not import each other. What the libraries print while the checks run (verl's platform probe, its validation
banner, Python warnings) is held back, so the table is all there is; ``STRATA_DOCTOR=verbose`` prints it after.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator

from omegaconf import DictConfig, OmegaConf

from strata.trainer.checks import Finding, Level, run_checks
from strata.trainer.checks.nodes import joins_cluster
from strata.trainer.preflight import judged

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

