"""Read a run's trajectory dumps (``RUN/rollouts/<kind>/step_<NNNNNN>-<writer>.jsonl.gz``).

Each file is gzip-compressed JSON Lines, one task's group per line, possibly written as several gzip
members (``gzip.open`` reads them all). Several writer processes share a step, each with its own file;
when two lines of one step carry the same task index (a resumed run re-did the step), the line from the
most recently modified file wins. The line format is documented where it is written
(``strata/workflow/dump.py``).

A writer killed in the middle of an append leaves its file's last gzip member cut short (and a damaged
disk block can break one in the middle). The reader decodes member by member, keeps every complete record,
and counts the damaged members as skipped records (one task each): a logged warning, and `strata show`
says how many, instead of refusing the whole step.
"""

from __future__ import annotations

import json
import logging
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

KINDS = ("train", "valid")
SCHEMA = 1
_FILE = re.compile(r"step_(\d+)-.+\.jsonl\.gz")
_GZIP_MAGIC = b"\x1f\x8b\x08"
_CHUNK = 1 << 16


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


@dataclass
class StepRecords:
    """A step's readable task records, and what was skipped.

    Args:
        records: sorted by (split, task index).
        skipped: damaged records left out (a gzip member cut short or corrupt, a line that is not JSON).
        damaged_files: the files they were in.
    """

    records: list[dict[str, Any]]
    skipped: int = 0
    damaged_files: list[Path] = field(default_factory=list)

    def skipped_line(self) -> str | None:
        """One line for the user when records were skipped, else None."""
        if not self.skipped:
            return None
        names = ", ".join(path.name for path in self.damaged_files[:3])
        more = ", ..." if len(self.damaged_files) > 3 else ""
        return (f"skipped {self.skipped} damaged record(s) in {len(self.damaged_files)} file(s) ({names}{more}), "
                f"e.g. a writer killed mid-append; every complete record was read")


def read_step(files: list[Path]) -> StepRecords:
    """A step's task records; for a duplicate task the newest file's line wins (a validation step may cover
    two splits whose indices overlap, hence the split in the key). Damaged records are counted, not fatal, and
    not logged: the caller says it once (`StepRecords.skipped_line`; `strata show` prints it, or its error
    when nothing was readable), where a logged warning would be a second line on stderr."""
    by_task: dict[tuple[str, int], dict[str, Any]] = {}
    skipped, damaged = 0, []
    for path in sorted(files, key=lambda path: (path.stat().st_mtime, path.name)):
        records, bad = read_file(path)
        if bad:
            skipped += bad
            damaged.append(path)
        for record in records:
            by_task[record["task"]["split"], record["task"]["index"]] = record
    return StepRecords([by_task[key] for key in sorted(by_task)], skipped, damaged)


def load_step(files: list[Path]) -> list[dict[str, Any]]:
    """`read_step`'s records only (damaged ones are skipped with a logged warning)."""
    step = read_step(files)
    if step.skipped:
        logger.warning("%s", step.skipped_line())
    return step.records


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every complete record of one dump file (damaged ones skipped, with a logged warning)."""
    records, skipped = read_file(path)
    if skipped:
        logger.warning("%s: skipped %d damaged record(s)", path, skipped)
    return records


def read_file(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Every complete record of one dump file and the number of damaged ones skipped.

    A file that cannot be opened raises a DumpError naming it; so does a record of another schema (the
    viewer would misread it, which is not damage).
    """
    try:
        data = path.read_bytes()
    except OSError as error:
        raise DumpError(f"cannot read {path}: {error}") from error
    records, skipped = [], 0
    for member in _gzip_members(data):
        if member is None:
            skipped += 1
            continue
        try:
            text = member.decode("utf-8")
        except UnicodeDecodeError:
            skipped += 1
            continue
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                skipped += 1
    for record in records:
        if not isinstance(record, dict) or record.get("schema") != SCHEMA:
            found = record.get("schema") if isinstance(record, dict) else None
            raise DumpError(f"{path}: dump schema {found}, this viewer reads schema {SCHEMA}")
    return records, skipped


def _gzip_members(data: bytes) -> Iterator[bytes | None]:
    """The decompressed content of each gzip member of ``data``; None for one that is cut short or corrupt.

    After a corrupt member, decoding resumes at the next gzip header; a member cut short ends the file.
    """
    view, position = memoryview(data), 0
    while position < len(data):
        if not data.startswith(_GZIP_MAGIC, position):
            if not data[position:].strip(b"\x00"):
                return  # zero padding after the last member, as gzip itself accepts
            yield None
            position = data.find(_GZIP_MAGIC, position + 1)
            if position < 0:
                return
            continue
        decoder, parts, start = zlib.decompressobj(wbits=31), [], position
        try:
            while not decoder.eof and position < len(data):
                chunk = view[position:position + _CHUNK]
                position += len(chunk)
                parts.append(decoder.decompress(chunk))
        except zlib.error:
            yield None
            position = data.find(_GZIP_MAGIC, start + 1)
            if position < 0:
                return
            continue
        if not decoder.eof:
            yield None  # cut short: the writer was killed mid-append
            return
        position -= len(decoder.unused_data)
        yield b"".join(parts)


def find_task(records: list[dict[str, Any]], index: int, where: str) -> dict[str, Any]:
    """The record of task ``index``; the error lists the indices there are."""
    for record in records:
        if record["task"]["index"] == index:
            return record
    indices = ", ".join(str(record["task"]["index"]) for record in records)
    raise DumpError(f"no task {index} in {where}; tasks: {indices}")


def _listing(steps: dict[int, list[Path]]) -> str:
    return ", ".join(str(step) for step in steps)
