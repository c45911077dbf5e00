"""Render one task's group from a trajectory dump as a tree of styled lines.

The same tree prints in a terminal (`to_text`, ANSI colour optional) and becomes the HTML page
(`strata.report.show_html`), so both show exactly the same information. A node's spans are
``(text, style)`` pairs; the styles are names (`STYLES`), mapped to ANSI codes here and to CSS classes
in the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

Span = tuple[str, str]

# style name -> ANSI SGR code
STYLES = {"": "", "head": "1", "good": "32", "bad": "31", "warn": "33", "flag": "1;35", "dim": "2", "text": ""}


@dataclass
class Node:
    """One line (its spans) with the lines nested under it."""

    spans: list[Span]
    children: list[Node] = field(default_factory=list)


MAGIC_WORD = "magic_word"
ZERO = 1e-9  # an advantage this close to 0 counts as none: the group taught nothing


def task_label(task: dict[str, Any], env: str | None = None) -> str:
    """What kind of task it is: ALFWorld's subtask and task type, a ScienceWorld task type, or the magic-word
    game (which borrows ALFWorld's ``pick_and_place_simple`` only to be counted in the metrics).

    ``env`` is the run's ``env.name`` (its config.yaml); without it a magic-word game is known by its file.
    """
    if env == MAGIC_WORD or (env is None and str(task["game_file"]).endswith("/game.json")):
        return "magic-word game"
    if task["subtask"] == task["task_type"]:
        return str(task["subtask"])
    return f"{task['subtask']}  {task['task_type']}"


def split_game_path(game_file: str, split: str) -> tuple[str | None, str]:
    """(the data folder, the game's path inside it). The data folder is what ``--data-path`` names: the one
    holding ``json_2.1.1/<split>/`` (ALFWorld) or ``<split>/`` (generated magic-word games). A game id
    (ScienceWorld) or a path without its split folder is returned whole, with no folder."""
    path = PurePosixPath(game_file)
    parts = path.parts
    if not path.is_absolute() or split not in parts[:-1]:
        return None, game_file
    at = len(parts) - 2 - parts[:-1][::-1].index(split)  # the last folder named like the split
    if at > 1 and parts[at - 1].startswith("json_"):
        at -= 1
    return str(PurePosixPath(*parts[:at])), str(PurePosixPath(*parts[at:]))


def task_summary(record: dict[str, Any], env: str | None = None) -> list[Span]:
    """One line per task: index, what kind of task, trajectories won, game file (inside its data folder)."""
    task = record["task"]
    trajectories = [t for strategy in record["strategies"] for t in strategy["trajectories"]]
    won = sum(t["won"] for t in trajectories)
    return [(f"task {task['index']}", "head"), (f"  {task_label(task, env)}  ", ""),
            (f"won {won}/{len(trajectories)}", "good" if won else "bad"),
            (f"  {split_game_path(str(task['game_file']), str(task['split']))[1]}", "dim")]


def step_summary(records: list[dict[str, Any]]) -> Node:
    """A step at a glance: success, malformed replies, what the judge flagged, the groups whose advantages are
    all zero (they train nothing), and the data folder the game paths are relative to."""
    trajectories = [t for r in records for s in r["strategies"] for t in s["trajectories"]]
    steps = [step for t in trajectories for step in t["steps"]]
    candidates = [c for r in records for c in r["candidates"]]
    won = sum(t["won"] for t in trajectories)
    lines = [[("success  ", "head"), (f"won {won} of {len(trajectories)} episodes ({_share(won, len(trajectories))}) "
                                      f"in {len(records)} task(s)", "good" if won else "bad")]]
    bad_candidates = sum(not c["well_formed"] for c in candidates)
    bad_steps = sum(step["action"] is None for step in steps)
    bad = bad_candidates + bad_steps
    malformed = f"{bad} of {len(candidates) + len(steps)} replies ({_share(bad, len(candidates) + len(steps))}): "
    malformed += (f"{bad_candidates} of {len(candidates)} strategy candidates, " if candidates else "")
    malformed += f"{bad_steps} of {len(steps)} action replies"
    lines.append([("malformed  ", "head"), (malformed, "bad" if bad else "")])
    judged = [t for t in trajectories if t["judge"] is not None]
    if judged:
        flagged = sum(step["flagged"] for t in judged for step in t["steps"])
        judged_steps = sum(len(t["steps"]) for t in judged)
        unparsed = sum(not t["judge"]["parsed"] for t in judged)
        counted = f"{flagged} of {judged_steps} judged steps ({_share(flagged, judged_steps)}) in {len(judged)} "
        lines.append([("flagged steps  ", "head"), (counted + "judged episode(s)", "flag" if flagged else ""),
                      (f"; {unparsed} judgment(s) UNPARSED", "bad" if unparsed else "dim")])
    else:
        lines.append([("flagged steps  ", "head"), ("no judged episode (the judge is off, or validation)", "dim")])
    lines.append([("zero-advantage groups  ", "head"), *_zero_groups(records)])
    folders = sorted({folder for r in records
                      if (folder := split_game_path(str(r["task"]["game_file"]), str(r["task"]["split"]))[0])})
    if folders:
        lines.append([("game files  ", "head"), ("relative to the data folder " + ", ".join(folders), "dim")])
    return Node([("step summary", "head")], [Node(spans) for spans in lines])


def _zero_groups(records: list[dict[str, Any]]) -> list[Span]:
    """Strategy-level groups (a task's kept strategies) and trajectory-level ones (one strategy's episodes)
    whose every advantage is 0: all members scored alike, so the group trains nothing."""
    task_groups = [[s["advantage"] for s in r["strategies"] if s["advantage"] is not None] for r in records
                   if r["mode"] != "grpo"]
    task_groups = [g for g in task_groups if g]
    episode_groups = [[t["advantage"] for t in s["trajectories"] if t["advantage"] is not None]
                      for r in records for s in r["strategies"]]
    episode_groups = [g for g in episode_groups if g]
    if not task_groups and not episode_groups:
        return [("none to count: these records carry no advantages (validation)", "dim")]
    zero_tasks = sum(all(abs(a) < ZERO for a in g) for g in task_groups)
    zero_episodes = sum(all(abs(a) < ZERO for a in g) for g in episode_groups)
    spans: list[Span] = []
    if task_groups:
        spans.append((f"strategy level {zero_tasks} of {len(task_groups)} task(s) (every A(z) 0)",
                      "warn" if zero_tasks else ""))
        spans.append(("; ", ""))
    spans.append((f"trajectory level {zero_episodes} of {len(episode_groups)} group(s) (every A(tau) 0)",
                  "warn" if zero_episodes else ""))
    return spans


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def task_tree(record: dict[str, Any], env: str | None = None) -> Node:
    """Everything the dump says about one task's group."""
    task = record["task"]
    head = [*task_summary(record, env), (f"  ({record['kind']} step {record['step']}, mode {record['mode']}, "
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
    credit = step.get("credit")  # GiGPO's terms (strata/workflow/dump.py); absent from older dumps
    if credit is not None:
        spans.append((f"  = episode {credit['episode_part']:+.2f}, step {credit['step_part']:+.2f} "
                       f"(G {credit['discounted_return']:.2f}, anchor {credit['anchor']} shared by "
                       f"{credit['step_group_size']}), penalty {credit['penalty']:+.2f}", "dim"))
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
