"""The longest step number `parse_judgment` keeps: nine digits (mutation testing found the bound untested)."""

from __future__ import annotations

from strata.core.parsing import parse_judgment


def test_nine_digit_step_numbers_are_read_and_ten_digit_ones_dropped() -> None:
    assert parse_judgment("<judgment>[123456789, 2]</judgment>", 123456789) == [2, 123456789]
    assert parse_judgment("<judgment>[1234567890, 2]</judgment>", 2_000_000_000) == [2]
