"""Where the `strata` tools write: never over a user's work unless asked (``--force``), never into a file.

A tool that writes a folder (a model, a catalogue, games, task lists) checks it first with `output_folder`; the
error it raises is one ``error:`` line from `strata.cli.main`, before anything is written.
"""

from __future__ import annotations

import argparse
from pathlib import Path


class OutputFolderError(Exception):
    """The folder a tool was asked to write is a file, or already holds files and ``--force`` was not given."""


def add_force_argument(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--force", action="store_true", help=f"write over {what} already in the folder")


def output_folder(path: str | Path, force: bool = False, option: str = "--out") -> Path:
    """``path`` as a folder the tool may write: missing or empty, or anything with ``force``; never a file.

    Raises:
        OutputFolderError: ``path`` or a folder above it is a file, or ``path`` is a non-empty folder without
            ``force``. A file above it is found here, before anything is built, and named: creating the folder
            would fail later, after the work, with "Not a directory".
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputFolderError(f"{option} {path} is a file; give a folder")
    above = next((parent for parent in path.parents if parent.exists()), None)
    if above is not None and not above.is_dir():
        raise OutputFolderError(f"{option} {path} lies below {above}, which is a file; give a folder")
    if not force and path.is_dir() and any(path.iterdir()):
        count = sum(1 for _ in path.iterdir())
        raise OutputFolderError(f"{option} {path} is not empty ({count} entries); give a new folder, or --force to "
                                "write over what it holds")
    return path


def without_progress_bars() -> None:
    """Turn off transformers' per-file progress bars ("Writing model shards", "Loading weights") for a tool that
    ends with its own one-line summary: on a terminal they interleave with it, and in a log (a recipe's
    ``train.log``) each is a line of carriage returns."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
