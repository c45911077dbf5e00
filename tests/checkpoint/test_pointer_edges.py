"""Pointer edges mutation testing found untested: a nested new root, a pointer of foreign bytes, the warning."""

from __future__ import annotations

from pathlib import Path

from strata.checkpoint.layout import POINTER_FILE
from strata.checkpoint.pointer import read_latest_pointer, write_latest_pointer


def test_the_root_is_created_with_its_parents(tmp_path: Path, caplog) -> None:
    root = tmp_path / "runs" / "a" / "checkpoints"
    with caplog.at_level("INFO", logger="strata.checkpoint.pointer"):
        assert write_latest_pointer(root, 3) == root / POINTER_FILE
    assert caplog.messages == [f"checkpoint pointer {root / POINTER_FILE} -> step 3"]
    assert read_latest_pointer(root) == 3


def test_a_pointer_of_foreign_bytes_is_ignored_with_a_warning(tmp_path: Path, caplog) -> None:
    (tmp_path / POINTER_FILE).write_bytes(b"\xff12")
    with caplog.at_level("WARNING", logger="strata.checkpoint.pointer"):
        assert read_latest_pointer(tmp_path) is None  # not a UnicodeDecodeError
    assert caplog.messages == [
        f"checkpoint pointer {tmp_path / POINTER_FILE} holds '\ufffd12', not a step number; ignoring it"]
    caplog.clear()
    (tmp_path / POINTER_FILE).write_text("x" * 45)
    with caplog.at_level("WARNING", logger="strata.checkpoint.pointer"):
        assert read_latest_pointer(tmp_path) is None
    assert f"holds '{'x' * 40}', not a step number" in caplog.text  # the first 40 characters only
