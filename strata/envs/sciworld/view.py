"""What the model sees of ScienceWorld's action space, and the random policy's actions.

ScienceWorld's parser accepts ~25 action templates (``open OBJ``, ``pour OBJ into OBJ``, ...) filled with
the objects in view. Spelled out, the valid combinations run to 600-9,000 per state (8,924 in a
mendelian-genetics greenhouse), far beyond any prompt, and listing them costs the simulator ~0.1 s per step.
So a ScienceWorld episode's ``admissible_commands`` are the object names the parser accepts now, trimmed to
`MAX_VIEW_CHARS` (those the last observation mentions first); the templates never change and are written
once in the prompt preset (``strata/core/prompts/sciworld.yaml``). Every ``{admissible_actions}``
placeholder renders this list, one object per line.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

# The action templates of ScienceWorld's README (OBJ: an object in view; LOC: a location).
TEMPLATES: tuple[str, ...] = (
    "open OBJ", "close OBJ", "activate OBJ", "deactivate OBJ", "connect OBJ to OBJ", "disconnect OBJ",
    "use OBJ", "use OBJ on OBJ", "look around", "look at OBJ", "look in OBJ", "read OBJ", "move OBJ to OBJ",
    "pick up OBJ", "put down OBJ", "pour OBJ into OBJ", "dunk OBJ into OBJ", "mix OBJ", "go to LOC", "eat OBJ",
    "flush OBJ", "focus on OBJ", "wait", "wait1", "task", "inventory",
)
MAX_VIEW_CHARS = 1500  # ~350 Qwen2.5 tokens as "- name" lines; a kitchen shows ~60 objects in ~900 chars
MORE = "... ({count} more objects not shown)"


def object_view(objects: Sequence[str], observation: str, max_chars: int = MAX_VIEW_CHARS) -> tuple[str, ...]:
    """The objects to show: those named in ``observation`` first, then the rest, in the simulator's order,
    until ``max_chars`` (counting one ``- `` bullet and newline per line); a last line counts the rest. A name is
    mentioned where it stands as whole words: "air" is not in "a chair"."""
    mentioned = [name for name in objects if mentions(observation, name)]
    seen = set(mentioned)
    ordered = mentioned + [name for name in objects if name not in seen]
    shown: list[str] = []
    used = 0
    for name in ordered:
        if used + len(name) + 3 > max_chars:
            break
        shown.append(name)
        used += len(name) + 3
    hidden = len(ordered) - len(shown)
    return (*shown, MORE.format(count=hidden)) if hidden else tuple(shown)


def mentions(text: str, name: str) -> bool:
    """Whether ``name`` occurs in ``text`` as whole words (not inside a longer word)."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def random_action(objects: Sequence[str], rng: random.Random) -> str:
    """A uniformly random template filled with random objects in view (most are refused: a floor)."""
    names = [name for name in objects if not name.startswith("... (")] or ["agent"]
    action = rng.choice(TEMPLATES)
    while "OBJ" in action or "LOC" in action:
        slot = "OBJ" if "OBJ" in action else "LOC"
        action = action.replace(slot, rng.choice(names), 1)
    return action
