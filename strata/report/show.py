"""Render one task's group from a trajectory dump as a tree of styled lines.

The same tree prints in a terminal (`to_text`, ANSI colour optional) and becomes the HTML page
(`strata.report.show_html`), so both show exactly the same information. A node's spans are
``(text, style)`` pairs; the styles are names (`STYLES`), mapped to ANSI codes here and to CSS classes
in the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Span = tuple[str, str]

# style name -> ANSI SGR code
STYLES = {"": "", "head": "1", "good": "32", "bad": "31", "warn": "33", "flag": "1;35", "dim": "2", "text": ""}


@dataclass
class Node:
    """One line (its spans) with the lines nested under it."""

    spans: list[Span]
    children: list[Node] = field(default_factory=list)


def task_summary(record: dict[str, Any]) -> list[Span]:
    """One line per task: index, subtask, task type, trajectories won, game file."""
    task = record["task"]
    trajectories = [t for strategy in record["strategies"] for t in strategy["trajectories"]]
    won = sum(t["won"] for t in trajectories)
    return [(f"task {task['index']}", "head"), (f"  {task['subtask']}  {task['task_type']}  ", ""),
            (f"won {won}/{len(trajectories)}", "good" if won else "bad"), (f"  {task['game_file']}", "dim")]


def task_tree(record: dict[str, Any]) -> Node:
    """Everything the dump says about one task's group."""
    task = record["task"]
    head = [*task_summary(record), (f"  ({record['kind']} step {record['step']}, mode {record['mode']}, "
                                    f"split {task['split']})", "dim")]
    children = [Node([("goal: ", "head"), (record["task_description"], "text")]),
                Node([("initial observation:", "head")], [_text(record["initial_observation"])])]
    if record["candidates"]:
        children.append(_candidates(record["candidates"]))
    for number, strategy in enumerate(record["strategies"], 1):
        children.append(_strategy(strategy, number, len(record["strategies"]), record["mode"]))
    return Node(head, children)


def to_text(node: Node, colour: bool = False, depth: int = 0) -> str:
    """The tree as indented text; ANSI colour only when ``colour`` (a terminal)."""
    line = "".join(_ansi(text, style) if colour else text for text, style in node.spans)
    indent = "  " * depth
    lines = [(indent + part).rstrip() for part in line.split("\n")]
    lines += [to_text(child, colour, depth + 1) for child in node.children]
    return "\n".join(lines)


def advantage(label: str, value: float | None) -> list[Span]:
    """``label +0.71`` coloured by sign; ``-`` when there is none."""
    if value is None:
        return [(f"{label} -", "dim")]
    return [(f"{label} {value:+.2f}", "good" if value > 0 else "bad" if value < 0 else "")]


def _candidates(candidates: list[dict[str, Any]]) -> Node:
    kept = sum(c["kept"] for c in candidates)
    lines = []
    for c in candidates:
        spans: list[Span] = [(f"#{c['index']}  ", "head")]
        spans.append((f"KEPT rank {c['kept_rank']}", "good") if c["kept"] else ("not kept", "dim"))
        if not c["well_formed"]:
            spans.append(("  MALFORMED", "bad"))
        cosine = c["nearest_kept_cosine"]
        spans.append((f"  nearest kept cos {'-' if cosine is None else f'{cosine:.2f}'}  {c['num_tokens']} tok", ""))
        if c["truncated"]:
            spans.append(("  truncated", "warn"))
        body = c["strategy"] if c["well_formed"] else "raw: " + c["text"]
        lines.append(Node(spans, [_text(body)]))
    return Node([(f"candidates: {len(candidates)} sampled, {kept} kept", "head")], lines)


def _strategy(strategy: dict[str, Any], number: int, total: int, mode: str) -> Node:
    if strategy["candidate"] is None:
        spans: list[Span] = [(f"trajectories ({mode}: no strategy)", "head")]
    else:
        score = strategy["score"]
        spans = [(f"strategy {number}/{total} (candidate #{strategy['candidate']})", "head"),
                 (f"  score {'-' if score is None else f'{score:.2f}'}  ", ""),
                 *advantage("A(z)", strategy["advantage"]), ("  ", ""),
                 *advantage("strategy tokens", strategy["token_advantage"])]
    if strategy["dropped"]:
        spans.append(("  DROPPED: every trajectory failed in the environment, nothing trained", "bad"))
    children = [_text(strategy["strategy"])] if strategy["strategy"] is not None else []
    children += [_trajectory(trajectory) for trajectory in strategy["trajectories"]]
    return Node(spans, children)


def _trajectory(trajectory: dict[str, Any]) -> Node:
    spans: list[Span] = [(f"trajectory {trajectory['index']}: ", "head"),
                         ("WON", "good") if trajectory["won"] else ("FAILED", "bad"),
                         (f"  reward {trajectory['reward']:.2f}  end {trajectory['end_reason']}  "
                          f"{trajectory['num_steps']} steps  ", ""),
                         *advantage("A(tau)", trajectory["advantage"])]
    if trajectory.get("environment_failure"):  # written by strata/workflow/dump.py, beyond the schema's keys
        spans.append(("  environment failure", "bad"))
    if not trajectory["trained"]:
        spans.append(("  not trained", "warn"))
    children = [_judge(trajectory["judge"])] if trajectory["judge"] is not None else []
    children += [_step(step) for step in trajectory["steps"]]
    return Node(spans, children)


def _judge(judge: dict[str, Any]) -> Node:
    flagged = ", ".join(str(step) for step in judge["flagged_steps"]) or "none"
    spans: list[Span] = [("judge  ", "head"), (f"flagged steps: {flagged}", "flag" if judge["flagged_steps"] else "")]
    if not judge["parsed"]:
        spans.append(("  UNPARSED", "bad"))
    return Node(spans, [_text(judge["text"])])


def _step(step: dict[str, Any]) -> Node:
    spans: list[Span] = [(f"step {step['step']}  ", "head")]
    if step["flagged"]:
        spans += [("FLAGGED", "flag"), ("  ", "")]
    if step["action"] is None:
        spans.append(("MALFORMED (no <action>)", "bad"))
    else:
        spans.append((f"> {step['action']}", ""))
        if step["command"] is not None and step["command"] != step["action"]:
            spans.append((f"  -> {step['command']}", "dim"))
    if step["admissible"] is None:
        spans.append(("  not stepped", "warn"))
    else:
        spans.append(("  admissible", "good") if step["admissible"] else ("  NOT ADMISSIBLE", "bad"))
    spans += [(f"  {step['num_tokens']} tok  ", ""), *advantage("adv", step["advantage"])]
    if step["truncated"]:
        spans.append(("  truncated", "warn"))
    children = [_text("raw: " + step["response"])] if step["action"] is None else []
    children.append(_text(step["observation"]))
    return Node(spans, children)


def _text(text: str) -> Node:
    return Node([(text.strip("\n"), "text")])


def _ansi(text: str, style: str) -> str:
    code = STYLES[style]
    return f"\033[{code}m{text}\033[0m" if code else text
