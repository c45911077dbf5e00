"""Map an action as a person (or a model) writes it to the admissible command it means.

The engines accept only the exact admissible string, so ``Go to cabinet 1``, ``go to cabinet 1.``,
``"go to cabinet 1"`` or a ``- go to cabinet 1`` copied with its list bullet would each waste a step as
"Nothing happens.". That teaches formatting, not the task. `match_command` removes what only the
formatting adds (case, surrounding whitespace, quotes, backticks and final punctuation, a leading list
bullet, repeated inner spaces) and returns the admissible command when exactly one has the same
normalised form; anything else is returned unchanged, so the engine answers it as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_BULLET = re.compile(r"^(?:[-*•]|\d+[.)])\s+")  # "- ", "* ", "• ", "1. ", "1) "
_QUOTES = "\"'`“”‘’"
_TRAILING_PUNCTUATION = ".!;"


def normalize_command(text: str) -> str:
    """``text`` without formatting: no surrounding whitespace, bullet, quotes or final ``.!;``, inner
    whitespace collapsed to single spaces, lower-cased. Layers in any order (``- "look".``) all go."""
    previous, current = None, text
    while current != previous:
        previous = current
        current = _BULLET.sub("", current.strip(), count=1)
        current = current.strip(_QUOTES).rstrip(_TRAILING_PUNCTUATION)
    return " ".join(current.split()).lower()


def match_command(text: str, admissible: Sequence[str]) -> str:
    """The admissible command ``text`` means: ``text`` itself when it is admissible, else the one
    admissible command with the same normalised form; ``text`` unchanged when none or several have it."""
    if text in admissible:
        return text
    wanted = normalize_command(text)
    if not wanted:
        return text
    matches = {command for command in admissible if normalize_command(command) == wanted}
    return matches.pop() if len(matches) == 1 else text
