"""Synthetic trajectory dumps that follow the dump schema exactly (`strata/workflow/dump.py`).

`write_run(root)` writes a run folder with:
- train step 1: one task;
- train step 3, two files: `step_000003-b` (older) with tasks 5 and 7, `step_000003-a` (newer, written as two
  gzip members) with task 7 again (a resumed run re-did it: its line must win) and a grpo-mode task 9.
  Task 5 has a malformed candidate (#1), two kept strategies (the second dropped), a won trajectory whose judge
  flagged step 2, and a failed one with a malformed step and an inadmissible command;
- valid step 0: one task, no judge, no advantages.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

GOAL = "heat some egg and put it in garbagecan"
STRATEGY_A = "Find the egg in the fridge, heat it in the microwave, then drop it in the garbagecan."
STRATEGY_B = "Search every countertop before the fridge."
MALFORMED_CANDIDATE = "I think I should look around <strat"
JUDGE_TEXT = "Step 2 wasted time opening the wrong cabinet. <flagged>2</flagged>"
MALFORMED_RESPONSE = "Let me open the microwave now"
GAME = "/data/json_2.1.1/train/pick_heat_then_place_in_recep-Egg-None-GarbageCan-11/trial_T1/game.tw-pddl"


def candidate(index: int, text: str, strategy: str | None, kept_rank: int | None,
              cosine: float | None = 0.5) -> dict[str, Any]:
    return {"index": index, "text": text, "strategy": strategy, "well_formed": strategy is not None,
            "kept": kept_rank is not None, "kept_rank": kept_rank, "nearest_kept_cosine": cosine,
            "num_tokens": 30 + index, "truncated": strategy is None}


def step(number: int, action: str | None, observation: str, advantage: float | None, admissible: bool | None = True,
         flagged: bool = False, response: str | None = None, command: str | None = None) -> dict[str, Any]:
    stepped = action is not None
    return {"step": number, "response": response or f"<action>{action}</action>", "action": action,
            "command": (command or action) if stepped else None, "admissible": admissible if stepped else None,
            "observation": observation, "num_tokens": 20 + number, "truncated": False, "advantage": advantage,
            "flagged": flagged}


def trajectory(index: int, won: bool, end_reason: str, steps: list[dict[str, Any]], advantage: float | None,
               judge: dict[str, Any] | None = None, trained: bool = True) -> dict[str, Any]:
    return {"index": index, "won": won, "reward": 1.0 if won else 0.0, "end_reason": end_reason,
            "num_steps": len(steps), "advantage": advantage, "trained": trained,
            "environment_failure": end_reason == "worker_lost", "judge": judge, "steps": steps}


def record(kind: str, step_number: int, index: int, mode: str, candidates: list[dict[str, Any]],
           strategies: list[dict[str, Any]], description: str = GOAL) -> dict[str, Any]:
    return {"schema": 1, "kind": kind, "step": step_number, "mode": mode,
            "task": {"index": index, "game_file": GAME, "task_type": "pick_heat_then_place_in_recep",
                     "subtask": "heat", "split": "train" if kind == "train" else "valid_seen"},
            "task_description": description,
            "initial_observation": "-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room.",
            "candidates": candidates, "strategies": strategies}


def full_task(step_number: int) -> dict[str, Any]:
    """Task 5: every case the viewer marks."""
    won = trajectory(0, True, "won", [
        step(1, "go to fridge 1", "You arrive at fridge 1. The fridge 1 is closed.", 0.78),
        step(2, "open cabinet 3", "You open the cabinet 3. It is empty.", -0.35, flagged=True),
        step(3, "heat egg 1 with microwave 1", "You heat the egg 1 using the microwave 1.", 0.78,
             command="heat egg 1 with microwave 1"),
    ], 0.88, judge={"text": JUDGE_TEXT, "parsed": True, "flagged_steps": [2]})
    failed = trajectory(1, False, "step_limit", [
        step(1, None, "Your answer had no <action> tag.", -0.61, response=MALFORMED_RESPONSE),
        step(2, "Fly to the moon", "Nothing happens.", -0.61, admissible=False, command="fly to the moon"),
    ], -0.88, judge={"text": "No step stands out.", "parsed": True, "flagged_steps": []})
    lost = trajectory(0, False, "worker_lost", [], None, trained=False)
    return record("train", step_number, 5, "strata",
                  [candidate(0, f"<strategy>{STRATEGY_A}</strategy>", STRATEGY_A, 0, 0.31),
                   candidate(1, MALFORMED_CANDIDATE, None, None, None),
                   candidate(2, f"<strategy>{STRATEGY_B}</strategy>", STRATEGY_B, 1, 0.31)],
                  [{"candidate": 0, "strategy": STRATEGY_A, "score": 0.5, "advantage": 0.71, "token_advantage": 0.93,
                    "dropped": False, "trajectories": [won, failed]},
                   {"candidate": 2, "strategy": STRATEGY_B, "score": None, "advantage": None,
                    "token_advantage": None, "dropped": True, "trajectories": [lost]}])


def simple_task(kind: str, step_number: int, index: int, description: str, mode: str = "strata") -> dict[str, Any]:
    """One strategy (or none, in grpo mode) and one won trajectory."""
    train = kind == "train"
    episode = trajectory(0, True, "won", [step(1, "take egg 1 from fridge 1", "You pick up the egg 1.",
                                              0.5 if train else None)], 0.5 if train else None)
    if mode == "grpo":
        return record(kind, step_number, index, mode, [], [
            {"candidate": None, "strategy": None, "score": None, "advantage": None, "token_advantage": None,
             "dropped": False, "trajectories": [episode]}], description)
    return record(kind, step_number, index, mode, [candidate(0, f"<strategy>{STRATEGY_A}</strategy>", STRATEGY_A, 0,
                                                             None)],
                  [{"candidate": 0, "strategy": STRATEGY_A, "score": 1.0 if train else None,
                    "advantage": 0.0 if train else None, "token_advantage": 0.0 if train else None,
                    "dropped": False, "trajectories": [episode]}], description)


def write_dump(path: Path, records: list[dict[str, Any]], members: int = 1, mtime: float | None = None) -> Path:
    """Write ``records`` as gzip JSON Lines, split over ``members`` concatenated gzip members."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    size = -(-len(records) // members)
    for start in range(0, len(records), size):
        with gzip.open(path, "ab") as handle:
            handle.write("".join(json.dumps(r) + "\n" for r in records[start:start + size]).encode())
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def write_run(root: Path) -> Path:
    """The run folder described in the module docstring."""
    run = root / "run"
    train = run / "rollouts" / "train"
    write_dump(train / "step_000001-w0.jsonl.gz", [simple_task("train", 1, 0, "put a clean mug in coffeemachine")])
    write_dump(train / "step_000003-b.jsonl.gz", [full_task(3), simple_task("train", 3, 7, "OLD VERSION of task 7")],
               mtime=1_000_000)
    write_dump(train / "step_000003-a.jsonl.gz", [simple_task("train", 3, 7, "NEW VERSION of task 7"),
                                                  simple_task("train", 3, 9, "grpo task", mode="grpo")],
               members=2, mtime=2_000_000)
    write_dump(run / "rollouts" / "valid" / "step_000000-w0.jsonl.gz",
               [simple_task("valid", 0, 1, "look at the vase under the desklamp")])
    (run / "config.yaml").write_text("trainer: {}\n")
    return run
