"""The ``latest_checkpointed_iteration.txt`` pointer, written atomically.

verl 0.9.1 opens the pointer with ``open(path, "w")`` and then writes the step: a crash (or a reader)
between the truncation and the write sees an empty file, and verl's ``find_latest_ckpt_path`` then fails
with ``ValueError: invalid literal for int()``. Writing a temporary file in the same folder, flushing it
to disk and ``os.replace``-ing it over the pointer means every reader sees either the old step or the
new one, never a partial file.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from strata.checkpoint.layout import POINTER_FILE

logger = logging.getLogger(__name__)


def write_latest_pointer(checkpoint_root: str | Path, step: int) -> Path:
    """Point ``checkpoint_root/latest_checkpointed_iteration.txt`` at ``step``, atomically.

    Call it only after every file of ``global_step_{step}`` is on disk (shards, ``data.pt``); the
    pointer is the commit record of a save. The content is the bare integer, as verl writes it, so
    verl's own reader keeps working.
    """
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise ValueError(f"step must be a non-negative integer, got {step!r}")
    root = Path(checkpoint_root)
    root.mkdir(parents=True, exist_ok=True)
    target = root / POINTER_FILE
    temporary = root / f".{POINTER_FILE}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="ascii") as handle:
        handle.write(str(step))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, target)
    fsync_directory(root)
    logger.info("checkpoint pointer %s -> step %d", target, step)
    return target


def read_latest_pointer(checkpoint_root: str | Path) -> int | None:
    """The step the pointer names; None when there is no pointer or it does not hold an integer.

    An unreadable pointer is logged, not raised: the caller falls back to scanning the step folders.
    """
    target = Path(checkpoint_root) / POINTER_FILE
    if not target.is_file():
        return None
    text = target.read_text(encoding="ascii", errors="replace").strip()
    try:
        return int(text)
    except ValueError:
        logger.warning("checkpoint pointer %s holds %r, not a step number; ignoring it", target, text[:40])
        return None


def fsync_directory(directory: Path) -> None:
    """Persist the rename itself (POSIX); without it a power cut can forget the new pointer."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
