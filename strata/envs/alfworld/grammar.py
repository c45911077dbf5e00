"""textworld's text grammar with each string parsed once per game, not once per use.

Every step, textworld's `PddlEnv` derives the command of each applicable action and the step's feedback from
its game grammar (`ContextSensitiveGrammar.derive`), and every derivation first parses its start string
("#take#", "take {o} from {r}", ...) with a tatsu parser; each rule it tries parses its condition (a conjunctive
query) again too. The strings are few and fixed for a game and a parse is a pure function of its string, yet the
parsing was most of an ALFWorld engine's step time (benchmarks/bench_alfworld_engine.py). `MemoizedGrammar` keeps
each start's parsed symbols, handing every derivation its own copy (a derivation writes its context into them),
and each condition's parsed query; the derivation and the choice of a rule are textworld 1.7.0's, stack for stack
(the first rule whose condition has a match). `strata.envs.alfworld.engine.AlfworldEngine` installs it through a
subclass of `PddlEnv` (its `load`), so no textworld module is changed; `tests/envs/test_alfworld_grammar.py` plays
games with and without it and compares every observation and command list.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from textworld.envs.pddl import PddlEnv
from textworld.envs.pddl.textgen import (
    ConditionalSymbol,
    ContextSensitiveGrammar,
    CSGUnknownSymbolError,
    EvalSymbol,
    ListSymbol,
    NonterminalSymbol,
    ProductionRule,
    TerminalSymbol,
    _parse_and_convert,
    copy_context,
)
from textworld.logic import Rule


class MemoizedGrammar(ContextSensitiveGrammar):
    """A game's grammar (its rules, shared) whose `derive` parses each start string once."""

    def __init__(self, grammar: ContextSensitiveGrammar) -> None:
        super().__init__()
        self.update(grammar)
        self._parsed: dict[str, list[Any]] = {}
        self._conditions: dict[str, Rule] = {}

    def _symbols(self, start: str) -> list[Any]:
        if start not in self._parsed:
            self._parsed[start] = _parse_and_convert(start, rule_name="symbols")
        return deepcopy(self._parsed[start])

    def _holds(self, rule: ProductionRule, start: Any) -> bool:
        """Whether ``rule``'s condition (a conjunctive query, parsed once) has a match in ``start``'s state."""
        if not rule.condition:
            return True
        if rule.condition not in self._conditions:
            self._conditions[rule.condition] = Rule.parse_conjunctive_query(rule.condition)
        matches = start.context["state"].all_assignments(self._conditions[rule.condition], start.context["mapping"])
        return next(iter(matches), None) is not None

    def replace(self, start: Any) -> list[Any]:
        """textworld's: the right-hand side of the first of ``start``'s rules whose condition holds."""
        rules = self._rules.get(str(start))
        if not rules:
            raise CSGUnknownSymbolError(start)
        rule = next((rule for rule in rules if self._holds(rule, start)), None)
        if rule is None:
            raise IndexError(f"no rule of #{start}# applies in this state")
        symbols = deepcopy(rule.rhs)
        for symbol in symbols:
            symbol.context = copy_context(start.context)
        return symbols

    def derive(self, start: str, context: dict | None = None) -> str:
        """textworld's derivation: expand the symbols on a stack until only terminals are left."""
        context = {} if context is None else context
        stack = self._symbols(start)[::-1]
        for symbol in stack:
            symbol.context = copy_context(context)
        derived = []
        while stack:
            symbol = stack.pop()
            if isinstance(symbol, TerminalSymbol):
                derived.append(symbol)
            elif isinstance(symbol, NonterminalSymbol):
                stack += self.replace(symbol)[::-1]
            elif isinstance(symbol, ConditionalSymbol | EvalSymbol | ListSymbol):
                stack += symbol.derive()[::-1]
            else:
                raise NotImplementedError(f"Unknown symbol: {type(symbol)}")
        return "".join(map(str, derived))


class MemoizedPddlEnv(PddlEnv):
    """textworld's PDDL environment whose game grammar is a `MemoizedGrammar`."""

    def load(self, filename_or_data: Any) -> None:
        super().load(filename_or_data)
        self._logic.grammar = MemoizedGrammar(self._logic.grammar)
