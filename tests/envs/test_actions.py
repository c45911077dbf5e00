"""Actions as people write them map to the one admissible command they mean, and nothing else does."""

from __future__ import annotations

import pytest

from strata.envs.actions import match_command, normalize_command

ADMISSIBLE = (
    "go to cabinet 1",
    "go to cabinet 10",
    "go to countertop 1",
    "take mug 1 from countertop 1",
    "put mug 1 in/on coffeemachine 1",
    "look",
    "inventory",
)


@pytest.mark.parametrize(
    "written, meant",
    [
        ("go to cabinet 1", "go to cabinet 1"),
        ("Go to cabinet 1", "go to cabinet 1"),
        ("go to cabinet 1.", "go to cabinet 1"),
        ("GO TO CABINET 1!", "go to cabinet 1"),
        ("go to cabinet 1;", "go to cabinet 1"),
        ('"go to cabinet 1"', "go to cabinet 1"),
        ("'go to cabinet 1'", "go to cabinet 1"),
        ("`go to cabinet 1`", "go to cabinet 1"),
        ("- go to cabinet 1", "go to cabinet 1"),
        ("* go to cabinet 1", "go to cabinet 1"),
        ("1. go to cabinet 1", "go to cabinet 1"),
        ('  - "Go  to   cabinet 10".  ', "go to cabinet 10"),
        ("\n`Put mug 1 in/on coffeemachine 1.`\n", "put mug 1 in/on coffeemachine 1"),
        ("Look.", "look"),
    ],
)
def test_written_forms_map_to_the_admissible_command(written: str, meant: str) -> None:
    assert match_command(written, ADMISSIBLE) == meant


@pytest.mark.parametrize(
    "written",
    [
        "go to cabinet",  # a prefix of several commands is not a match
        "go to cabinet 2",  # not admissible in this state
        "open cabinet 1",
        "go to cabinet 1 and take mug 1",
        "go to the cabinet 1",  # words are never guessed
        "",
        "   ",
        '""',
        "- ",
    ],
)
def test_anything_else_is_returned_unchanged(written: str) -> None:
    assert match_command(written, ADMISSIBLE) == written


def test_an_ambiguous_text_is_returned_unchanged() -> None:
    admissible = ("Go to cabinet 1", "go to cabinet 1.")  # two commands with one normalised form
    assert match_command("GO TO CABINET 1", admissible) == "GO TO CABINET 1"
    assert match_command("go to cabinet 1.", admissible) == "go to cabinet 1."  # exact wins over normalising


def test_no_admissible_commands_leaves_the_text_alone() -> None:
    assert match_command("Look.", ()) == "Look."


def test_normalise_removes_every_formatting_layer() -> None:
    assert normalize_command('* `"Take Mug 1 From Countertop 1"`!') == "take mug 1 from countertop 1"
    assert normalize_command("2) look") == "look"
    assert normalize_command("in/on") == "in/on"  # inner punctuation stays
