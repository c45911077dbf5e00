"""Rooms for generated games, read from the ALFRED scene layouts shipped inside the alfworld package.

ALFRED has 120 floor plans: kitchens 1-30, living rooms 201-230, bedrooms 301-330, bathrooms 401-430.
For each, ``alfworld/gen/layouts/FloorPlan<N>-openable.json`` lists the receptacle instances with their
ALFRED ids and interaction poses, and ``FloorPlan<N>-objects.json`` the object classes present. Together
with alfworld's class tables (`alfworld.gen.constants`: what fits where, what can be cleaned, heated,
cooled, toggled, opened) that is enough to rebuild a room like the ones in ALFWorld's own games.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOM_KINDS: tuple[str, ...] = ("Kitchen", "LivingRoom", "Bedroom", "Bathroom")
LAMP_CLASSES: frozenset[str] = frozenset({"DeskLamp", "FloorLamp"})


@dataclass(frozen=True)
class Receptacle:
    """A receptacle instance: its ALFRED id (``"Cabinet|+00.68|+00.50|-02.20"``), class and location name."""

    alfred_id: str
    cls: str
    location: str


@dataclass(frozen=True)
class Room:
    """One ALFRED floor plan: its receptacles and the object classes found there."""

    floor_plan: int
    kind: str
    receptacles: tuple[Receptacle, ...]
    object_classes: tuple[str, ...]

    def receptacle_classes(self) -> set[str]:
        return {r.cls for r in self.receptacles}


@dataclass(frozen=True)
class ClassTables:
    """alfworld's class tables, loaded once (`alfworld.gen.constants`)."""

    can_contain: dict[str, frozenset[str]]  # receptacle class -> object classes it accepts
    openable: frozenset[str]
    movable_receptacles: frozenset[str]  # objects that are also receptacles (Mug, Bowl, ...)
    cleanable: frozenset[str]
    heatable: frozenset[str]
    coolable: frozenset[str]
    toggleable: frozenset[str]
    sliceable: frozenset[str]
    goals_valid: dict[str, frozenset[str]]  # task type -> room kinds where ALFRED poses it
    train_scenes: tuple[int, ...]
    test_scenes: tuple[int, ...]
    scene_kinds: dict[str, range]

    @property
    def static_receptacles(self) -> frozenset[str]:
        return frozenset(self.can_contain) - self.movable_receptacles

    @property
    def pickupable(self) -> frozenset[str]:
        """Object classes some static receptacle accepts, i.e. the ones an agent can carry."""
        accepted = set().union(*(self.can_contain[r] for r in self.static_receptacles))
        return frozenset(accepted - self.static_receptacles)


@cache
def class_tables() -> ClassTables:
    import alfworld.gen.constants as constants

    actions = constants.VAL_ACTION_OBJECTS
    return ClassTables(
        can_contain={r: frozenset(objs) for r, objs in constants.VAL_RECEPTACLE_OBJECTS.items()},
        openable=frozenset(constants.OPENABLE_CLASS_SET),
        movable_receptacles=frozenset(constants.MOVABLE_RECEPTACLES_SET),
        cleanable=frozenset(actions["Cleanable"]),
        heatable=frozenset(actions["Heatable"]),
        coolable=frozenset(actions["Coolable"]),
        toggleable=frozenset(actions["Toggleable"]),
        sliceable=frozenset(actions["Sliceable"]),
        goals_valid={goal: frozenset(kinds) for goal, kinds in constants.GOALS_VALID.items()},
        train_scenes=tuple(constants.TRAIN_SCENE_NUMBERS),
        test_scenes=tuple(constants.TEST_SCENE_NUMBERS),
        scene_kinds=dict(constants.SCENE_TYPE),
    )


def layouts_dir() -> Path:
    import alfworld.gen

    return Path(alfworld.gen.__file__).parent / "layouts"


def room_kind(floor_plan: int) -> str:
    for kind, numbers in class_tables().scene_kinds.items():
        if floor_plan in numbers:
            return kind
    raise ValueError(f"floor plan {floor_plan} is not an ALFRED scene (1-30, 201-230, 301-330, 401-430)")


def location_name(x: float, z: float, rotation: float, horizon: float) -> str:
    """ALFWorld's location naming: a 0.25 m grid cell, a quarter turn and the camera horizon, mangled."""
    parts = [round(x / 0.25), round(z / 0.25), round(rotation / 90) % 4, round(horizon)]
    return "loc_bar_" + "_bar_".join(str(p).replace("-", "_minus_") for p in parts)


@cache
def load_room(floor_plan: int) -> Room:
    """The receptacles and object classes of one ALFRED floor plan.

    Receptacles of a class the scene has but the openable layout does not list (coffee machines, stove
    burners, toilets...) get one instance each, with a location of their own.
    """
    tables = class_tables()
    folder = layouts_dir()
    poses = json.loads((folder / f"FloorPlan{floor_plan}-openable.json").read_text())
    classes = json.loads((folder / f"FloorPlan{floor_plan}-objects.json").read_text())
    receptacles = []
    for alfred_id, (x, z, rotation, horizon) in sorted(poses.items()):
        parts = alfred_id.split("|")
        cls = parts[4] if len(parts) > 4 else parts[0]  # "Sink|x|y|z|SinkBasin" is a SinkBasin
        if cls in tables.static_receptacles:
            receptacles.append(Receptacle(alfred_id, cls, location_name(x, z, rotation, horizon)))
    listed = {r.cls for r in receptacles}
    for i, cls in enumerate(sorted(set(classes) & tables.static_receptacles - listed)):
        coords = f"+0{i % 10}.50|+00.90|-0{i // 10}.25"
        # Basins keep ALFRED's two-part id ("Sink|...|SinkBasin"), which the demangler reads as "sinkbasin".
        alfred_id = f"{cls.removesuffix('Basin')}|{coords}|{cls}" if cls.endswith("Basin") else f"{cls}|{coords}"
        receptacles.append(Receptacle(alfred_id, cls, location_name(10 + i, -10, 0, 30)))
    objects = sorted(c for c in set(classes) if c in tables.pickupable or c in LAMP_CLASSES)
    return Room(floor_plan, room_kind(floor_plan), tuple(receptacles), tuple(objects))


def scene_numbers(split: str) -> tuple[int, ...]:
    """ALFRED's scenes for a split: unseen evaluation uses the held-out floor plans, as in ALFWorld."""
    tables = class_tables()
    return tables.test_scenes if split == "valid_unseen" else tables.train_scenes
