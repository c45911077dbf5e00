"""The checkpoint and report tools are listed by `strata --help`, each with its own help and example."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata.checkpoint.pointer import write_latest_pointer
from strata.cli import COMMANDS, main

TOOLS = ("inspect-checkpoint", "reshard", "export", "report-eval", "curve", "config-diff", "model-card", "show")


def test_strata_help_lists_every_tool_on_one_line(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for tool in TOOLS:
        summary = COMMANDS[tool][1]
        assert "\n" not in summary and len(summary) <= 110
        assert tool in out


@pytest.mark.parametrize("tool", TOOLS)
def test_tool_help_has_an_example(tool: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([tool, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "example:" in out and f"strata {tool} " in out.split("example:")[1]
    assert COMMANDS[tool][1] in " ".join(out.split())


def test_inspect_checkpoint_reports_and_checks(tmp_path: Path, make_step, capsys) -> None:
    make_step(tmp_path, 1, world_size=2)
    make_step(tmp_path, 2, world_size=2, data=False)
    write_latest_pointer(tmp_path, 2)
    assert main(["inspect-checkpoint", str(tmp_path), "--world-size", "2"]) == 0
    out = capsys.readouterr().out
    assert "global_step_2: world size 2, INCOMPLETE (missing data.pt)" in out
    assert f"resume_mode=auto would load: {tmp_path / 'global_step_1'}" in out
    assert "resumable at world size 2" in out
    assert main(["inspect-checkpoint", str(tmp_path / "global_step_1"), "--world-size", "1"]) == 2
    assert "strata reshard" in capsys.readouterr().err


def test_a_root_without_a_complete_step_is_an_error(tmp_path: Path, make_step, capsys) -> None:
    make_step(tmp_path, 1, world_size=1, data=False)
    assert main(["inspect-checkpoint", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "global_step_1: world size 1, INCOMPLETE (missing data.pt)" in captured.out
    assert "would load: None" not in captured.out
    assert captured.err == f"error: no complete step under {tmp_path}: resume_mode=auto would train from step 0\n"


def test_reshard_and_export_fail_with_one_line(tmp_path: Path, make_step, capsys) -> None:
    step = make_step(tmp_path / "run", 1, data=False)
    assert main(["reshard", "--checkpoint", str(step), "--world-size", "2", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    assert main(["export", "--checkpoint", str(step), "--out", str(tmp_path / "full")]) == 2
    assert "not empty" in capsys.readouterr().err


def test_inspect_checkpoint_s_example_resumes_a_recipe_run(tmp_path: Path, make_step, capsys) -> None:
    """The help's example, on a checkpoint laid out as the 1.5B recipe's run saves it (2 ranks, verl's default of
    8 dataloader workers), says resumable: it does not lead into the dataloader-workers error."""
    import shlex

    from strata.checkpoint.cli_inspect import EXAMPLE

    command = shlex.split(EXAMPLE.splitlines()[0])
    assert command[:2] == ["strata", "inspect-checkpoint"]
    root = tmp_path / command[2]
    make_step(root, 10, world_size=2, num_workers=8)
    assert main(["inspect-checkpoint", str(root), *command[3:]]) == 0, capsys.readouterr().err
    assert "resumable at world size 2" in capsys.readouterr().out
