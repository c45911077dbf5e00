"""Find the games of one split in the standard ALFWorld layout.

Layout (what ``alfworld-download`` writes into ``$ALFWORLD_DATA``, and what our generator writes too)::

    <data_path>/json_2.1.1/<split>/<task folder>/trial_*/traj_data.json
                                                        /game.tw-pddl

The selection rules are AlfredTWEnv's (alfworld 0.4.2, ``collect_game_files``), so the counts match the
published ones (valid_seen 140, valid_unseen 134): trials of movable-receptacle or sliced tasks are
skipped, as are task types not selected, trials without a game file, and games not marked solvable.
Unlike AlfredTWEnv the result is sorted, so a task's index is stable across machines.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strata.envs.alfworld.tasks import TASK_TYPE_TO_SUBTASK, check_split, resolve_task_types
from strata.envs.errors import AlfworldDataError, GameFileError
from strata.envs.tasks import Task

logger = logging.getLogger(__name__)

DATA_VERSION_DIR = "json_2.1.1"
TRAJ_FILE = "traj_data.json"
GAME_FILE = "game.tw-pddl"
DOWNLOAD_HINT = "run `alfworld-download` (it fills $ALFWORLD_DATA) or pass the folder that holds json_2.1.1/"


@dataclass
class SplitScan:
    """The games found in one split, and how many trials were left out and why."""

    split: str
    tasks: list[Task]
    skipped: Counter[str] = field(default_factory=Counter)

    def counts_by_subtask(self) -> dict[str, int]:
        counts = Counter(task.subtask for task in self.tasks)
        return {sub: counts.get(sub, 0) for sub in TASK_TYPE_TO_SUBTASK.values()}


def split_dir(data_path: str | Path, split: str) -> Path:
    """``<data_path>/json_2.1.1/<split>``, checked to exist."""
    check_split(split)
    root = Path(data_path).expanduser().resolve()
    if not root.is_dir():
        raise AlfworldDataError(f"ALFWorld data folder {root} does not exist: {DOWNLOAD_HINT}")
    version_dir = root / DATA_VERSION_DIR
    if not version_dir.is_dir():
        raise AlfworldDataError(f"{version_dir} not found, so {root} holds no ALFWorld games: {DOWNLOAD_HINT}")
    folder = version_dir / split
    if not folder.is_dir():
        raise AlfworldDataError(f"split folder {folder} is missing (incomplete download?): {DOWNLOAD_HINT}")
    return folder


def read_json(path: Path) -> Any:
    """Parse a JSON file, turning any failure into a `GameFileError` that names the file."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as exc:
        raise GameFileError(f"{path}: not valid JSON ({exc}); regenerate or re-download this game") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise GameFileError(f"{path}: cannot be read ({exc})") from exc


def read_task_type(traj_file: Path) -> str:
    """The ``task_type`` field of a ``traj_data.json``."""
    traj = read_json(traj_file)
    if not isinstance(traj, dict) or not isinstance(traj.get("task_type"), str):
        raise GameFileError(f"{traj_file}: has no 'task_type' string field; regenerate or re-download this game")
    return traj["task_type"]


def check_game_file(game_file: Path) -> bool:
    """Whether a ``game.tw-pddl`` is marked solvable; raises `GameFileError` if it is malformed."""
    game = read_json(game_file)
    missing = [k for k in ("pddl_domain", "grammar", "pddl_problem") if not isinstance(game, dict) or k not in game]
    if missing:
        raise GameFileError(
            f"{game_file}: missing {', '.join(missing)}; not an ALFWorld tw-pddl game (regenerate or re-download it)"
        )
    return bool(game.get("solvable", False))


_TASK_RULE = re.compile(r"Your task is to: (.*?)\"")


def task_description_of_game(game_file: str | Path) -> str:
    """The goal sentence in a game's grammar ("put a clean mug in coffeemachine"), read without the engine."""
    game = read_json(Path(game_file))
    match = _TASK_RULE.search(game.get("grammar", "") if isinstance(game, dict) else "")
    if match is None:
        raise GameFileError(f"{game_file}: its grammar has no 'Your task is to: ...' rule; regenerate this game")
    return match.group(1).strip().removesuffix(".").strip()


def task_row(task: Task) -> tuple[str, dict[str, Any]]:
    """The task list's description of an ALFWorld task: its goal sentence (`strata.envs.registry`)."""
    return task_description_of_game(task.game_file), {}


def game_fingerprint(task: Task, memo: dict) -> str:
    """What an ALFWorld game is: its file's SHA-256, wherever it lies (`strata.envs.registry`)."""
    return hashlib.sha256(Path(task.game_file).read_bytes()).hexdigest()


def scan_split(data_path: str | Path, split: str, task_types: Iterable[str] | None = None) -> SplitScan:
    """All playable games of ``split`` under ``data_path``, sorted by path (see the module docstring).

    ``task_types`` selects by subtask or ALFWorld task-type name; ``None`` keeps all six.
    Raises `AlfworldDataError` when the split has no playable game, `GameFileError` for a corrupt file.
    """
    folder = split_dir(data_path, split)
    wanted = set(resolve_task_types(task_types))
    scan = SplitScan(split=split, tasks=[])
    trial_dirs = sorted(p.parent for p in folder.glob(f"*/*/{TRAJ_FILE}"))
    for trial in trial_dirs:
        if "movable" in str(trial) or "Sliced" in str(trial):
            scan.skipped["movable or sliced task"] += 1
            continue
        task_type = read_task_type(trial / TRAJ_FILE)
        if task_type not in TASK_TYPE_TO_SUBTASK:
            scan.skipped[f"task type {task_type}"] += 1
            continue
        if task_type not in wanted:
            scan.skipped["task type not selected"] += 1
            continue
        game_file = trial / GAME_FILE
        if not game_file.is_file():
            scan.skipped[f"no {GAME_FILE}"] += 1
            continue
        if not check_game_file(game_file):
            scan.skipped["not marked solvable"] += 1
            continue
        scan.tasks.append(Task(game_file=str(game_file), task_type=task_type, split=split, index=len(scan.tasks)))
    if not scan.tasks:
        detail = ", ".join(f"{n} {why}" for why, n in sorted(scan.skipped.items())) or "no trial folders"
        raise AlfworldDataError(
            f"no playable games in {folder} ({len(trial_dirs)} trials with {TRAJ_FILE}; skipped: {detail}): "
            f"{DOWNLOAD_HINT}"
        )
    for why, n in sorted(scan.skipped.items()):
        logger.info("%s: skipped %d trials (%s)", folder, n, why)
    return scan


def load_split(data_path: str | Path, split: str, task_types: Iterable[str] | None = None) -> list[Task]:
    """The tasks of one split (see `scan_split`)."""
    return scan_split(data_path, split, task_types).tasks
