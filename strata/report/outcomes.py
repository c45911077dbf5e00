"""Per-game validation outcomes of a run, read from its trajectory dumps.

One row per validation episode: ``{"step", "split", "game", "seed", "won", "admissible_rate"}``; the learning
benchmark writes them to ``outcomes.jsonl`` so that every number of its results can be recomputed from the
episodes (`strata.report.paired`). ``split`` is the benchmark's name of a game set (``held_out``, ``train_fixed``),
mapped from the dumped ALFWorld split; ``seed`` is the sampling seed the episode was played with.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from strata.core.seeding import task_sampling_seed
from strata.report.dumps import dump_files, load_step, rollouts_dir


def game_id(game_file: str, root: Path | None) -> str:
    """The game's folder, relative to ``root`` when it lies under it (stable across machines and runs)."""
    folder = Path(game_file).parent
    if root is not None and folder.is_relative_to(root):
        return folder.relative_to(root).as_posix()
    return folder.as_posix()


def episode_outcome(record: Mapping[str, Any], run_seed: int, split_names: Mapping[str, str],
                    root: Path | None = None) -> dict[str, Any] | None:
    """The outcome row of one dumped validation task (its single episode); None for a split not in
    ``split_names``."""
    task = record["task"]
    if task["split"] not in split_names:
        return None
    trajectory = record["strategies"][0]["trajectories"][0]
    steps = trajectory["steps"]
    return {
        "step": int(record["step"]),
        "split": split_names[task["split"]],
        "game": game_id(task["game_file"], root),
        "seed": task_sampling_seed(run_seed, task["split"], task["index"], None),
        "won": bool(trajectory["won"]),
        "admissible_rate": round(sum(bool(s["admissible"]) for s in steps) / len(steps), 4) if steps else 0.0,
    }


def validation_outcomes(run: str | Path, run_seed: int, split_names: Mapping[str, str],
                        root: Path | None = None) -> list[dict[str, Any]]:
    """Every validation episode of ``run`` as an outcome row, by step, then split and game."""
    rows = []
    for files in dump_files(rollouts_dir(run), "valid").values():
        for record in load_step(files):
            if (row := episode_outcome(record, run_seed, split_names, root)) is not None:
                rows.append(row)
    return sorted(rows, key=lambda row: (row["step"], row["split"], row["game"]))


def write_outcomes(rows: list[dict[str, Any]], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def read_outcomes(path: str | Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
