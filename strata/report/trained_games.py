"""Which games each training step of a run trained on, replayed from verl's own sampler and checked against the dumps.

The learning benchmark's fixed training games are part of the pool RL draws from, so their success can rise
because the policy learnt those games rather than the skill. verl's sampler draws the games in a random order,
which makes a randomised experiment of every validation: at step k some fixed games have been trained on and
the others not yet, by chance alone (`strata.report.paired.trained_effect` compares the two).

The order is not logged, so it is replayed: verl's `create_rl_sampler` on the run's data settings, inside the
same kind of dataloader (`StatefulDataLoader`, ``drop_last``, worker processes or not, as the run had them; a
loader with workers draws one extra permutation each epoch, so this choice changes the order). The replay is
trusted only if it agrees with every training step the run dumped; otherwise `ReplayError` names the step.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from strata.envs.errors import TaskListError
from strata.envs.task_list import read_task_list
from strata.report.dumps import DumpError, dump_files, load_step, rollouts_dir
from strata.report.outcomes import game_id


class ReplayError(Exception):
    """The replayed order disagrees with the run's dumps (or the run lacks what a replay needs); one line."""


def replayed_batches(data: Mapping[str, Any], num_tasks: int, steps: int) -> list[list[int]]:
    """The task indices verl's training dataloader gives steps 1..``steps`` for ``data`` (the run's ``data``
    settings) over a task list of ``num_tasks`` rows."""
    from omegaconf import OmegaConf
    from torchdata.stateful_dataloader import StatefulDataLoader
    from verl.trainer.ppo.utils import create_rl_sampler

    data = OmegaConf.create(dict(data))
    indices = list(range(num_tasks))
    batches: list[list[int]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torchdata's deprecation notice about torch.set_vital
        loader = StatefulDataLoader(
            indices, batch_size=data.get("gen_batch_size") or data.train_batch_size, drop_last=True,
            sampler=create_rl_sampler(data, indices), num_workers=min(int(data.get("dataloader_num_workers", 0)), 1))
        if len(loader) == 0:
            raise ReplayError(f"{num_tasks} tasks make no batch of {data.train_batch_size}")
        while len(batches) < steps:
            batches.extend(batch.tolist() for batch in loader)
    return batches[:steps]


def trained_games(run: str | Path, root: Path | None = None) -> list[dict[str, Any]]:
    """``[{"step": s, "games": [...]}, ...]`` for every training step ``run`` logged, the games named as the
    outcome files name them (`strata.report.outcomes.game_id` relative to ``root``).

    Raises:
        ReplayError: the run's saved config, task list or training dumps are missing, or the replay disagrees with
            a dumped step.
    """
    import yaml

    run = Path(run)
    try:
        config = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))
        tasks = read_task_list(config["data"]["train_files"])
        logged = [json.loads(line) for line in (run / "metrics.jsonl").read_text(encoding="utf-8").splitlines()]
        steps = max((row["step"] for row in logged if "timing_s/step" in row["data"]), default=0)  # resumed: repeats
    except (OSError, ValueError, KeyError, TypeError, TaskListError, yaml.YAMLError) as error:
        raise ReplayError(f"{run}: cannot replay its training order ({error})") from error
    games = [[game_id(tasks[i].game_file, root) for i in batch]
             for batch in replayed_batches(config["data"], len(tasks), steps)]
    try:
        dumped_steps = {step: files for step, files in dump_files(rollouts_dir(run), "train").items()
                        if 1 <= step <= steps}
    except DumpError as error:
        raise ReplayError(f"{run}: no training dumps to check a replay against ({error})") from error
    if not dumped_steps:
        raise ReplayError(f"{run}: no training dumps to check a replay against (run.dump.train_every)")
    for step, files in dumped_steps.items():
        dumped = sorted(game_id(record["task"]["game_file"], root) for record in load_step(files))
        if not set(dumped) <= set(games[step - 1]):
            raise ReplayError(f"{run}: step {step} trained {dumped}, the replay gives {sorted(games[step - 1])}")
    return [{"step": step, "games": batch} for step, batch in enumerate(games, start=1)]


def trained_by_step(rows: list[Mapping[str, Any]]) -> dict[int, set[str]]:
    """Step k -> every game trained on at steps 1..k, from `trained_games`' rows."""
    seen: set[str] = set()
    result = {}
    for row in sorted(rows, key=lambda row: row["step"]):
        seen |= set(row["games"])
        result[row["step"]] = set(seen)
    return result
