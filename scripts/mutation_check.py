"""Check mutants of one file against chosen test files, one forked pytest per mutant, without mutmut's runner.

Why: on a busy shared machine mutmut's own runner spends most of its time re-running its stats and clean
test passes, and its wall-clock timeouts fire on slow pytest start-ups (a timeout counts as killed). This
runs inside the ``mutants/`` folder a `scripts/mutation.sh` run generated, selects a mutant the way
mutmut's trampolines do (``MUTANT_UNDER_TEST``), and runs only the given tests: a kill here is a kill
by those tests, so the rate is a lower bound of what the whole selection would reach.

    cd outputs/mutation/mutants
    STRATA_TEST_ASSET_CACHE=../.assets ../../../.venv/bin/python ../../../scripts/mutation_check.py \\
        strata/workflow/rows.py tests/workflow/test_rows_exact.py tests/workflow/test_dump.py

``MUTANTS="name ..."`` checks only those mutants (full or short names, as the lines print them).

Prints one ``KILLED``/``SURVIVED``/``TIMEOUT`` line per mutant, then the count; a first run on the unmutated code
must pass, or the check stops (every mutant would look killed). The parent collects the tests once before
forking, so torch, transformers, verl and the test modules are imported once, not once per mutant
(mutmut's trampolines read ``MUTANT_UNDER_TEST`` at call time, so an imported module still switches).
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

# Libraries some tests import inside a test function (collection does not reach them): imported once here.
HEAVY_IMPORTS = ("torch", "transformers", "verl.trainer.ppo.core_algos")
TIMEOUT_FACTOR, TIMEOUT_CONSTANT_S = 5, 20  # as scripts/mutation.cfg's timeout_multiplier / timeout_constant
ARGS = ["-q", "-x", "-p", "no:cacheprovider", "-p", "no:randomly"]


TIMED_OUT = -1


def run_tests(mutant: str, tests: list[str], timeout_s: float | None = None) -> int:
    """pytest's exit code for ``tests`` with ``mutant`` active, in a forked child (the parent stays clean);
    `TIMED_OUT` when it ran past ``timeout_s`` (a mutant that loops forever: its process group is killed)."""
    pid = os.fork()
    if pid == 0:
        os.setpgrp()  # the child's own group, so a timeout also ends the processes its tests started
        os.environ["MUTANT_UNDER_TEST"] = mutant
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os._exit(int(pytest.main([*ARGS, *tests])))
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if deadline is not None and time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return TIMED_OUT
        time.sleep(0.1)


def preimport(tests: list[str]) -> None:
    """Import every module the tests need, once, in the parent (its output discarded)."""
    for name in HEAVY_IMPORTS:
        importlib.import_module(name)
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        pytest.main([*ARGS, "--collect-only", *tests])
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)


def mutant_names(source: str) -> list[str]:
    """Every mutant mutmut generated for ``source`` (from its ``.meta`` file beside the mutated copy)."""
    return sorted(json.loads(Path(f"{source}.meta").read_text())["exit_code_by_key"])


def main(source: str, *tests: str) -> int:
    """Check every mutant of ``source``; returns 0 (a survivor is a finding, not an error)."""
    sys.path.insert(0, os.getcwd())
    preimport(list(tests))
    started = time.perf_counter()
    baseline = run_tests("none.x_none__mutmut_0", list(tests))
    if baseline != 0:
        print(f"the tests fail on the unmutated code (pytest exit {baseline}); fix that first")
        return 1
    # A mutant whose tests run this much longer than the clean run's loops forever (mutmut's rule, and like
    # mutmut, a timeout counts as killed: the tests would not pass).
    timeout_s = TIMEOUT_FACTOR * (time.perf_counter() - started) + TIMEOUT_CONSTANT_S
    killed = 0
    names = mutant_names(source)
    if os.environ.get("MUTANTS"):  # re-check only these (e.g. the survivors, against the tests added for them)
        wanted = set(os.environ["MUTANTS"].split())
        names = [name for name in names if name in wanted or name.rsplit(".", 1)[-1] in wanted]
    for name in names:
        started = time.perf_counter()
        code = run_tests(name, list(tests), timeout_s)
        killed += code != 0
        verdict = "TIMEOUT" if code == TIMED_OUT else "KILLED" if code else "SURVIVED"
        print(f"{verdict} {name} {code} {time.perf_counter() - started:.1f}s", flush=True)
    print(f"{killed}/{len(names)} killed ({100 * killed / max(len(names), 1):.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
