"""Which games each training step trained on: verl's sampler replayed (real verl and torchdata), checked against a
run's dumps; and the learning benchmark's comparison of trained and not-yet-trained games, by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from strata.envs.task_list import write_task_list
from strata.envs.tasks import Task
from strata.report.paired import runs_as_one, trained_effect
from strata.report.trained_games import ReplayError, replayed_batches, trained_by_step, trained_games
from strata.workflow.dump import DumpSettings, DumpWriter

GAMES = 12
GAME_NAMES = [f"g{i:02d}" for i in range(20)]
DATA = {"train_batch_size": 4, "shuffle": True, "seed": 1, "dataloader_num_workers": 8}


def test_an_unshuffled_loader_gives_the_tasks_in_order_and_wraps_around() -> None:
    batches = replayed_batches({**DATA, "shuffle": False}, GAMES, 5)
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [0, 1, 2, 3], [4, 5, 6, 7]]


def test_a_shuffled_epoch_draws_every_task_once_and_the_next_epoch_anew() -> None:
    batches = replayed_batches(DATA, GAMES, 6)
    first, second = sum(batches[:3], []), sum(batches[3:], [])
    assert sorted(first) == sorted(second) == list(range(GAMES))
    assert first != second
    assert replayed_batches(DATA, GAMES, 6) == batches  # seeded: the same order every time
    assert replayed_batches({**DATA, "seed": 2}, GAMES, 6) != batches


def test_worker_processes_change_the_order() -> None:
    """A loader with workers draws one more permutation an epoch than one without, so the replay must copy the run's
    choice: the learning benchmark's runs have 8 workers (verl's default), and their dumps agree with this."""
    assert replayed_batches(DATA, GAMES, 3) != replayed_batches({**DATA, "dataloader_num_workers": 0}, GAMES, 3)


def _run(tmp_path: Path, steps: int, dumped: dict[int, list[int]]) -> tuple[Path, Path]:
    """A run folder as the trainer leaves it: config.yaml, metrics.jsonl, a task list and training dumps."""
    agent, run = tmp_path / "agent", tmp_path / "run"
    tasks = []
    for index in range(GAMES):
        game = agent / f"rl_data/train/pick-Mug-{index}/trial_{index}/game.tw-pddl"
        game.parent.mkdir(parents=True)
        game.write_text(json.dumps({"grammar": 'Your task is to: put a mug in desk."'}))
        tasks.append(Task(str(game), "pick_and_place_simple", "train", index))
    write_task_list(tasks, agent / "rl_train.parquet")
    run.mkdir()
    (run / "config.yaml").write_text(yaml.safe_dump({"data": {**DATA, "train_files": str(agent / "rl_train.parquet")}}))
    (run / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "data": {"timing_s/step": 1.0}}) + "\n"
                                               for s in range(1, steps + 1)))
    writer = DumpWriter(DumpSettings(run_dir=run, train_every=1))
    for step, indices in dumped.items():
        for index in indices:
            writer.maybe_write("train", step, tasks[index], lambda t=tasks[index], s=step: {
                "schema": 1, "kind": "train", "step": s,
                "task": {"index": t.index, "game_file": t.game_file, "split": t.split}})
    return agent, run


def test_the_trained_games_are_named_as_the_outcome_files_name_them(tmp_path: Path) -> None:
    order = replayed_batches(DATA, GAMES, 4)
    agent, run = _run(tmp_path, 4, {2: order[1], 4: order[3][:2]})  # a dump may hold some of a step's tasks
    rows = trained_games(run, root=agent)
    assert [row["step"] for row in rows] == [1, 2, 3, 4]
    assert rows[0]["games"] == [f"rl_data/train/pick-Mug-{i}/trial_{i}" for i in order[0]]
    by_step = trained_by_step(rows)
    assert by_step[3] == {game for row in rows[:3] for game in row["games"]}
    assert len(by_step[4]) == GAMES  # the first epoch (3 steps) drew every game; step 4 draws again


def test_a_replay_that_disagrees_with_a_dumped_step_is_refused(tmp_path: Path) -> None:
    order = replayed_batches(DATA, GAMES, 3)
    wrong = sorted(set(range(GAMES)) - set(order[1]))[:4]
    agent, run = _run(tmp_path, 3, {1: order[0], 2: wrong})
    with pytest.raises(ReplayError, match="step 2 trained"):
        trained_games(run, root=agent)


def test_a_resumed_run_repeats_metric_lines_but_not_steps(tmp_path: Path) -> None:
    agent, run = _run(tmp_path, 3, {3: replayed_batches(DATA, GAMES, 3)[2]})
    with open(run / "metrics.jsonl", "a") as metrics:  # resumed from global_step_2: steps 3 logged again
        metrics.write(json.dumps({"step": 3, "data": {"timing_s/step": 1.0}}) + "\n")
    assert [row["step"] for row in trained_games(run, root=agent)] == [1, 2, 3]


DAMAGES = {
    "no config": lambda agent, run: (run / "config.yaml").unlink(),
    "config without data": lambda agent, run: (run / "config.yaml").write_text("trainer: {}\n"),
    "no task list": lambda agent, run: (agent / "rl_train.parquet").unlink(),
    "cut metrics line": lambda agent, run: (run / "metrics.jsonl").write_text((run / "metrics.jsonl").read_text()[:-9]),
    "no training dumps": lambda agent, run: shutil.rmtree(run / "rollouts"),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_run_that_cannot_be_replayed_says_so(tmp_path: Path, damage: str) -> None:
    agent, run = _run(tmp_path, 2, {1: replayed_batches(DATA, GAMES, 1)[0]})
    DAMAGES[damage](agent, run)
    with pytest.raises(ReplayError, match="no training dumps" if damage == "no training dumps" else "cannot replay"):
        trained_games(run, root=agent)


def _outcomes(changes: dict[int, dict[str, int]]) -> list[dict]:
    """Rows with every game of `GAME_NAMES` lost at step 0 and won at step k as ``changes[k][game]`` says."""
    rows = [{"step": 0, "split": "train_fixed", "game": game, "won": False} for game in GAME_NAMES]
    rows += [{"step": k, "split": "train_fixed", "game": game, "won": bool(won)}
             for k, by_game in changes.items() for game, won in by_game.items()]
    return rows



def test_games_won_once_trained_on_give_an_effect_of_one() -> None:
    trained = {10: set(GAME_NAMES[:5]), 20: set(GAME_NAMES[:10])}
    outcomes = _outcomes({k: {g: int(g in games) for g in GAME_NAMES} for k, games in trained.items()})
    effect = trained_effect(outcomes, trained, "train_fixed")
    assert effect.steps == (10, 20)
    assert (effect.trained, effect.not_yet) == (1.0, 0.0)
    assert (effect.difference.mean, effect.difference.low, effect.difference.high) == (1.0, 1.0, 1.0)
    assert effect.difference.games == 20


def test_a_gain_that_grows_with_the_step_alone_is_no_effect() -> None:
    """Later steps have more trained games and more general gain: pooling the steps would credit the training with
    the time; comparing the two kinds at the same step does not."""
    trained = {10: set(GAME_NAMES[:2]), 20: set(GAME_NAMES[:18])}
    changes = {10: {g: int(g in {"g00", "g02", "g03", "g04", "g05"}) for g in GAME_NAMES},  # a few of each kind
               20: {g: 1 for g in GAME_NAMES}}  # ... and every game at step 20
    outcomes = _outcomes(changes)
    effect = trained_effect(outcomes, trained, "train_fixed")
    # step 10: trained g00-g01 gain 1/2, the other 18 gain 4/18; step 20: trained 18/18, others 2/2
    assert effect.trained == pytest.approx((0.5 + 1.0) / 2)
    assert effect.not_yet == pytest.approx((4 / 18 + 1.0) / 2)
    assert effect.difference.mean == pytest.approx((0.5 - 4 / 18) / 2)
    assert effect.difference.low < effect.difference.mean < effect.difference.high


def test_no_step_with_both_kinds_gives_no_effect_and_a_missing_game_is_left_out() -> None:
    every = set(GAME_NAMES)
    assert trained_effect(_outcomes({10: {g: 1 for g in GAME_NAMES}}), {10: every}, "train_fixed") is None
    trained = {10: set(GAME_NAMES[:10])}
    changes = {10: {g: int(g in trained[10]) for g in GAME_NAMES if g != "g15"}}
    effect = trained_effect(_outcomes(changes), trained, "train_fixed")
    assert effect.difference.mean == 1.0 and effect.difference.games == 19


def test_pooled_runs_compare_all_their_trained_games_with_all_their_others_at_each_step() -> None:
    """Run A trained on g00-g09 and won just those (effect 1); run B trained on g10-g19 and won every game
    (effect 0). Pooled at step 10: trained 20/20 won, not yet 10/20: +0.5, over 40 (run, game) units."""
    first = ({10: set(GAME_NAMES[:10])}, {g: int(g in GAME_NAMES[:10]) for g in GAME_NAMES})
    second = ({10: set(GAME_NAMES[10:])}, {g: 1 for g in GAME_NAMES})
    runs = [(_outcomes({10: changes}), trained) for trained, changes in (first, second)]
    assert [trained_effect(*run, "train_fixed").difference.mean for run in runs] == [1.0, 0.0]
    effect = trained_effect(*runs_as_one(runs), "train_fixed")
    assert (effect.trained, effect.not_yet) == (1.0, 0.5)
    assert effect.difference.mean == 0.5 and effect.difference.games == 2 * len(GAME_NAMES)
    assert effect.difference.low < 0.5 < effect.difference.high
