"""Generate many verified games for one split, deterministically from a seed.

Game ``i`` of a split has task type ``task_types[i % len(task_types)]`` (so any 6k games cover the six
subtasks evenly) and its own random stream seeded by ``(seed, split, i)``: adding games never changes
the earlier ones, and the same call writes byte-identical files on any machine.
"""

from __future__ import annotations

import logging
import multiprocessing
import random
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from strata.envs.alfworld.discovery import DATA_VERSION_DIR
from strata.envs.alfworld.engine import AlfworldEngine
from strata.envs.alfworld.gen.grammar import DEFAULT_GRAMMAR_VERSION, game_logic
from strata.envs.alfworld.gen.spec import sample_spec
from strata.envs.alfworld.gen.writer import GeneratedGame, write_game
from strata.envs.alfworld.tasks import check_split, resolve_task_types
from strata.envs.errors import UnwinnableGameError

logger = logging.getLogger(__name__)

MAX_REDRAWS = 5


def generate_split(
    data_path: str | Path,
    split: str,
    count: int,
    seed: int = 0,
    task_types: Iterable[str] | None = None,
    grammar_version: str = DEFAULT_GRAMMAR_VERSION,
    max_receptacles: int | None = 8,
    max_object_classes: int | None = 5,
    max_instances: int = 2,
    engine: AlfworldEngine | None = None,
    workers: int = 1,
    folder: Path | None = None,
) -> list[GeneratedGame]:
    """Write ``count`` verified games to ``<data_path>/json_2.1.1/<split>/`` (the ALFWorld layout), or to ``folder``
    (a staging folder renamed to that place when all are written: `strata make-games`).

    ``task_types`` selects by subtask or task-type name (all six by default). A drawn game the planner
    cannot win is redrawn from the same stream (at most `MAX_REDRAWS` times, each logged). The ``max_*``
    arguments bound the room's size (see `strata.envs.alfworld.gen.spec`). ``workers`` > 1 writes the games in that
    many processes, each with its own engine (verifying a game is single-threaded planner work, ~0.6 s);
    every game's stream is its own, so the files are the same as with one.
    """
    check_split(split)
    game_logic(grammar_version)  # fail on an unknown version before writing anything
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    batch = _Batch(folder or Path(data_path) / DATA_VERSION_DIR / split, split, seed, resolve_task_types(task_types),
                   grammar_version, (max_receptacles, max_object_classes, max_instances))
    if workers <= 1 or count < 2:
        return batch.write(range(count), engine or AlfworldEngine())
    shares = [range(k, count, workers) for k in range(min(workers, count))]
    with ProcessPoolExecutor(len(shares), mp_context=multiprocessing.get_context("spawn")) as pool:
        parts = list(pool.map(batch.write, shares))
    return [parts[i % len(shares)][i // len(shares)] for i in range(count)]


@dataclass(frozen=True)
class _Batch:
    """What every game of one `generate_split` call shares; picklable, so worker processes can write a share."""

    split_dir: Path
    split: str
    seed: int
    task_types: list[str]
    grammar_version: str
    bounds: tuple[int | None, int | None, int]

    def write(self, indices: Iterable[int], engine: AlfworldEngine | None = None) -> list[GeneratedGame]:
        engine = engine or AlfworldEngine()
        return [self._write_one(i, engine) for i in indices]

    def _write_one(self, i: int, engine: AlfworldEngine) -> GeneratedGame:
        task_type = self.task_types[i % len(self.task_types)]
        rng = random.Random(f"strata-games/{self.seed}/{self.split}/{i}")
        info = {"seed": self.seed, "split": self.split, "index": i}
        for redraw in range(MAX_REDRAWS + 1):
            spec = sample_spec(task_type, rng, self.split, *self.bounds)
            try:
                game = write_game(spec, self.split_dir, i + 1, engine, self.grammar_version, info)
                break
            except UnwinnableGameError as exc:
                if redraw == MAX_REDRAWS:
                    raise
                logger.warning("redrawing game %d of %s: %s", i, self.split, exc)
        logger.info("%s %d: %s", self.split, i + 1, game.game_file)
        return game
