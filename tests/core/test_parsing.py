"""Parsers of model text: exact results on hand-written answers, and totality on arbitrary text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strata.core.parsing import extract_tag, parse_judgment


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<action>go to cabinet 1</action>", "go to cabinet 1"),
        ("I think... <action>\n  take apple 1 from fridge 1 \n</action>", "take apple 1 from fridge 1"),
        # The last complete pair wins: a restated format comes before the real answer.
        ("Answer in <action></action> form. <action>open drawer 2</action>", "open drawer 2"),
        ("<action>look</action> then <action>inventory</action>", "inventory"),
        # An unclosed later tag does not count; the complete pair before it does.
        ("<action>look</action> <action>inventory", "look"),
        # A nested opening tag: the pair the closing tag closes is the inner one.
        ("<action>go to <action>open fridge 1</action>", "open fridge 1"),
        ("<action>a\nb</action>", "a\nb"),
        ("no tag at all", None),
        ("<action>unclosed", None),
        ("closed only</action>", None),
        ("<action></action>", None),
        ("<action>   \n </action>", None),
        ("<Action>look</Action>", None),  # tags are case-sensitive: the prompt shows the exact form
        ("<strategy>x</strategy>", None),  # another tag is not this tag
    ],
)
def test_extract_tag_action(text: str, expected: str | None) -> None:
    assert extract_tag(text, "action") == expected


def test_extract_tag_escapes_regex_characters_in_the_tag() -> None:
    assert extract_tag("<a.b>x</a.b>", "a.b") == "x"
    assert extract_tag("<axb>x</axb>", "a.b") is None


@pytest.mark.parametrize(
    ("text", "num_steps", "expected"),
    [
        ("<judgment>[2, 5]</judgment>", 10, [2, 5]),
        ("<judgment>[]</judgment>", 10, []),
        ("<judgment>[ ]</judgment>", 10, []),
        ("reasoning... <judgment> [5,2,5 , 2] </judgment>", 10, [2, 5]),  # sorted, de-duplicated
        ("<judgment>[0, 1, 3, 4]</judgment>", 3, [1, 3]),  # 0 and 4 are outside 1..3: dropped
        ("<judgment>[-1, 2, +3]</judgment>", 5, [2, 3]),  # signed numbers parse; -1 is out of range
        ("<judgment>[2]</judgment>", 0, []),  # an empty episode has no step to flag
        ("<judgment>[99999999999999999999999]</judgment>", 5, []),  # absurdly large: out of range
        ("<judgment>[1]</judgment> <judgment>[2, 3]</judgment>", 5, [2, 3]),  # last pair wins
        ("<judgment>2, 5</judgment>", 10, None),  # no brackets
        ("<judgment>[2, 5,]</judgment>", 10, None),  # trailing comma
        ("<judgment>[2.0]</judgment>", 10, None),  # not an integer
        ("<judgment>[step 2]</judgment>", 10, None),  # prose
        ("<judgment>[2] and [3]</judgment>", 10, None),  # two lists
        ("<judgment></judgment>", 10, None),
        ("[2, 5]", 10, None),  # no tag
        ("<judgment>[2, 5]", 10, None),  # unclosed
    ],
)
def test_parse_judgment(text: str, num_steps: int, expected: list[int] | None) -> None:
    assert parse_judgment(text, num_steps) == expected


def test_parse_judgment_survives_a_number_longer_than_pythons_int_conversion_limit() -> None:
    # int() refuses strings over 4300 digits with ValueError; the parser must not raise.
    assert parse_judgment("<judgment>[" + "9" * 5000 + ", 1]</judgment>", 3) == [1]


_FRAGMENTS = st.sampled_from(
    ["<judgment>", "</judgment>", "<action>", "</action>", "<think>", "</think>", "[", "]", ",", " ", "\n", "-",
     "3", "12", "x"]
)
_TAGGY_TEXT = st.lists(st.one_of(_FRAGMENTS, st.text(max_size=5)), max_size=30).map("".join)


@settings(deadline=None)
@given(text=st.one_of(st.text(), _TAGGY_TEXT), num_steps=st.integers(-5, 60))
def test_parse_judgment_is_total_and_returns_valid_steps(text: str, num_steps: int) -> None:
    result = parse_judgment(text, num_steps)
    if result is not None:
        assert result == sorted(set(result))
        assert all(1 <= step <= num_steps for step in result)


@settings(deadline=None)
@given(text=st.one_of(st.text(), _TAGGY_TEXT), tag=st.sampled_from(["action", "judgment", "strategy"]))
def test_extract_tag_is_total_and_matches_a_reference_scan(text: str, tag: str) -> None:
    assert extract_tag(text, tag) == _reference_extract(text, tag)


def _reference_extract(text: str, tag: str) -> str | None:
    """Slow reference: outside thinking, the last (opening, closing) pair with no other opening tag in between."""
    text = _outside_thinking(text)
    opening, closing = f"<{tag}>", f"</{tag}>"
    pairs = []
    position = 0
    while True:
        start = text.find(opening, position)
        if start == -1:
            break
        close = text.find(closing, start + len(opening))
        if close == -1:
            break
        inner_start = text.rfind(opening, start, close)  # the last opening before this closing tag
        pairs.append(text[inner_start + len(opening) : close])
        position = close + len(closing)
    if not pairs:
        return None
    return pairs[-1].strip() or None


def _outside_thinking(text: str) -> str:
    """``text`` with each ``<think>`` block (to its ``</think>``, or to the end when unclosed) blanked."""
    kept, position = [], 0
    while (start := text.find("<think>", position)) != -1:
        kept.append(text[position:start])
        end = text.find("</think>", start + len("<think>"))
        if end == -1:
            return "".join(kept) + " "
        kept.append(" ")
        position = end + len("</think>")
    kept.append(text[position:])
    return "".join(kept)
