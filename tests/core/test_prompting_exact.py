"""The prompt builders, rendered exactly with one-line templates, and every loader error word for word.

tests/core/test_prompting.py renders the shipped presets and looks for phrases; mutation testing
(scripts/mutation.sh) showed that an off-by-one step number, a history window read one step short, a
binary search that settles one step too low or an error message cut short passed it. Tiny templates
make every character of the output predictable, so here each output is compared whole.
"""

from __future__ import annotations

import logging

import pytest

from strata.core.prompting import (
    PromptTemplates,
    available_presets,
    build_action_messages,
    build_judge_messages,
    build_strategy_messages,
    load_prompt_templates,
    prompt_fits,
)

T = PromptTemplates(
    strategy="S[{task}|{observation}]",
    action="A[{task}|{strategy}|{history}|{step}|{observation}|{admissible_actions}]",
    history="H[{step_count}/{history_length}:{steps}]",
    no_history="none",
    history_step="{step}:{action}>{observation}",
    judge="J[{task}|{strategy}|{num_steps}|{steps}]",
    judge_step="{step}:{action}>{observation}",
    omitted_observation="~",
    malformed_action="bad",
    observation_turn="O[{step}|{observation}|{admissible_actions}]",
)
HISTORY = [("go a", "at a"), ("go b", "at b"), ("go c", "at c")]


def user(content: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": content}]


def action(history_block: str, step: int = 4) -> list[dict[str, str]]:
    return user(f"A[heat egg|plan|{history_block}|{step}|at d|- go e\n- look]")


def test_strategy_and_action_prompts() -> None:
    assert build_strategy_messages(T, "heat egg", "room") == user("S[heat egg|room]")
    assert build_action_messages(T, "heat egg", "plan", [], "at d", ["go e", "look"]) == action("none", step=1)
    assert build_action_messages(T, "heat egg", "plan", HISTORY, "at d", ["go e", "look"]) == action(
        "H[3/3:1:go a>at a\n2:go b>at b\n3:go c>at c]")
    assert build_action_messages(T, "heat egg", None, [], "at d", []) == user("A[heat egg|None|none|1|at d|]")


@pytest.mark.parametrize(
    ("window", "block"),
    [
        (None, "H[3/3:1:go a>at a\n2:go b>at b\n3:go c>at c]"),
        (3, "H[3/3:1:go a>at a\n2:go b>at b\n3:go c>at c]"),
        (5, "H[3/3:1:go a>at a\n2:go b>at b\n3:go c>at c]"),
        (2, "H[3/2:2:go b>at b\n3:go c>at c]"),  # steps keep their absolute numbers
        (1, "H[3/1:3:go c>at c]"),
        (0, "H[3/0:]"),
    ],
)
def test_the_history_window_keeps_the_most_recent_steps(window: int | None, block: str) -> None:
    got = build_action_messages(T, "heat egg", "plan", HISTORY, "at d", ["go e", "look"], window=window)
    assert got == action(block)


def _render_action(shown: int) -> str:
    """The action prompt's content with the last ``shown`` steps (the reference for the budget search)."""
    steps = "\n".join(f"{n}:{a}>{o}" for n, (a, o) in enumerate(HISTORY, start=1) if n > len(HISTORY) - shown)
    return action(f"H[3/{shown}:{steps}]")[0]["content"]


@pytest.mark.parametrize("budget", range(40, 110, 3))
def test_the_budget_keeps_as_many_recent_steps_as_fit(budget: int, caplog) -> None:
    def fits(messages):
        return len(messages[0]["content"]) <= budget

    # Reference: the largest number of steps whose prompt fits, by trying every count.
    best = max((n for n in range(4) if len(_render_action(n)) <= budget), default=0)
    with caplog.at_level(logging.WARNING, logger="strata.core.prompting"):
        got = build_action_messages(T, "heat egg", "plan", HISTORY, "at d", ["go e", "look"], fits=fits)
    assert got[0]["content"] == _render_action(best)
    over = len(_render_action(0)) > budget
    warned = ["action prompt exceeds the prompt budget even with no history shown"] if over else []
    assert [record.getMessage() for record in caplog.records] == warned


def test_the_judge_prompt_omits_the_oldest_observations_first(caplog) -> None:
    full = "J[heat egg|plan|3|1:go a>at a\n2:go b>at b\n3:go c>at c]"
    assert build_judge_messages(T, "heat egg", "plan", HISTORY) == user(full)
    assert build_judge_messages(T, "heat egg", "plan", HISTORY, fits=lambda m: True) == user(full)
    one_omitted = "J[heat egg|plan|3|1:go a>~\n2:go b>at b\n3:go c>at c]"
    assert build_judge_messages(T, "heat egg", "plan", HISTORY,
                                fits=lambda m: len(m[0]["content"]) <= len(one_omitted)) == user(one_omitted)
    all_omitted = "J[heat egg|plan|3|1:go a>~\n2:go b>~\n3:go c>~]"
    with caplog.at_level(logging.WARNING, logger="strata.core.prompting"):
        assert build_judge_messages(T, "heat egg", "plan", HISTORY, fits=lambda m: False) == user(all_omitted)
    warned = [record.getMessage() for record in caplog.records]
    assert warned == ["judge prompt exceeds the prompt budget even with no history shown"]


def test_prompt_fits_counts_the_chat_template_with_the_generation_prompt(qwen_tokenizer) -> None:
    messages = user("S[heat egg|room]")
    with_prompt = qwen_tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                     return_dict=False)
    without = qwen_tokenizer.apply_chat_template(messages, add_generation_prompt=False, tokenize=True,
                                                 return_dict=False)
    assert len(with_prompt) > len(without)
    assert prompt_fits(qwen_tokenizer, len(with_prompt))(messages)
    assert not prompt_fits(qwen_tokenizer, len(with_prompt) - 1)(messages)


def test_presets_are_listed_and_a_base_is_inherited() -> None:
    assert available_presets() == ["alfworld", "alfworld_compact", "alfworld_compact_grpo", "alfworld_grpo",
                                   "alfworld_reasoning", "sciworld", "sciworld_grpo", "webshop", "webshop_grpo"]
    base, grpo = load_prompt_templates("alfworld"), load_prompt_templates("alfworld_grpo")
    assert grpo.judge == base.judge and grpo.action != base.action  # only the changed templates differ


def test_preset_files_and_overrides(tmp_path) -> None:
    own = tmp_path / "own.yml"
    own.write_text("base: alfworld\nmalformed_action: 'Use <action> tags.'\n")
    templates = load_prompt_templates(str(own), {"no_history": "Nothing yet.", "judge": None})
    assert templates.malformed_action == "Use <action> tags." and templates.no_history == "Nothing yet."
    assert templates.judge == load_prompt_templates("alfworld").judge  # None keeps the preset's string


@pytest.mark.parametrize(
    ("preset", "overrides", "content", "message"),
    [
        ("missing.yaml", None, None, "prompt preset file missing.yaml does not exist"),
        ("webarena", None, None, "unknown prompt preset 'webarena'; shipped: alfworld, alfworld_compact, "
                                 "alfworld_compact_grpo, alfworld_grpo, alfworld_reasoning, sciworld, sciworld_grpo, "
                                 "webshop, webshop_grpo (or give the path of a .yaml file)"),
        ("list.yaml", None, "- a\n- b\n", "prompt preset 'list.yaml' must be a mapping of template names to strings"),
        ("part.yaml", None, "strategy: '{task}'\nhints: 'x'\n",
         "prompt preset 'part.yaml': unknown templates ['hints'], missing templates ['action', 'history', "
         "'history_step', 'judge', 'judge_step', 'malformed_action', 'no_history', 'observation_turn', "
         "'omitted_observation']; valid names: strategy, action, history, no_history, history_step, judge, "
         "judge_step, omitted_observation, malformed_action, observation_turn"),
        ("alfworld", {"no_history": "{step}"}, None,
         "prompt template 'no_history' uses unknown placeholder(s) ['step']; valid: none. "
         "Write literal braces as {{ and }}."),
        ("alfworld", {"observation_turn": "{step} {task} {goal}"}, None,
         "prompt template 'observation_turn' uses unknown placeholder(s) ['goal', 'task']; valid: "
         "{admissible_actions}, {observation}, {step}. Write literal braces as {{ and }}."),
        ("alfworld", {"strategy": "{task"}, None,
         "prompt template 'strategy' is not a valid format string (expected '}' before end of string); "
         "write literal braces as {{ and }}"),
    ],
)
def test_loader_errors_word_for_word(tmp_path, monkeypatch, preset, overrides, content, message) -> None:
    monkeypatch.chdir(tmp_path)
    if content is not None:
        (tmp_path / preset).write_text(content)
    with pytest.raises(ValueError) as error:
        load_prompt_templates(preset, overrides)
    assert str(error.value) == message
