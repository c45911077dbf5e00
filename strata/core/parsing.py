"""Strict, total parsers for model text: they never raise, whatever the model wrote.

A rollout must survive any generation, so every parser here returns ``None`` for malformed text instead
of raising; the caller turns ``None`` into the format penalty (spec §1.1, §1.3) or the judge-format
metric (spec §1.5).
"""

from __future__ import annotations

import re
from functools import lru_cache

# A judgment list: "[]" or "[i, j, ...]" of (optionally signed) integers, whitespace allowed around items.
_JUDGMENT_LIST = re.compile(r"\[\s*(?:[+-]?\d+\s*(?:,\s*[+-]?\d+\s*)*)?\]")
_INTEGER = re.compile(r"[+-]?\d+")
# A reasoning block, closed or cut off by the token limit: tags written while thinking are not answers.
_THINKING = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)
# More digits than this cannot be a step number; checking first also keeps int() away from Python's
# 4300-digit conversion limit, which would raise on adversarial text.
_MAX_STEP_DIGITS = 9


@lru_cache(maxsize=32)
def _pair_pattern(tag: str) -> re.Pattern[str]:
    # The body may not contain another opening tag, so "<a>x <a>y</a>" yields "y": the complete pair is
    # the innermost one that the closing tag actually closes.
    opening = re.escape(f"<{tag}>")
    closing = re.escape(f"</{tag}>")
    return re.compile(f"{opening}((?:(?!{opening}).)*?){closing}", re.DOTALL)


def extract_tag(text: str, tag: str) -> str | None:
    """Stripped content of the last complete ``<tag>…</tag>`` pair in ``text``.

    The last pair wins because models often restate the format ("answer inside <action></action>")
    before giving the real answer. Pairs inside ``<think>…</think>`` do not count, nor any after an
    unclosed ``<think>``: a response cut off while reasoning (the ``alfworld_reasoning`` preset) has no
    answer yet, whatever example it was weighing. Returns None when there is no complete pair or its
    content is only whitespace: an empty strategy or action is as unusable as a missing one.
    """
    matches = _pair_pattern(tag).findall(_THINKING.sub(" ", text))
    if not matches:
        return None
    content = matches[-1].strip()
    return content or None


def parse_judgment(text: str, num_steps: int) -> list[int] | None:
    """Flagged steps I(τ) from a judge response: sorted, de-duplicated 1-based step numbers.

    The content of the last ``<judgment>`` pair must be exactly a bracketed list of integers, e.g.
    ``[2, 5]`` or ``[]``; anything else (prose, a missing tag, floats, no brackets) returns None, which
    the caller counts as an unparsable judgment that flags nothing (spec §1.5). Numbers outside
    ``1..num_steps`` are dropped rather than rejected: a judge that miscounts by one step still
    contributes the steps it named correctly.
    """
    content = extract_tag(text, "judgment")
    if content is None or _JUDGMENT_LIST.fullmatch(content) is None:
        return None
    steps = {_step_number(token) for token in _INTEGER.findall(content)}
    return sorted(step for step in steps if 1 <= step <= num_steps)


def _step_number(token: str) -> int:
    # Over-long numbers map to 0, which is outside every valid range and is therefore dropped.
    return int(token) if len(token.lstrip("+-")) <= _MAX_STEP_DIGITS else 0
