"""Read a run's trajectory dumps (``RUN/rollouts/<kind>/step_<NNNNNN>-<writer>.jsonl.gz``).

Each file is gzip-compressed JSON Lines, one task's group per line, possibly written as several gzip
members (``gzip.open`` reads them all). Several writer processes share a step, each with its own file;
when two lines of one step carry the same task index (a resumed run re-did the step), the line from the
most recently modified file wins. The line format is documented where it is written
(``strata/workflow/dump.py``).
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from pathlib import Path
from typing import Any

KINDS = ("train", "valid")
SCHEMA = 1
_FILE = re.compile(r"step_(\d+)-.+\.jsonl\.gz")


class DumpError(Exception):
    """A problem with the dumps the user asked for; the message is one line that says what to do."""


def rollouts_dir(run: str | Path) -> Path:
    """The run's ``rollouts`` folder; ``run`` may be the run folder or the rollouts folder itself."""
    run = Path(run)
    if not run.is_dir():
        raise DumpError(f"no run folder at {run}")
    if (run / "rollouts").is_dir():
        return run / "rollouts"
    if any((run / kind).is_dir() for kind in KINDS):
        return run
    raise DumpError(f"no rollouts/ folder in {run}: this run wrote no trajectory dumps "
                    f"(they go to run.dir/rollouts, as run.dump.* in the config chooses)")


def dump_files(rollouts: Path, kind: str) -> dict[int, list[Path]]:
    """Step -> its dump files, for one kind (``train`` or ``valid``), steps in increasing order."""
    steps: dict[int, list[Path]] = {}
    folder = rollouts / kind
    for path in sorted(folder.iterdir()) if folder.is_dir() else ():
        match = _FILE.fullmatch(path.name)
        if match:
            steps.setdefault(int(match.group(1)), []).append(path)
    return dict(sorted(steps.items()))


def pick_step(steps: dict[int, list[Path]], step: int | None, kind: str, rollouts: Path) -> int:
    """``step``, or the latest one when None; a clear error when there is none or it does not exist."""
    if not steps:
        raise DumpError(f"no {kind} dumps in {rollouts / kind}")
    if step is None:
        return max(steps)
    if step not in steps:
        raise DumpError(f"no {kind} dumps for step {step}; steps with {kind} dumps: {_listing(steps)}")
    return step


def load_step(files: list[Path]) -> list[dict[str, Any]]:
    """A step's task records sorted by (split, task index); for a duplicate task the newest file's line wins
    (a validation step may cover two splits whose indices overlap, hence the split in the key)."""
    by_task: dict[tuple[str, int], dict[str, Any]] = {}
    for path in sorted(files, key=lambda path: (path.stat().st_mtime, path.name)):
        for record in read_records(path):
            by_task[record["task"]["split"], record["task"]["index"]] = record
    return [by_task[key] for key in sorted(by_task)]


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every line of one dump file; a corrupt or truncated file raises a DumpError naming it."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            records = [json.loads(line) for line in handle if line.strip()]
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DumpError(f"cannot read {path}: corrupt or truncated ({error})") from error
    for record in records:
        if not isinstance(record, dict) or record.get("schema") != SCHEMA:
            found = record.get("schema") if isinstance(record, dict) else None
            raise DumpError(f"{path}: dump schema {found}, this viewer reads schema {SCHEMA}")
    return records


def find_task(records: list[dict[str, Any]], index: int, where: str) -> dict[str, Any]:
    """The record of task ``index``; the error lists the indices there are."""
    for record in records:
        if record["task"]["index"] == index:
            return record
    indices = ", ".join(str(record["task"]["index"]) for record in records)
    raise DumpError(f"no task {index} in {where}; tasks: {indices}")


def _listing(steps: dict[int, list[Path]]) -> str:
    return ", ".join(str(step) for step in steps)
