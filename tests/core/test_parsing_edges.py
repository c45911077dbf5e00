"""Edges of the parsers that mutation testing found untested: the longest step number, a thought inside a tag."""

from __future__ import annotations

from strata.core.parsing import extract_tag, parse_judgment


def test_nine_digit_step_numbers_are_read_and_ten_digit_ones_dropped() -> None:
    assert parse_judgment("<judgment>[123456789, 2]</judgment>", 123456789) == [2, 123456789]
    assert parse_judgment("<judgment>[1234567890, 2]</judgment>", 2_000_000_000) == [2]


def test_a_thinking_block_inside_a_tag_becomes_one_space() -> None:
    assert extract_tag("<action>open<think>which one?</think>drawer 1</action>", "action") == "open drawer 1"
