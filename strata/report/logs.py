"""Read the metrics of a verl run back from its logs: the JSONL file logger first, the console second.

verl 0.9.1 writes metrics two ways:

* ``trainer.logger=[...,file]``: ``verl.utils.tracking.FileLogger`` appends one JSON object per
  ``logger.log`` call, ``{"step": N, "data": {"key": value, ...}}``, to ``$VERL_FILE_LOGGER_PATH`` (default
  ``./<project_name>/<experiment_name>.jsonl``). It opens the file with mode ``wb``, so a resumed run
  overwrites the earlier part unless the path changes: pass every part, oldest first.
* ``console``: one line ``step:N - key:value - key:value ...`` per call (values as ``pprint`` prints
  them, numpy scalars as ``np.float64(0.5)``), behind Ray's ``(TaskRunner pid=...)`` prefix and colour
  codes, sometimes repeated by Ray.

Both print floats at full precision, so both give the same numbers (the file logger writes NaN as
``null``, read back as NaN). Several calls for one step (the
validation before training is logged at the resuming step) are merged; a later value for the same key wins.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

logger = logging.getLogger(__name__)

Metrics = dict[int, dict[str, float]]


class LogError(ValueError):
    """No metric log given holds a metrics line: each is empty, cut short inside its first record, or another
    kind of file. The message is one line naming them (a ValueError, as the tools' callers catch)."""


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_RAY_REPEAT = re.compile(r"\s*\[repeated \d+x across cluster\]\s*$")
# numpy 2 scalars print as ``np.float64(0.5)``: keep the number inside
_NUMPY_SCALAR = re.compile(r"^np\.\w+\((.*)\)$")
_CONSOLE_STEP = re.compile(r"(?:^|[\s)])step:(\d+)(?= - |\s*$)")


def read_metrics(paths: Sequence[str | Path]) -> Metrics:
    """Metrics per step from verl log files (JSONL or console, detected per file), merged in order.

    A file without any metrics line is a logged warning when another one has metrics (a resumed run's part that
    logged nothing), and a `LogError` naming the files when none has: then nothing the tools could write from
    them would be right, and a warning besides the tool's own error would be two lines for one problem.
    """
    merged: Metrics = {}
    empty: list[Path] = []
    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no log file at {path}; pass the JSONL written by trainer.logger=[file] "
                                    f"(VERL_FILE_LOGGER_PATH) or a saved console log")
        records = _jsonl_records(path) if is_jsonl_log(path) else _console_records(path)
        count = 0
        for step, data in records:
            merged.setdefault(step, {}).update(data)
            count += 1
        if not count:
            empty.append(path)
    if empty and not merged:
        raise LogError(f"no verl metrics in {', '.join(map(str, empty))} (empty, cut short, or not a log: neither "
                       f"JSONL records nor `step:N - key:value` lines); pass the JSONL written by "
                       f"trainer.logger=[file] (VERL_FILE_LOGGER_PATH) or a saved console log")
    for path in empty:
        logger.warning("%s holds no verl metrics lines (`step:N - key:value` or JSONL)", path)
    return dict(sorted(merged.items()))


def is_jsonl_log(path: str | Path) -> bool:
    """True when the first non-empty line is a verl FileLogger record."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.strip():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    return False
                return isinstance(record, dict) and "step" in record and "data" in record
    return False


def parse_console_line(line: str) -> tuple[int, dict[str, float]] | None:
    """``(step, metrics)`` from one console line, or None when the line is not a metrics line."""
    line = _RAY_REPEAT.sub("", _ANSI.sub("", line.rstrip("\n")))
    match = _CONSOLE_STEP.search(line)
    if not match:
        return None
    metrics = {}
    for item in line[match.end():].split(" - ")[1:]:
        key, _, value = item.rpartition(":")
        number = _number(value)
        if key and number is not None:
            metrics[key] = number
    return int(match.group(1)), metrics


def _jsonl_records(path: Path) -> Iterable[tuple[int, dict[str, float]]]:
    """The FileLogger records of ``path``; a line that is not one (a partial last line of a run killed
    mid-write, bytes that are not UTF-8, other JSON) is skipped with a warning, never a traceback."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                logger.warning("%s:%d is not JSON; skipping it", path, number)
                continue
            try:
                step, logged = int(record["step"]), dict(record["data"])
            except (TypeError, KeyError, ValueError):  # JSON, but not {"step": N, "data": {...}}
                logger.warning("%s:%d is not a verl metrics record; skipping it", path, number)
                continue
            # orjson writes NaN and infinities as null: they come back as NaN
            data = {key: math.nan if value is None else _number(value) for key, value in logged.items()}
            yield step, {key: value for key, value in data.items() if value is not None}


def _console_records(path: Path) -> Iterable[tuple[int, dict[str, float]]]:
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if "step:" in line:
                parsed = parse_console_line(line)
                if parsed is not None:
                    yield parsed


def _number(value: object) -> float | None:
    """Numbers (and the strings pprint prints for them) as float; booleans and anything else: None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        inner = _NUMPY_SCALAR.match(value)
        try:
            return float(inner.group(1) if inner else value)
        except ValueError:
            return None
    return None
