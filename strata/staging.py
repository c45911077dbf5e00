"""Folders that appear whole or not at all: built under a hidden name beside their final one, renamed at the end.

An export, a reshard or a game split stopped half-way (Ctrl-C, an error, a full disk) must not leave a
complete-looking model, step or split folder, and a later run must not trip over its debris. `staged` builds the
folder under ``.NAME.partial-PID``, renames it to ``NAME`` when the work is done, removes it on any exception
(Ctrl-C included), and first removes the partial folders of the same ``NAME`` whose process no longer runs (one
that was killed outright).

What the block runs is imported before it starts. A Ctrl-C that lands in a module's first import can surface as
another error (Python wraps it when it stops a class body's ``__set_name__``, as in a dataclass), and one that
lands in code Python runs from a string (a dataclass's generated methods) makes the interpreter end by SIGINT
after the tool has handled it, instead of with the tool's exit status.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def staged(final: Path) -> Iterator[Path]:
    """The folder to write, renamed to ``final`` when the block ends normally (``final`` must be missing or an
    empty folder, which it replaces)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    for stale in final.parent.glob(f".{final.name}.partial-*"):
        pid = stale.name.rsplit("-", 1)[1]
        if pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    staging = final.parent / f".{final.name}.partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        yield staging
        if final.is_dir():
            final.rmdir()  # empty (the callers check): os.replace cannot replace a folder on every platform
        os.replace(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
