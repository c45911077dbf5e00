"""Render a `GameSpec` as the PDDL problem ALFWorld's engine reads (the ``pddl_problem`` of a game file).

Names follow ALFWorld's own problems: ALFRED ids mangled the way ``augment_pddl_states.py`` did
("Mug|+00.10|..." -> "Mug_bar__plus_00_dot_10..."), which `AlfredDemangler` turns back into "mug 1".
The goal comes verbatim from alfworld's goal library.
"""

from __future__ import annotations

from strata.envs.alfworld.gen.catalog import class_tables
from strata.envs.alfworld.gen.spec import GameSpec

# Types the domain names as constants in its preconditions (CleanObject needs SinkBasinType, ...):
# they must be declared even when the room has none.
ALWAYS_RTYPES = frozenset({"SinkBasin", "Microwave", "Fridge"})
ALWAYS_OTYPES = frozenset({"Knife", "ButterKnife"})
_MANGLE = (("-", "_minus_"), ("|", "_bar_"), ("+", "_plus_"), (".", "_dot_"), (",", "_comma_"))


def mangle(alfred_id: str) -> str:
    """ALFRED id -> PDDL identifier, as in ALFWorld's data."""
    for old, new in _MANGLE:
        alfred_id = alfred_id.replace(old, new)
    return alfred_id


def goal_pddl(spec: GameSpec) -> str:
    import alfworld.gen.goal_library as goal_library

    template = goal_library.gdict[spec.task_type]["pddl"]
    text = template.format(obj=spec.object_target, recep=spec.parent_target, toggle=spec.toggle_target, mrecep="")
    return text.replace("#", "-")


def problem_pddl(spec: GameSpec, problem_name: str) -> str:
    """The full ``(define (problem ...))`` text for ``spec``."""
    tables = class_tables()
    receptacles = {r.alfred_id: r for r in spec.receptacles}
    rtypes = sorted({r.cls for r in spec.receptacles} | ALWAYS_RTYPES)
    otypes = sorted({o.cls for o in spec.objects} | ALWAYS_OTYPES)
    locations = sorted({spec.start_location} | {r.location for r in spec.receptacles})

    declared = ["    agent1 - agent"]
    declared += [f"    {t}Type - otype" for t in otypes]
    declared += [f"    {t}Type - rtype" for t in rtypes]
    declared += [f"    {mangle(o.alfred_id)} - object" for o in spec.objects]
    declared += [f"    {mangle(r.alfred_id)} - receptacle" for r in spec.receptacles]
    declared += [f"    {loc} - location" for loc in locations]

    facts = [f"    (atLocation agent1 {spec.start_location})"]
    for r in spec.receptacles:
        rid = mangle(r.alfred_id)
        facts.append(f"    (receptacleType {rid} {r.cls}Type)")
        facts.append(f"    (receptacleAtLocation {rid} {r.location})")
        if r.cls in tables.openable:
            facts.append(f"    (openable {rid})")
    properties = (
        ("cleanable", tables.cleanable),
        ("heatable", tables.heatable),
        ("coolable", tables.coolable),
        ("toggleable", tables.toggleable),
        ("sliceable", tables.sliceable),
        ("isReceptacleObject", tables.movable_receptacles),
    )
    for o in spec.objects:
        oid, host = mangle(o.alfred_id), receptacles[o.receptacle_id]
        facts.append(f"    (objectType {oid} {o.cls}Type)")
        facts.append(f"    (inReceptacle {oid} {mangle(host.alfred_id)})")
        facts.append(f"    (objectAtLocation {oid} {host.location})")
        if o.cls in tables.pickupable:
            facts.append(f"    (pickupable {oid})")
        facts += [f"    ({name} {oid})" for name, classes in properties if o.cls in classes]
    for rt in rtypes:
        facts += [f"    (canContain {rt}Type {ot}Type)" for ot in otypes if ot in tables.can_contain.get(rt, ())]

    lines = [f"(define (problem {problem_name})", "(:domain alfred)", "(:objects", *declared, ")"]
    lines += ["(:init", *facts, ")"]
    return "\n".join(lines) + "\n" + goal_pddl(spec).strip() + "\n"
