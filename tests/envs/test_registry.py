"""An environment registered at run time plays like the built-in ones: tasks, task lists, the pool's worker
processes, scripted policies and the success table, with no change anywhere else (issue #38). The toy lives in its
own module on the path, as a user's environment would (the pool's spawned workers import it by name)."""

from __future__ import annotations

import asyncio
import importlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from strata.envs import registry
from strata.envs.errors import UnknownNameError
from strata.envs.metrics import success_table
from strata.envs.play import play_tasks
from strata.envs.pool import EnvPool
from strata.envs.task_list import read_task_list, task_list_digest, write_task_list
from strata.envs.tasks import Task

TOY = Path(__file__).with_name("toy_environment.py")
COUNTING = registry.Environment(
    "counting", engine="counting_game:CountingEngine", session="counting_game:CountingSession",
    random_policy="strata.envs.alfworld.policies:RandomPolicy.for_episode", max_steps="counting_game:MAX_STEPS",
    task_rules="counting_game", task_row="counting_game:task_row", game_fingerprint="counting_game:game_fingerprint")


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The counting game as module ``counting_game`` on the path, registered as ``counting``."""
    shutil.copy(TOY, tmp_path / "counting_game.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.register(COUNTING)
    yield importlib.import_module("counting_game")
    registry._ENVIRONMENTS.pop("counting")
    registry._by_task_type.cache_clear()


def test_a_registered_environment_plays_through_the_pool(toy: ModuleType, tmp_path: Path) -> None:
    tasks = [Task(toy.game_id(target), "count-up", "test", index) for index, target in enumerate((2, 3, 4))]
    assert [(t.environment, t.name, t.subtask, t.has_game_file) for t in tasks[:1]] == [
        ("counting", "to-2", "count-up", False)]
    path = write_task_list(tasks, tmp_path / "test.parquet")
    assert read_task_list(path) == tasks and task_list_digest(tasks) != task_list_digest(tasks[:2])
    with EnvPool(num_workers=1, max_steps=6, engine="counting") as pool:
        plans = asyncio.run(play_tasks(pool, tasks, "walkthrough"))
        random = asyncio.run(play_tasks(pool, tasks, "random", seed=1))
    assert [o.won for o in plans] == [True] * 3 and [o.num_steps for o in plans] == [2, 3, 4]
    assert success_table(plans).overall.success_rate == 1.0
    assert all(o.num_steps <= 6 for o in random)  # the cap holds; a random walk wins some


def test_an_unknown_environment_is_named_with_the_known_ones() -> None:
    with pytest.raises(UnknownNameError, match="unknown environment 'nope'; known: alfworld, sciworld, webshop"):
        registry.environment("nope")
    assert registry.environment_of_task_type("count-up").name == "alfworld"  # unregistered: ALFWorld's check speaks
    with pytest.raises(UnknownNameError, match="unknown ALFWorld task type 'count-up'"):
        Task("count:2", "count-up", "test")


def test_the_tools_the_doctor_and_the_card_ask_the_registry(toy: ModuleType, tmp_path: Path, capsys) -> None:
    """`strata play` and `strata prepare-data`, the doctor's environment check and the model card name no
    environment: a registered one is played, and what it lacks is said in one line."""
    from omegaconf import OmegaConf

    from strata.cli import main
    from strata.report.model_card import environment_of
    from strata.trainer.checks.base import Level
    from strata.trainer.checks.inputs import environment as environment_check

    tasks = write_task_list([Task(toy.game_id(n), "count-up", "test", n) for n in (2, 3)], tmp_path / "t.parquet")
    assert main(["play", "--env", "counting", "--policy", "walkthrough", "--task-list", str(tasks),
                 "--num-workers", "1"]) == 0
    assert "end reasons: won 2" in capsys.readouterr().out
    assert main(["prepare-data", "--env", "counting", "--out", str(tmp_path / "lists")]) == 2
    assert capsys.readouterr().err == ("error: environment 'counting' has no prepare part "
                                       "(docs/adding-an-environment.md)\n")
    assert list(environment_check(OmegaConf.create({"env": {"name": "counting"}}))) == [
        (Level.OK, "counting")]
    assert environment_of({"env.name": "counting"}) == registry.About("counting", "counting", "counting",
                                                                      "counting version")
    for name in ("alfworld", "sciworld", "webshop"):  # every built-in part imports (no JVM or engine starts)
        built_in = registry.environment(name)
        assert [built_in.part(field) for field in ("about", "prepare", "play_source")]
        assert environment_of({"env.name": name}) == built_in.part("about")
