"""Prompts for StraTA's three generations: strategy, action and judgment (spec §1.1, §1.3, §1.5).

Templates are Python format strings kept in YAML presets (``strata/core/prompts/<preset>.yaml``) so they
live in config, and every string can be overridden. The builders here return chat messages
(``[{"role": "user", "content": ...}]``); turning them into model input is the caller's
``tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)``, so the
model's own chat template (and its default system prompt) is always used.
"""

from __future__ import annotations

import logging
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

logger = logging.getLogger(__name__)

Message = dict[str, str]
FitsBudget = Callable[[list[Message]], bool]
"""Whether rendered messages fit the prompt budget; see :func:`prompt_fits`."""

TEMPLATE_FIELDS: dict[str, frozenset[str]] = {
    "strategy": frozenset({"task", "observation"}),
    "action": frozenset({"task", "strategy", "history", "step", "observation", "admissible_actions"}),
    "history": frozenset({"step_count", "history_length", "steps"}),
    "no_history": frozenset(),
    "history_step": frozenset({"step", "action", "observation"}),
    "judge": frozenset({"task", "strategy", "num_steps", "steps"}),
    "judge_step": frozenset({"step", "action", "observation"}),
    "omitted_observation": frozenset(),
    "malformed_action": frozenset(),
    "observation_turn": frozenset({"step", "observation", "admissible_actions"}),
}
"""The placeholders each template may use; anything else is rejected when the templates are built."""


@dataclass(frozen=True)
class PromptTemplates:
    """One string per template of :data:`TEMPLATE_FIELDS`, validated on construction.

    Attributes:
        strategy: strategy prompt, from the task and the initial observation.
        action: action prompt, from the task, the strategy, the rendered history, the current
            observation and the admissible actions.
        history: the interaction-so-far block of the action prompt.
        no_history: that block before the first step.
        history_step: one past step inside ``history``.
        judge: self-judgment prompt over the numbered steps of an episode.
        judge_step: one step inside ``judge``.
        omitted_observation: stands in for an old observation cut from an over-long judge prompt.
        malformed_action: the observation an agent receives after a response without an action tag.
        observation_turn: the user turn after each action when a trajectory is one multi-turn chat
            (``strata.trajectory_rows=multi_turn``): the new observation and the admissible actions.
    """

    strategy: str
    action: str
    history: str
    no_history: str
    history_step: str
    judge: str
    judge_step: str
    omitted_observation: str
    malformed_action: str
    observation_turn: str

    def __post_init__(self) -> None:
        for name, allowed in TEMPLATE_FIELDS.items():
            _check_placeholders(name, getattr(self, name), allowed)


def _check_placeholders(name: str, template: str, allowed: frozenset[str]) -> None:
    # Fail when the config is read, not in the middle of a rollout.
    try:
        used = {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}
    except ValueError as error:
        raise ValueError(
            f"prompt template {name!r} is not a valid format string ({error}); "
            "write literal braces as {{ and }}"
        ) from error
    unknown = used - allowed
    if unknown:
        valid = ", ".join("{" + field + "}" for field in sorted(allowed)) or "none"
        raise ValueError(
            f"prompt template {name!r} uses unknown placeholder(s) {sorted(unknown)}; valid: {valid}. "
            "Write literal braces as {{ and }}."
        )


def available_presets() -> list[str]:
    """Names of the template presets shipped in ``strata/core/prompts``."""
    folder = resources.files("strata.core") / "prompts"
    return sorted(
        entry.name.removesuffix(".yaml") for entry in folder.iterdir() if entry.name.endswith(".yaml")
    )


def load_prompt_templates(
    preset: str = "alfworld", overrides: Mapping[str, str | None] | None = None
) -> PromptTemplates:
    """Templates of a shipped preset (or of a YAML file when ``preset`` is a path), with overrides.

    A preset file holds one string per template, or a ``base: <preset>`` line and the templates it changes.

    ``overrides`` maps template names to replacement strings; None values keep the preset's string, so
    a config section with unset keys can be passed as is.

    Raises:
        ValueError: for an unknown preset, a missing or unknown template name, or a bad placeholder.
    """
    raw = _read_preset(preset)
    replacements = {name: text for name, text in (overrides or {}).items() if text is not None}
    valid = [f.name for f in fields(PromptTemplates)]
    unknown = sorted((set(raw) | set(replacements)) - set(valid))
    missing = sorted(set(valid) - set(raw) - set(replacements))
    if unknown or missing:
        raise ValueError(
            f"prompt preset {preset!r}: unknown templates {unknown}, missing templates {missing}; "
            f"valid names: {', '.join(valid)}"
        )
    return PromptTemplates(**{**raw, **replacements})


def _read_preset(preset: str) -> dict[str, Any]:
    path = Path(preset)
    if path.suffix in {".yaml", ".yml"}:
        if not path.is_file():
            raise ValueError(f"prompt preset file {preset} does not exist")
        text = path.read_text(encoding="utf-8")
    else:
        if preset not in available_presets():
            raise ValueError(
                f"unknown prompt preset {preset!r}; shipped: {', '.join(available_presets())} "
                "(or give the path of a .yaml file)"
            )
        text = (resources.files("strata.core") / "prompts" / f"{preset}.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise ValueError(f"prompt preset {preset!r} must be a mapping of template names to strings")
    base = data.pop("base", None)
    # A preset may name a ``base`` preset and replace only some of its templates (e.g. alfworld_grpo).
    return {**_read_preset(base), **data} if base is not None else data


def build_strategy_messages(templates: PromptTemplates, task: str, observation: str) -> list[Message]:
    """Strategy prompt (spec §1.1): the task and the initial observation; asks for ``<strategy>``."""
    return _user(templates.strategy.format(task=task, observation=observation))


def build_action_messages(
    templates: PromptTemplates,
    task: str,
    strategy: str | None,
    history: Sequence[tuple[str, str]],
    observation: str,
    admissible_actions: Sequence[str],
    window: int | None = None,
    fits: FitsBudget | None = None,
) -> list[Message]:
    """Action prompt (spec §1.3) for the step after ``history``; asks for one ``<action>``.

    ``history`` holds every (action, observation) pair taken so far, oldest first; its steps keep their
    absolute numbers 1..T when some are left out. Which steps are shown: the last ``window`` (None = all),
    then, if ``fits`` is given, the most recent ones that fit — steps are dropped oldest first, because
    the recent ones say where the agent is. If even no history fits, the history-free prompt is returned
    and a warning logged: the rollout decides what to do with an over-long prompt.
    """
    first_shown = len(history) if window is None else min(len(history), window)

    def render(shown: int) -> list[Message]:
        recent = history[len(history) - shown :]
        steps = [
            templates.history_step.format(step=len(history) - shown + n, action=act, observation=obs)
            for n, (act, obs) in enumerate(recent, start=1)
        ]
        block = (
            templates.history.format(step_count=len(history), history_length=shown, steps="\n".join(steps))
            if history
            else templates.no_history
        )
        content = templates.action.format(
            task=task,
            strategy=strategy,
            history=block,
            step=len(history) + 1,
            observation=observation,
            admissible_actions="\n".join(f"- {action}" for action in admissible_actions),
        )
        return _user(content)

    return _fitted(render, first_shown, fits, "action")


def build_judge_messages(
    templates: PromptTemplates,
    task: str,
    strategy: str,
    steps: Sequence[tuple[str, str]],
    fits: FitsBudget | None = None,
) -> list[Message]:
    """Self-judgment prompt (spec §1.5): the numbered (action, observation) steps 1..T; asks for
    ``<judgment>[i, j, …]</judgment>``.

    Every step stays listed with its action, since the judge must be able to flag any of them. If
    ``fits`` is given and the episode is too long, the oldest steps' observations are replaced by
    ``templates.omitted_observation`` until it fits (a warning is logged if even all-omitted does not).
    """

    def render(with_observation: int) -> list[Message]:
        first_full = len(steps) - with_observation
        lines = [
            templates.judge_step.format(
                step=n, action=act, observation=obs if n > first_full else templates.omitted_observation
            )
            for n, (act, obs) in enumerate(steps, start=1)
        ]
        return _user(
            templates.judge.format(task=task, strategy=strategy, num_steps=len(steps), steps="\n".join(lines))
        )

    return _fitted(render, len(steps), fits, "judge")


def prompt_fits(tokenizer: Any, max_prompt_tokens: int) -> FitsBudget:
    """A :data:`FitsBudget` counting tokens as the model will see them: through ``tokenizer``'s chat
    template, with the generation prompt, against ``max_prompt_tokens`` (verl's
    ``data.max_prompt_length``).
    """

    def fits(messages: list[Message]) -> bool:
        ids = tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=True, return_dict=False
        )
        return len(ids) <= max_prompt_tokens

    return fits


def _fitted(
    render: Callable[[int], list[Message]], most: int, fits: FitsBudget | None, kind: str
) -> list[Message]:
    # Binary search for the largest n in 0..most whose rendering fits: renderings grow with n, and each
    # check is one tokenisation of a ~2k-token prompt, so O(log T) checks instead of O(T).
    if fits is None or fits(render(most)):
        return render(most)
    low, high = 0, most - 1  # the answer is in [low, high]; n = low is assumed to fit
    while low < high:
        middle = (low + high + 1) // 2
        if fits(render(middle)):
            low = middle
        else:
            high = middle - 1
    messages = render(low)
    if low == 0 and not fits(messages):
        logger.warning("%s prompt exceeds the prompt budget even with no history shown", kind)
    return messages


def _user(content: str) -> list[Message]:
    return [{"role": "user", "content": content}]
