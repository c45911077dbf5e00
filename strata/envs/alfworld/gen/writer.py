"""Write a `GameSpec` as an ALFWorld game folder and prove it winnable on the real engine.

A written trial folder has what ALFWorld's released data has: ``traj_data.json`` (task type and pddl
params), ``initial_state.pddl`` and ``game.tw-pddl`` (domain, grammar with the goal sentence, problem,
``solvable``, ``walkthrough``). Verification loads the written file, asks the planner for a plan, replays
it through the engine and requires a win on its last command; the plan is then stored as the walkthrough.
A game that fails is deleted and reported with `UnwinnableGameError`.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from strata.envs.alfworld.discovery import GAME_FILE, TRAJ_FILE
from strata.envs.alfworld.engine import AlfworldEngine, GameSession
from strata.envs.alfworld.gen.grammar import DEFAULT_GRAMMAR_VERSION, game_logic
from strata.envs.alfworld.gen.pddl import problem_pddl
from strata.envs.alfworld.gen.spec import GameSpec
from strata.envs.errors import UnwinnableGameError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GeneratedGame:
    """A written and verified game: its file, task type and the plan that wins it."""

    game_file: str
    task_type: str
    walkthrough: tuple[str, ...]


def trial_dir(split_dir: Path, spec: GameSpec, number: int) -> Path:
    """ALFRED naming: ``<task type>-<Object>-<mrecep or None>-<Parent or Lamp>-<scene>/trial_T..._<n>``."""
    parent = spec.toggle_target if spec.task_type == "look_at_obj_in_light" else spec.parent_target
    task_folder = f"{spec.task_type}-{spec.object_target}-None-{parent}-{spec.floor_plan}"
    return split_dir / task_folder / f"trial_T20000101_000000_{number:06d}"


def traj_data(spec: GameSpec, trial_id: str, seed_info: dict[str, object]) -> dict[str, object]:
    """The ``traj_data.json`` fields ALFWorld reads, plus where the game came from."""
    return {
        "task_id": trial_id,
        "task_type": spec.task_type,
        "pddl_params": {
            "object_target": spec.object_target,
            "parent_target": spec.parent_target,
            "toggle_target": spec.toggle_target,
            "mrecep_target": "",
            "object_sliced": False,
        },
        "scene": {"floor_plan": f"FloorPlan{spec.floor_plan}", "scene_num": spec.floor_plan},
        "turk_annotations": {"anns": [{"task_desc": spec.task_description, "high_descs": [], "votes": []}]},
        "strata_generator": seed_info,
    }


def verify_game(engine: AlfworldEngine, game_file: str) -> tuple[str, ...]:
    """The planner's plan for ``game_file``, replayed to a win; raises `UnwinnableGameError` otherwise."""
    session = GameSession(engine, max_steps=10_000)
    try:
        start = session.start(game_file, with_walkthrough=True)
    except Exception as exc:  # the engine refuses games whose goal is unreachable at load time
        raise UnwinnableGameError(
            f"{game_file}: the engine rejects it, as it does when the goal cannot be reached from the initial "
            f"state ({type(exc).__name__}: {exc})"
        ) from exc
    plan = start.walkthrough or ()
    if not plan:
        raise UnwinnableGameError(f"{game_file}: the planner finds no plan that reaches the goal")
    for i, command in enumerate(plan, 1):
        result = session.step(command)
        if result.won != (i == len(plan)):
            state = "won early" if result.won else "not won"
            raise UnwinnableGameError(
                f"{game_file}: replaying the plan, step {i}/{len(plan)} {command!r} -> {state}: {result.observation!r}"
            )
    return plan


def write_game_files(
    spec: GameSpec,
    split_dir: str | Path,
    number: int,
    grammar_version: str = DEFAULT_GRAMMAR_VERSION,
    seed_info: dict[str, object] | None = None,
) -> Path:
    """Write ``spec`` under ``split_dir`` as trial ``number``, *unverified* and without a walkthrough; the
    game file's path. `write_game` is what makes training games; this alone serves measurements on rooms
    whose planner run is too slow to repeat (a whole ALFRED kitchen: minutes), where nothing needs a win."""
    logic = game_logic(grammar_version)
    folder = trial_dir(Path(split_dir), spec, number)
    if folder.exists():
        raise FileExistsError(f"{folder} already exists; write generated games into an empty folder")
    folder.mkdir(parents=True)
    info = {"grammar_version": grammar_version, **(seed_info or {})}
    problem = problem_pddl(spec, f"plan_{folder.name}")
    game = {
        "pddl_domain": logic.pddl_domain,
        "grammar": logic.grammar.replace("UNKNOWN GOAL", spec.task_description),
        "pddl_problem": problem,
        "solvable": True,
        "walkthrough": None,
    }
    game_file = folder / GAME_FILE
    (folder / "initial_state.pddl").write_text(problem)
    (folder / TRAJ_FILE).write_text(json.dumps(traj_data(spec, folder.name, info), indent=1))
    game_file.write_text(json.dumps(game))
    return game_file


def write_game(
    spec: GameSpec,
    split_dir: str | Path,
    number: int,
    engine: AlfworldEngine,
    grammar_version: str = DEFAULT_GRAMMAR_VERSION,
    seed_info: dict[str, object] | None = None,
) -> GeneratedGame:
    """Write ``spec`` under ``split_dir`` as trial ``number``, verify it, store its walkthrough."""
    game_file = write_game_files(spec, split_dir, number, grammar_version, seed_info)
    folder = game_file.parent
    game = json.loads(game_file.read_text())
    try:
        plan = verify_game(engine, str(game_file))
    except UnwinnableGameError:
        shutil.rmtree(folder)
        if not any(folder.parent.iterdir()):
            folder.parent.rmdir()
        raise
    game["walkthrough"] = list(plan)
    game_file.write_text(json.dumps(game))
    engine.unload()  # the engine holds the file as it was before the walkthrough was added
    logger.debug("wrote %s (%d-step plan)", game_file, len(plan))
    return GeneratedGame(game_file=str(game_file), task_type=spec.task_type, walkthrough=plan)
