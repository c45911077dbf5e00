"""The PDDL domain and text grammar a generated game embeds, in either ALFWorld data version.

alfworld 0.4.2 ships the grammar of data 2.1.2+ (``move X to Y``, plus a ``help`` command). ALFWorld's
older 2.1.1 game files, still used by many papers, say ``put X in/on Y`` and have no ``help``. Both are
derived here from the files shipped in the alfworld package: 2.1.2 verbatim, 2.1.1 by the three edits
that separate the two releases (put templates, put feedback, no help action). Each edit must apply
exactly; if a future alfworld changes the shipped files, this fails loudly instead of writing odd games.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from strata.envs.errors import UnknownNameError

GRAMMAR_VERSIONS: tuple[str, ...] = ("2.1.2", "2.1.1")
DEFAULT_GRAMMAR_VERSION = "2.1.2"
# The put verb of each version, for tests and docs (never for parsing: read admissible commands).
PUT_TEMPLATE = {"2.1.2": "move {o} to {r}", "2.1.1": "put {o} in/on {r}"}


@dataclass(frozen=True)
class GameLogic:
    """The ``pddl_domain`` and ``grammar`` strings of a game file (grammar still has "UNKNOWN GOAL")."""

    version: str
    pddl_domain: str
    grammar: str


def _replace_exactly(text: str, old: str, new: str, count: int, what: str) -> str:
    found = text.count(old)
    if found != count:
        raise RuntimeError(
            f"alfworld's shipped {what} has {found} occurrences of {old!r}, expected {count}: "
            "this alfworld version is not the one strata's 2.1.1 grammar was derived from (0.4.2)"
        )
    return text.replace(old, new)


def _drop_help(domain: str, grammar: str) -> tuple[str, str]:
    domain_help = re.compile(r"\(:action help\b.*?\n\)\n", re.DOTALL)
    grammar_help = re.compile(r"action help \{.*?\n\}\n?", re.DOTALL)
    for pattern, text, what in ((domain_help, domain, "alfred.pddl"), (grammar_help, grammar, "alfred.twl2")):
        if len(pattern.findall(text)) != 1:
            raise RuntimeError(f"alfworld's shipped {what} has no single help action to remove (expected 0.4.2)")
    return domain_help.sub("", domain), grammar_help.sub("", grammar)


@cache
def game_logic(version: str = DEFAULT_GRAMMAR_VERSION) -> GameLogic:
    """Domain and grammar of ``version`` ("2.1.2": ``move X to Y``; "2.1.1": ``put X in/on Y``)."""
    from alfworld.info import ALFRED_PDDL_PATH, ALFRED_TWL2_PATH

    if version not in GRAMMAR_VERSIONS:
        raise UnknownNameError(f"unknown grammar version {version!r}; known: {', '.join(GRAMMAR_VERSIONS)}")
    domain = Path(ALFRED_PDDL_PATH).read_text()
    grammar = Path(ALFRED_TWL2_PATH).read_text()
    if version == "2.1.1":
        grammar = _replace_exactly(
            grammar, 'template :: "move {o} to {r}";', 'template :: "put {o} in/on {r}";', 2, "alfred.twl2"
        )
        grammar = _replace_exactly(
            grammar,
            '"rhs": "You move the {o.name} to the {r.name}."',
            '"rhs": "You put the {o.name} in/on the {r.name}."',
            1,
            "alfred.twl2",
        )
        domain, grammar = _drop_help(domain, grammar)
    return GameLogic(version=version, pddl_domain=domain, grammar=grammar)
