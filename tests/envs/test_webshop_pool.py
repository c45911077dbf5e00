"""WebShop through the env pool, task lists and the CLI: the same worker processes, start/step protocol and
outcome records as ALFWorld and ScienceWorld, on a generated catalogue."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from strata.cli import main
from strata.envs.errors import UnknownNameError
from strata.envs.play import play_tasks
from strata.envs.pool import EnvPool
from strata.envs.task_list import read_task_list, task_list_digest
from strata.envs.tasks import Task
from strata.envs.webshop.catalog import load_catalog
from strata.envs.webshop.generate import write_catalog
from strata.envs.webshop.prepare import webshop_tasks
from strata.envs.webshop.tasks import game_id, parse_game_id


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory) -> Path:
    return write_catalog(tmp_path_factory.mktemp("webshop"), num_products=300, seed=1)


@pytest.fixture(scope="module")
def pool():
    with EnvPool(num_workers=2, max_steps=15, engine="webshop") as shared:
        yield shared


def test_gold_wins_every_goal_through_the_pool_and_random_play_rarely(catalogue: Path, pool: EnvPool) -> None:
    tasks = webshop_tasks(catalogue, "test", limit=80)
    gold = asyncio.run(play_tasks(pool, tasks, "walkthrough"))
    assert [(o.won, o.reason, o.score) for o in gold] == [(True, "won", 1.0)] * 80
    assert all(3 <= o.num_steps <= 8 for o in gold)  # search, (next), product, options, buy
    floor = asyncio.run(play_tasks(pool, tasks, "random", seed=0))
    assert all(o.num_steps <= 15 for o in floor)
    # A real floor: it searches the goal's words and buys now and then (searching the listed `<your query>`
    # placeholder found nothing to buy), but rarely the right thing (measured: 39 purchases, 2 wins of 80).
    assert any(o.reason == "lost" for o in floor) and sum(o.won for o in floor) <= 4


def test_an_episode_ends_at_the_step_cap_or_on_a_purchase(catalogue: Path, pool: EnvPool) -> None:
    task = webshop_tasks(catalogue, "test", limit=1)[0]

    async def play(actions):
        async with pool.episode(task) as episode:
            assert episode.admissible_commands == ("search[<your query>]",)
            results = [await episode.step(action) for action in actions]
            return results, episode.outcome()

    results, outcome = asyncio.run(play(["Click[Search]."] * 15))  # normalised to click[search]: refused
    assert [r.admissible for r in results] == [False] * 15 and results[-1].done
    assert (outcome.reason, outcome.won, outcome.num_steps, outcome.score) == ("step_limit", False, 15, 0.0)
    results, outcome = asyncio.run(play(["search[shorts]", "click[next >]", "click[< prev]"]))
    first_product = next(c for c in results[-1].admissible_commands if c.startswith("click[b0"))
    results, outcome = asyncio.run(play(["search[shorts]", first_product, "click[buy now]"]))
    assert results[-1].done and outcome.reason in ("won", "lost") and outcome.score == results[-1].score


def test_a_goal_that_does_not_exist_fails_only_its_episode(catalogue: Path, pool: EnvPool) -> None:
    missing = Task(game_id(catalogue, "human", 99_999), "webshop", "test")

    async def start():
        async with pool.episode(missing) as episode:
            return episode.outcome()

    outcome = asyncio.run(start())
    assert outcome.reason.startswith(f"engine_error: {missing.game_file}: ValueError: ")
    assert "goal 99999 does not exist (600 human goals)" in outcome.reason


def test_game_ids_and_tasks(catalogue: Path) -> None:
    game = game_id(catalogue, "synthetic", 7)
    assert game == f"webshop:synthetic:7:{catalogue.resolve()}" and parse_game_id(game) == (
        str(catalogue.resolve()), "synthetic", 7)
    task = Task(game, "webshop", "valid")
    assert (task.environment, task.subtask, task.name, task.has_game_file) == ("webshop", "webshop", "synthetic/7",
                                                                                False)
    with pytest.raises(ValueError, match="is not a WebShop game id"):
        Task("webshop:human:x:/tmp", "webshop", "test")
    with pytest.raises(UnknownNameError, match="unknown WebShop split 'valid_seen'"):
        Task(game, "webshop", "valid_seen")


def test_prepare_data_writes_every_split_and_the_lists_read_back(catalogue: Path, tmp_path: Path, capsys) -> None:
    """Synthetic goals by default, in the 1,000-product files' split (test 0-499, the rest train)."""
    goals = len(load_catalog(catalogue).goals)
    assert main(["prepare-data", "--env", "webshop", "--data-path", str(catalogue), "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "WebShop: synthetic goals of the 1,000-product files (train 500-, test 0-499)",
        f"train  {goals - 500:>6} synthetic goals  {tmp_path / 'train.parquet'}",
        f"test      500 synthetic goals  {tmp_path / 'test.parquet'}"]
    # these files have no valid split, whatever the goals: refused with one line before any list is written
    before = (tmp_path / "test.parquet").stat().st_mtime_ns
    assert main(["prepare-data", "--env", "webshop", "--data-path", str(catalogue), "--out", str(tmp_path / "human"),
                 "--goals", "human", "--splits", "test,valid"]) == 2
    assert capsys.readouterr().err == ("error: the human goals of the 1,000-product files (train 500-, test 0-499) "
                                       "have no valid split\n")
    assert (tmp_path / "test.parquet").stat().st_mtime_ns == before and not (tmp_path / "human").exists()
    test = read_task_list(tmp_path / "test.parquet")
    assert test == webshop_tasks(catalogue, "test")
    assert task_list_digest(test) == task_list_digest(webshop_tasks(catalogue, "test"))
    assert task_list_digest(test[:-1]) != task_list_digest(test)


def test_a_webshop_digest_names_the_catalogue_not_where_it_lies(catalogue: Path, tmp_path: Path) -> None:
    """The same goal index of another catalogue is another goal; the same catalogue elsewhere is the same."""
    moved = tmp_path / "moved"
    shutil.copytree(catalogue, moved)
    other = write_catalog(tmp_path / "other", num_products=300, seed=2)
    lists = [webshop_tasks(folder, "test", limit=5) for folder in (catalogue, moved, other)]
    digests = [task_list_digest(tasks) for tasks in lists]
    assert digests[0] == digests[1] != digests[2]
    attributes = moved / "items_ins_v2_1000.json"  # what synthetic goals are written from
    attributes.write_text(attributes.read_text(encoding="utf-8").replace("a", "b", 1), encoding="utf-8")
    assert task_list_digest(lists[1]) != digests[0]


def test_play_and_make_webshop_from_the_command_line(tmp_path: Path, capsys) -> None:
    assert main(["make-webshop", "--out", str(tmp_path), "--products", "40", "--seed", "2"]) == 0
    assert capsys.readouterr().out == (f"wrote 40 products to {tmp_path}: 76 synthetic goals (train 0, test 76); "
                                       "80 human goals (train 0, test 80)\n")
    assert main(["play", "--env", "webshop", "--policy", "gold", "--data-path", str(tmp_path), "--num-workers",
                 "1", "--per-task-type", "20", "--goals", "synthetic"]) == 0
    out = capsys.readouterr().out
    assert "webshop        20     20   100.0%" in out and "mean score: 100.0" in out
    assert main(["play", "--env", "webshop", "--policy", "gold", "--data-path", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err.startswith(f"error: {tmp_path / 'none'} holds none of items_shuffle_1000.json")
