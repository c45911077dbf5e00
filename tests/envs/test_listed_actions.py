"""Every action an environment lists stays valid after the session's normalisation: sent as listed, or as a
formatted copy of it (upper case, a list bullet, a final period), the environment accepts it. Checked on the real
engines: ALFWorld's bundled games, a generated WebShop catalogue and one in WebShop's real option format
("Navy / White" is listed as ``click[navy  |  white]``), ScienceWorld's object names (issue #40)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from strata.envs.actions import normalize_command
from strata.envs.alfworld.discovery import load_split
from strata.envs.alfworld.engine import GameSession
from strata.envs.webshop.catalog import PRODUCT_FILES
from strata.envs.webshop.engine import WebShopEngine, WebShopSession
from strata.envs.webshop.generate import write_catalog
from strata.envs.webshop.tasks import game_id


def formatted(action: str) -> list[str]:
    """What a model may write for ``action``: as listed, upper-cased, with a bullet and a final period."""
    return [action, action.upper(), f"- {action}.", f'"{action}"']


def assert_listed_actions_survive(session, listed: tuple[str, ...]) -> None:
    for action in listed:
        for written in formatted(action):
            assert session.command_for(written) == action, (written, action)


def test_alfworld_lists_only_commands_its_normalisation_keeps(bundled_root: Path, engine) -> None:
    rng = random.Random(0)
    session = GameSession(engine, max_steps=8)
    for task in load_split(bundled_root, "valid_seen")[:6]:
        start = session.start(task.game_file)
        listed = start.admissible_commands
        while True:
            assert_listed_actions_survive(session, listed)
            result = session.step(rng.choice(listed))
            assert result.admissible
            if result.done:
                break
            listed = result.admissible_commands


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated catalogue whose first product has options in WebShop's real format ("Navy / White")."""
    folder = write_catalog(tmp_path_factory.mktemp("shop"), num_products=60, seed=3)
    products_file = folder / PRODUCT_FILES[0]
    products = json.loads(products_file.read_text())
    products[0]["customization_options"] = {"Color": [{"value": "Navy / White", "image": None},
                                                      {"value": "Red", "image": None}]}
    products_file.write_text(json.dumps(products), encoding="utf-8")
    return folder


def test_webshop_options_with_wide_separators_stay_clickable(shop: Path) -> None:
    session = WebShopSession(WebShopEngine(), max_steps=10)
    session.start(game_id(shop, "human", 0))
    title = json.loads((shop / PRODUCT_FILES[0]).read_text())[0]["name"]
    results = session.step(f"search[{title}]")
    assert "click[b000000000]" in results.admissible_commands
    item = session.step("Click[B000000000]")
    assert "click[navy  |  white]" in item.admissible_commands  # WebShop's own rendering: two spaces each side
    assert_listed_actions_survive(session, item.admissible_commands)
    chosen = session.step("click[Navy | White]")  # as a model writes it: one space each side
    assert chosen.command == "click[navy  |  white]" and chosen.admissible


def test_webshop_random_play_lists_only_actions_its_normalisation_keeps(shop: Path) -> None:
    rng = random.Random(1)
    session = WebShopSession(WebShopEngine(), max_steps=12)
    for index in range(8):
        listed = session.start(game_id(shop, "human", index)).admissible_commands
        while True:
            clickable = tuple(action for action in listed if action.startswith("click["))
            assert_listed_actions_survive(session, clickable)
            action = rng.choice(clickable) if clickable and rng.random() < 0.8 else "search[cotton shorts]"
            result = session.step(action)
            assert result.admissible, action
            if result.done:
                break
            listed = result.admissible_commands


def test_sciworld_object_names_survive_normalisation() -> None:
    """ScienceWorld lists object names for its templates; a command built from one keeps the name as listed, in
    every room the gold plans of three task types walk through (the JVM dies with this process)."""
    from strata.envs.sciworld.engine import SciWorldEngine, SciWorldSession
    from strata.envs.sciworld.tasks import game_id as sciworld_game

    session = SciWorldSession(SciWorldEngine(), max_steps=60)
    names = set()
    for task_type in ("boil", "find-animal", "chemistry-mix"):
        start = session.start(sciworld_game(task_type, 0), with_walkthrough=True)
        names |= set(start.admissible_commands)
        for action in start.walkthrough:
            result = session.step(action)
            names |= set(result.admissible_commands)
            if result.done:
                break
    names = {name for name in names if not name.startswith("... (")}
    assert len(names) > 50
    assert [name for name in names if normalize_command(f"focus on {name}") != f"focus on {name}"] == []
