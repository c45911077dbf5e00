"""Argument types for the `strata` tools: a bad number is argparse's one-line usage error, not a traceback."""

from __future__ import annotations

import argparse


def _integer(text: str, minimum: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1 (a count of games, workers, ranks)."""
    return _integer(text, 1, "an integer >= 1")


def non_negative_int(text: str) -> int:
    """An integer >= 0 (a cap where 0 means none)."""
    return _integer(text, 0, "an integer >= 0")


def positive_float(text: str) -> float:
    """A number > 0 (a learning rate)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not value > 0.0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {value}")
    return value


def probability(text: str) -> float:
    """A number in [0, 1] (a rate)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {value}")
    return value


def comma_list(text: str) -> list[str]:
    """``a,b,`` -> ``["a", "b"]`` (splits, task types)."""
    return [item for item in text.split(",") if item]
