"""Environment name -> where its parts live: the one table the pool's workers, the scripted policies, `strata play`
and the rollout read, so none of them branches on an environment's name.

Each part is named ``"module:attribute"`` and imported on first use: a pool worker imports only its own engine
(ScienceWorld's starts a JVM, ALFWorld's loads textworld), and the table itself imports nothing. An `Environment`
is a frozen record of strings, so the pool hands it to its worker processes as it is; an environment registered
at run time (`register`: a user's own, or a test's toy) plays in the pool like the built-in ones, as long as its
modules import in a worker. docs/adding-an-environment.md says what each part must do.
"""

from __future__ import annotations

import functools
import importlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from strata.envs.errors import UnknownNameError


@dataclass(frozen=True)
class Environment:
    """Where one environment's parts live.

    Args:
        name: the ``env.name`` that selects it.
        engine: a class whose instance holds one game at a time (``game_file``, ``unload()``); a pool worker
            keeps it across episodes.
        session: an `strata.envs.session.EpisodeSession` subclass, built as ``session(engine, max_steps,
            normalize_actions)`` for each episode.
        random_policy: ``random_policy(rng, instruction)`` -> a scripted policy playing at random (a floor).
        max_steps: the episode cap (an int) `strata play` uses when none is given (the recipes set
            ``env.max_steps``).
        task_rules: a module with the environment's ``TASK_TYPES``, ``SUBTASKS`` (what its tables list), ``SPLITS``,
            ``HAS_GAME_FILE`` (whether a task's
            ``game_file`` is a file on disk, or a game id) and what a `strata.envs.tasks.Task` of it asks:
            ``check_task(task)`` (raise on a bad one), ``task_name(task)``, ``task_subtask(task)``.
        task_row: ``task_row(task)`` -> (the task list's description of the task, extra ``extra_info`` fields).
        game_fingerprint: ``game_fingerprint(task, memo)`` -> what the game is, not where it lies (a task list's
            digest hashes it); ``memo`` is a dict for what one digest may reuse between tasks.
        about: an `About` (what a model card says of the environment); optional.
        prepare: ``prepare(args) -> exit status``: ``strata prepare-data --env NAME`` (writes the task lists, prints
            what it wrote); optional.
        play_source: ``play_source(args, task_types) -> tasks``: the games ``strata play --env NAME`` plays when no
            ``--task-list`` is given; optional.
        host_check: ``host_check(environ) -> [(level, line)]``, level ``ok``, ``warning`` or ``error``: what the
            environment needs on a machine beyond Python packages (`strata doctor`, the trainer's start); optional.
        task_set: ``task_set(tasks) -> str``: which tasks a task list holds, in words, where the split alone does not
            say what a number was measured on (WebShop: goal kind, catalogue, goal indices); `strata eval-result`
            records it; optional.
    """

    name: str
    engine: str
    session: str
    random_policy: str
    max_steps: str
    task_rules: str
    task_row: str
    game_fingerprint: str
    about: str = ""
    prepare: str = ""
    play_source: str = ""
    host_check: str = ""
    task_set: str = ""

    def part(self, field: str) -> Any:
        """The object one of the ``"module:attribute"`` fields names (the attribute may be dotted; a field without
        one names the module), imported now. `UnknownNameError` for an optional part the environment lacks."""
        if not getattr(self, field):
            raise UnknownNameError(f"environment {self.name!r} has no {field} part (docs/adding-an-environment.md)")
        module, _, attribute = getattr(self, field).partition(":")
        found = importlib.import_module(module)
        return functools.reduce(getattr, attribute.split("."), found) if attribute else found

    def new_random_policy(self, rng: random.Random, instruction: str) -> Any:
        return self.part("random_policy")(rng, instruction)


@dataclass(frozen=True)
class About:
    """What a model card says of an environment."""

    title: str  # "ALFWorld"
    description: str  # "ALFWorld text games"
    tag: str  # the card's front-matter tag
    comparable: str  # what a result must share to be compared with another, besides split and protocol


_ENVIRONMENTS: dict[str, Environment] = {}


def register(environment: Environment) -> Environment:
    """Add ``environment`` to the table (a name already taken is replaced: the last registration wins)."""
    _ENVIRONMENTS[environment.name] = environment
    _by_task_type.cache_clear()
    return environment


def environment(name: str) -> Environment:
    """The environment registered as ``name``; `UnknownNameError` naming the known ones otherwise."""
    try:
        return _ENVIRONMENTS[name]
    except KeyError:
        raise UnknownNameError(f"unknown environment {name!r}; known: {', '.join(_ENVIRONMENTS)}") from None


def environment_names() -> tuple[str, ...]:
    return tuple(_ENVIRONMENTS)


def all_splits() -> tuple[str, ...]:
    """Every split a command may name: each environment's, in registration order, once each."""
    return tuple(dict.fromkeys(split for entry in _ENVIRONMENTS.values() for split in entry.part("task_rules").SPLITS))


def environment_subtasks() -> dict[str, tuple[str, ...]]:
    """Each environment's subtasks, in the order its tables list them."""
    return {name: entry.part("task_rules").SUBTASKS for name, entry in _ENVIRONMENTS.items()}


@functools.cache
def _by_task_type() -> dict[str, Environment]:
    return {task_type: entry for entry in _ENVIRONMENTS.values() for task_type in entry.part("task_rules").TASK_TYPES}


def described_task_set(tasks: Sequence[Any]) -> str | None:
    """What the environment of ``tasks`` (`strata.envs.tasks.Task` records) says they are (its ``task_set`` part),
    None where it says nothing beyond the split."""
    entry = environment_of_task_type(tasks[0].task_type) if tasks else None
    return entry.part("task_set")(tasks) if entry and entry.task_set else None


def environment_of_task_type(task_type: str) -> Environment:
    """The environment whose task types include ``task_type``; ALFWorld's for a name no environment has, so that
    its check says which task types exist."""
    return _by_task_type().get(task_type) or _ENVIRONMENTS["alfworld"]


register(Environment(
    "alfworld", engine="strata.envs.alfworld.engine:AlfworldEngine",
    session="strata.envs.alfworld.engine:GameSession",
    random_policy="strata.envs.alfworld.policies:RandomPolicy.for_episode",
    max_steps="strata.envs.session:DEFAULT_MAX_STEPS", task_rules="strata.envs.alfworld.tasks",
    task_row="strata.envs.alfworld.discovery:task_row",
    game_fingerprint="strata.envs.alfworld.discovery:game_fingerprint", about="strata.envs.alfworld.tasks:ABOUT",
    prepare="strata.envs.alfworld.prepare:prepare_command", play_source="strata.envs.alfworld.prepare:play_source"))
register(Environment(
    "sciworld", engine="strata.envs.sciworld.engine:SciWorldEngine",
    session="strata.envs.sciworld.engine:SciWorldSession",
    random_policy="strata.envs.sciworld.policies:RandomPolicy.for_episode",
    max_steps="strata.envs.session:DEFAULT_MAX_STEPS", task_rules="strata.envs.sciworld.tasks",
    task_row="strata.envs.sciworld.tasks:task_row", game_fingerprint="strata.envs.sciworld.tasks:game_fingerprint",
    about="strata.envs.sciworld.tasks:ABOUT", prepare="strata.envs.sciworld.prepare:prepare_command",
    play_source="strata.envs.sciworld.prepare:play_source", host_check="strata.envs.sciworld.engine:host_check"))
register(Environment(
    "webshop", engine="strata.envs.webshop.engine:WebShopEngine", session="strata.envs.webshop.engine:WebShopSession",
    random_policy="strata.envs.webshop.policies:RandomPolicy.for_episode",
    max_steps="strata.envs.webshop.tasks:DEFAULT_MAX_STEPS", task_rules="strata.envs.webshop.tasks",
    task_row="strata.envs.webshop.tasks:task_row", game_fingerprint="strata.envs.webshop.catalog:game_fingerprint",
    about="strata.envs.webshop.tasks:ABOUT", prepare="strata.envs.webshop.prepare:prepare_command",
    play_source="strata.envs.webshop.prepare:play_source", host_check="strata.envs.webshop.nouns:host_check",
    task_set="strata.envs.webshop.catalog:task_set"))
