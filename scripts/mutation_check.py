"""Check mutants of one file against chosen test files, one forked pytest per mutant, without mutmut's runner.

Why: on a busy shared machine mutmut's own runner spends most of its time re-running its stats and clean
test passes, and its wall-clock timeouts fire on slow pytest start-ups (a timeout counts as killed). This
runs inside the ``mutants/`` folder a `scripts/mutation.sh` run generated, selects a mutant the way
mutmut's trampolines do (``MUTANT_UNDER_TEST``), and runs only the given tests: a kill here is a kill
by those tests, so the rate is a lower bound of what the whole selection would reach.

    cd outputs/mutation/mutants
    STRATA_TEST_ASSET_CACHE=../.assets ../../../.venv/bin/python ../../../scripts/mutation_check.py \\
        strata/workflow/rows.py tests/workflow/test_rows_exact.py tests/workflow/test_dump.py

Prints one ``KILLED``/``SURVIVED`` line per mutant, then the count; a first run on the unmutated code
must pass, or the check stops (every mutant would look killed).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

ARGS = ["-q", "-x", "-p", "no:cacheprovider", "-p", "no:randomly"]


def run_tests(mutant: str, tests: list[str]) -> int:
    """pytest's exit code for ``tests`` with ``mutant`` active, in a forked child (the parent stays clean)."""
    pid = os.fork()
    if pid == 0:
        os.environ["MUTANT_UNDER_TEST"] = mutant
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os._exit(int(pytest.main([*ARGS, *tests])))
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def mutant_names(source: str) -> list[str]:
    """Every mutant mutmut generated for ``source`` (from its ``.meta`` file beside the mutated copy)."""
    return sorted(json.loads(Path(f"{source}.meta").read_text())["exit_code_by_key"])


def main(source: str, *tests: str) -> int:
    """Check every mutant of ``source``; returns 0 (a survivor is a finding, not an error)."""
    sys.path.insert(0, os.getcwd())
    baseline = run_tests("none.x_none__mutmut_0", list(tests))
    if baseline != 0:
        print(f"the tests fail on the unmutated code (pytest exit {baseline}); fix that first")
        return 1
    killed = 0
    names = mutant_names(source)
    for name in names:
        started = time.perf_counter()
        code = run_tests(name, list(tests))
        killed += code != 0
        print(f"{'KILLED' if code else 'SURVIVED'} {name} {code} {time.perf_counter() - started:.1f}s", flush=True)
    print(f"{killed}/{len(names)} killed ({100 * killed / max(len(names), 1):.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
