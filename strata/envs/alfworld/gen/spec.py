"""What a generated game is made of (`GameSpec`), and how one is drawn at random from a seed.

A spec is an ALFRED room (receptacles from a real floor plan), objects placed in receptacles that can
hold them, and a goal of one of the six task types whose objects, appliances and target receptacle all
exist in that room. ALFRED's own rules choose the rooms: each task type is posed only in the room kinds
`alfworld.gen.constants.GOALS_VALID` allows (heating happens in kitchens, looking under a lamp in living
rooms and bedrooms, ...). The goal never holds at the start: the target objects begin outside the
target receptacle class.

Rooms are sub-sampled. A whole ALFRED floor plan (up to ~25 receptacles and ~60 objects) takes the
engine 2-15 s to load and 0.2-0.5 s per step on one core, because fast-downward grounds every
object x receptacle x location combination; ``max_receptacles`` / ``max_object_classes`` keep what the
task needs plus random distractors; at the defaults (8 receptacles, 5 object classes) a game loads in
~0.5 s and steps in ~60 ms.
Pass ``None`` to keep the whole floor plan.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from strata.envs.alfworld.gen.catalog import (
    LAMP_CLASSES,
    Receptacle,
    Room,
    class_tables,
    load_room,
    room_kind,
    scene_numbers,
)
from strata.envs.alfworld.tasks import subtask_of

# The appliance each state-change task needs; it is never also the target receptacle.
APPLIANCE = {
    "pick_clean_then_place_in_recep": "SinkBasin",
    "pick_heat_then_place_in_recep": "Microwave",
    "pick_cool_then_place_in_recep": "Fridge",
}
# Where lamps stand (they are not carried, so no receptacle "accepts" them in alfworld's tables).
LAMP_HOSTS = frozenset({"Desk", "SideTable", "Dresser", "Shelf", "CoffeeTable", "DiningTable", "TVStand"})
MAX_ATTEMPTS = 200


@dataclass(frozen=True)
class PlacedObject:
    """An object instance: ALFRED id (``"Mug|+00.10|+00.90|-01.00"``), class, id of its receptacle."""

    alfred_id: str
    cls: str
    receptacle_id: str


@dataclass(frozen=True)
class GameSpec:
    """Everything needed to write one game.

    Args:
        task_type: ALFWorld task type.
        object_target: class of the object to move (``"Mug"``).
        parent_target: class of the target receptacle (``"CoffeeMachine"``); ``""`` for look tasks.
        toggle_target: the lamp class for look tasks (``"DeskLamp"``), else ``""``.
        floor_plan: the ALFRED scene number the room comes from.
        receptacles: receptacle instances of the room.
        objects: object instances and where they start.
        start_location: the agent's starting location name.
        task_description: the goal sentence shown to the agent.
    """

    task_type: str
    object_target: str
    parent_target: str
    toggle_target: str
    floor_plan: int
    receptacles: tuple[Receptacle, ...]
    objects: tuple[PlacedObject, ...]
    start_location: str
    task_description: str

    def __post_init__(self) -> None:
        subtask_of(self.task_type)
        receptacle_ids = {r.alfred_id for r in self.receptacles}
        for obj in self.objects:
            if obj.receptacle_id not in receptacle_ids:
                raise ValueError(f"{obj.alfred_id} starts in {obj.receptacle_id}, which this spec's room lacks")

    @property
    def room_kind(self) -> str:
        return room_kind(self.floor_plan)


@dataclass(frozen=True)
class _Goal:
    obj: str
    parent: str
    toggle: str
    appliance: str


def _holders(room_classes: set[str], obj: str) -> set[str]:
    if obj in LAMP_CLASSES:
        return room_classes & LAMP_HOSTS
    return {r for r in room_classes if obj in class_tables().can_contain[r]}


def _choose_goal(task_type: str, room: Room, rng: random.Random) -> _Goal | None:
    """A goal for ``task_type`` that this room supports, or None."""
    tables = class_tables()
    present = room.receptacle_classes()
    carried = sorted(c for c in room.object_classes if c in tables.pickupable and _holders(present, c))
    if task_type == "look_at_obj_in_light":
        lamps = sorted(c for c in room.object_classes if c in LAMP_CLASSES & tables.toggleable)
        if not lamps or not carried or not present & LAMP_HOSTS:
            return None
        return _Goal(rng.choice(carried), "", rng.choice(lamps), "")
    appliance = APPLIANCE.get(task_type, "")
    if appliance:
        if appliance not in present:
            return None
        needs = {"SinkBasin": tables.cleanable, "Microwave": tables.heatable, "Fridge": tables.coolable}
        carried = [c for c in carried if c in needs[appliance]]
    rng.shuffle(carried)
    for obj in carried:
        holders = _holders(present, obj)
        parents = sorted(holders - {appliance})
        for parent in rng.sample(parents, len(parents)):
            if holders - {parent}:  # somewhere else to start from
                return _Goal(obj, parent, "", appliance)
    return None


def _choose_receptacles(room: Room, goal: _Goal, rng: random.Random, limit: int | None) -> tuple[Receptacle, ...]:
    """The goal's receptacles (target, appliance, a start place for each needed object) plus random others."""
    by_class: dict[str, list[Receptacle]] = {}
    for r in room.receptacles:
        by_class.setdefault(r.cls, []).append(r)
    present = set(by_class)
    needed_classes = [goal.parent, goal.appliance]
    needed_classes.append(rng.choice(sorted(_holders(present, goal.obj) - {goal.parent})))
    if goal.toggle:
        needed_classes.append(rng.choice(sorted(_holders(present, goal.toggle))))
    chosen = {rng.choice(by_class[c]).alfred_id for c in needed_classes if c}
    others = [r.alfred_id for r in room.receptacles if r.alfred_id not in chosen]
    rng.shuffle(others)
    room_left = len(others) if limit is None else max(0, limit - len(chosen))
    chosen.update(others[:room_left])
    return tuple(r for r in room.receptacles if r.alfred_id in chosen)


def _object_id(cls: str, rng: random.Random, taken: set[str]) -> str:
    while True:
        coords = "|".join(f"{rng.uniform(-4.0, 4.0):+06.2f}" for _ in range(3))
        alfred_id = f"{cls}|{coords}"
        if alfred_id not in taken:
            taken.add(alfred_id)
            return alfred_id


def _place_objects(
    task_type: str,
    room: Room,
    goal: _Goal,
    receptacles: tuple[Receptacle, ...],
    rng: random.Random,
    max_object_classes: int | None,
    max_instances: int,
) -> tuple[PlacedObject, ...]:
    present = {r.cls for r in receptacles}
    required = [c for c in (goal.obj, goal.toggle) if c]
    distractors = [c for c in room.object_classes if c not in required and c not in LAMP_CLASSES]
    distractors = [c for c in distractors if _holders(present, c)]
    rng.shuffle(distractors)
    if max_object_classes is not None:
        distractors = distractors[: max(0, max_object_classes - len(required))]
    placed: list[PlacedObject] = []
    taken: set[str] = set()
    for cls in sorted(required + distractors):
        hosts = [r for r in receptacles if r.cls in _holders(present, cls)]
        if cls == goal.obj:
            hosts = [r for r in hosts if r.cls != goal.parent]
        count = 1 if cls in LAMP_CLASSES else rng.randint(1, max_instances)
        if cls == goal.obj and task_type == "pick_two_obj_and_place":
            count = max(2, count)
        placed += [PlacedObject(_object_id(cls, rng, taken), cls, rng.choice(hosts).alfred_id) for _ in range(count)]
    return tuple(placed)


def describe_goal(task_type: str, obj: str, parent: str, toggle: str, rng: random.Random) -> str:
    """The goal sentence, from alfworld's goal-library templates (as ``alfworld.agents.utils.misc`` does)."""
    import alfworld.gen.goal_library as goal_library

    template = rng.choice(goal_library.gdict[task_type]["templates"])
    return template.format(obj=obj.lower(), recep=parent.lower(), toggle=toggle.lower(), mrecep="")


def sample_spec(
    task_type: str,
    rng: random.Random,
    split: str = "train",
    max_receptacles: int | None = 8,
    max_object_classes: int | None = 5,
    max_instances: int = 2,
    floor_plan: int | None = None,
) -> GameSpec:
    """Draw a game of ``task_type`` in a random ALFRED room allowed for it (see the module docstring).

    Deterministic for a given ``rng`` state. ``split`` picks the scene pool (``valid_unseen`` uses
    ALFRED's held-out floor plans); the ``max_*`` arguments bound the room's size. ``floor_plan`` pins
    the room (e.g. the largest kitchen, to measure the longest episodes); it must allow ``task_type``.
    """
    subtask_of(task_type)
    if max_instances < 1:
        raise ValueError(f"max_instances must be >= 1, got {max_instances}")
    kinds = class_tables().goals_valid[task_type]
    floor_plans = [fp for fp in scene_numbers(split) if room_kind(fp) in kinds]
    if floor_plan is not None:
        if floor_plan not in floor_plans:
            raise ValueError(f"floor plan {floor_plan} is not a {split} room where {task_type} is posed")
        floor_plans = [floor_plan]
    for _ in range(MAX_ATTEMPTS):
        room = load_room(rng.choice(floor_plans))
        goal = _choose_goal(task_type, room, rng)
        if goal is None:
            continue
        receptacles = _choose_receptacles(room, goal, rng, max_receptacles)
        objects = _place_objects(task_type, room, goal, receptacles, rng, max_object_classes, max_instances)
        return GameSpec(
            task_type=task_type,
            object_target=goal.obj,
            parent_target=goal.parent,
            toggle_target=goal.toggle,
            floor_plan=room.floor_plan,
            receptacles=receptacles,
            objects=objects,
            start_location="loc_bar_0_bar_0_bar_0_bar_30",
            task_description=describe_goal(task_type, goal.obj, goal.parent, goal.toggle, rng),
        )
    raise RuntimeError(f"no ALFRED room supports a {task_type} game after {MAX_ATTEMPTS} draws")
