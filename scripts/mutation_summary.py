"""Per-file table and survivor list of a mutmut run (scripts/mutation.sh), as Markdown.

Why not ``mutmut results``: it lists survivors but no per-file counts or kill rate, and
benchmarks/RESULTS_mutation.md needs both. Reads the ``*.meta`` files mutmut writes beside each mutant.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from mutmut.stats import status_by_exit_code

# A mutant no test runs is a survivor too: nothing would notice the change. "not checked": an interrupted
# run, counted apart (neither killed nor survived).
NOT_KILLED = {"survived", "no tests", "suspicious", "skipped"}
DEAD = {"killed", "timeout", "segfault", "caught by type check"}


def summarise(mutants_dir: Path) -> tuple[list[tuple[str, Counter]], list[tuple[str, str]]]:
    """(file, status counts) per mutated file and (status, mutant name) for every mutant not killed."""
    table: list[tuple[str, Counter]] = []
    left: list[tuple[str, str]] = []
    for meta in sorted(mutants_dir.rglob("*.py.meta")):
        exit_codes = json.loads(meta.read_text())["exit_code_by_key"]
        if not exit_codes:
            continue
        counts: Counter = Counter()
        for name, code in sorted(exit_codes.items()):
            status = status_by_exit_code[code]
            counts[status] += 1
            if status in NOT_KILLED:
                left.append((status, name))
        table.append((str(meta.relative_to(mutants_dir))[: -len(".meta")], counts))
    return table, left


def main(mutants_dir: str = "mutants") -> None:
    """Print the table (a timeout counts as killed, as in mutmut) and the survivors."""
    table, left = summarise(Path(mutants_dir))
    print("| file | mutants | checked | killed | timeout | survived | no tests | kill rate (of checked) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    total: Counter = Counter()
    for path, counts in table:
        total.update(counts)
        _row(path, counts)
    _row("**all**", total)
    print(f"\n{len(left)} not killed:")
    for status, name in left:
        print(f"- {status}: `{name}`")


def _row(label: str, counts: Counter) -> None:
    n = sum(counts.values())
    checked = n - counts["not checked"]
    dead = sum(counts[status] for status in DEAD)
    rate = f"{100 * dead / checked:.1f}%" if checked else "-"
    print(
        f"| {label} | {n} | {checked} | {counts['killed']} | {counts['timeout']} | {counts['survived']} | "
        f"{counts['no tests']} | {rate} |"
    )


if __name__ == "__main__":
    main(*sys.argv[1:])
