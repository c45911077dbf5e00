"""The offline generator: valid games in many rooms, deterministic, verified, both grammar versions."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from strata.envs.alfworld.discovery import load_split
from strata.envs.alfworld.gen.catalog import load_room, room_kind
from strata.envs.alfworld.gen.generate import generate_split
from strata.envs.alfworld.gen.grammar import game_logic
from strata.envs.alfworld.gen.spec import sample_spec
from strata.envs.alfworld.gen.writer import write_game
from strata.envs.alfworld.tasks import SUBTASKS
from strata.envs.errors import UnknownNameError, UnwinnableGameError


def test_bundled_set_spans_rooms_objects_and_receptacles(bundled_root: Path) -> None:
    trajs = [json.loads(p.read_text()) for p in (bundled_root / "json_2.1.1").glob("*/*/*/traj_data.json")]
    kinds = Counter(room_kind(t["scene"]["scene_num"]) for t in trajs)
    assert set(kinds) == {"Kitchen", "LivingRoom", "Bedroom", "Bathroom"}
    assert len({t["scene"]["scene_num"] for t in trajs}) >= 20
    assert len({t["pddl_params"]["object_target"] for t in trajs}) >= 15
    assert len({t["pddl_params"]["parent_target"] for t in trajs}) >= 8
    unseen = {t["scene"]["scene_num"] for t in trajs if t["strata_generator"]["split"] == "valid_unseen"}
    seen = {t["scene"]["scene_num"] for t in trajs if t["strata_generator"]["split"] != "valid_unseen"}
    assert unseen and not unseen & seen  # unseen games use ALFRED's held-out floor plans


def test_every_game_stores_its_verified_walkthrough(bundled_root: Path) -> None:
    for task in load_split(bundled_root, "train"):
        game = json.loads(Path(task.game_file).read_text())
        assert game["solvable"] is True and game["walkthrough"]
        assert game["pddl_domain"] == game_logic("2.1.2").pddl_domain
        traj = json.loads((Path(task.game_file).parent / "traj_data.json").read_text())
        assert traj["task_type"] == task.task_type


def test_deterministic_from_seed_with_any_number_of_workers(tmp_path: Path, engine) -> None:
    first = generate_split(tmp_path / "a", "train", 3, seed=3, task_types=["pick2"], engine=engine)
    second = generate_split(tmp_path / "b", "train", 3, seed=3, task_types=["pick2"], workers=2)
    other = generate_split(tmp_path / "c", "train", 1, seed=4, task_types=["pick2"], engine=engine)
    read = lambda games, root: [Path(g.game_file).relative_to(root).as_posix() for g in games]  # noqa: E731
    assert read(first, tmp_path / "a") == read(second, tmp_path / "b")
    for a, b in zip(first, second, strict=True):
        assert Path(a.game_file).read_bytes() == Path(b.game_file).read_bytes()
    assert Path(first[0].game_file).read_bytes() != Path(other[0].game_file).read_bytes()
    assert [g.task_type for g in first] == ["pick_two_obj_and_place"] * 3


def test_specs_respect_alfred_rules() -> None:
    rng = random.Random(0)
    for task_type, allowed in [
        ("pick_heat_then_place_in_recep", {"Kitchen"}),
        ("look_at_obj_in_light", {"LivingRoom", "Bedroom"}),
        ("pick_clean_then_place_in_recep", {"Kitchen", "Bathroom"}),
    ]:
        for _ in range(5):
            spec = sample_spec(task_type, rng)
            assert spec.room_kind in allowed
            assert len(spec.receptacles) <= 8
            start_classes = {r.alfred_id: r.cls for r in spec.receptacles}
            targets = [o for o in spec.objects if o.cls == spec.object_target]
            assert targets and all(start_classes[o.receptacle_id] != spec.parent_target for o in targets)
    two = sample_spec("pick_two_obj_and_place", rng)
    assert sum(o.cls == two.object_target for o in two.objects) >= 2


def test_unwinnable_spec_is_reported_and_removed(tmp_path: Path, engine) -> None:
    spec = sample_spec("pick_heat_then_place_in_recep", random.Random(1))
    kept = tuple(r for r in spec.receptacles if r.cls != "Microwave")
    kept_ids = {r.alfred_id for r in kept}
    no_microwave = replace(
        spec, receptacles=kept, objects=tuple(o for o in spec.objects if o.receptacle_id in kept_ids)
    )
    with pytest.raises(UnwinnableGameError) as info:
        write_game(no_microwave, tmp_path / "json_2.1.1" / "train", 1, engine)
    message = str(info.value)
    assert "game.tw-pddl" in message and str(tmp_path) in message and "\n" not in message
    assert not list(tmp_path.rglob("game.tw-pddl"))  # nothing half-written is left behind


def test_grammar_versions_differ_only_in_put_and_help() -> None:
    new, old = game_logic("2.1.2"), game_logic("2.1.1")
    assert 'template :: "move {o} to {r}";' in new.grammar and "action help" in new.grammar
    assert 'template :: "put {o} in/on {r}";' in old.grammar and "move {o} to {r}" not in old.grammar
    assert "(:action help" in new.pddl_domain and "(:action help" not in old.pddl_domain
    assert "action help" not in old.grammar
    with pytest.raises(UnknownNameError, match="2.1.2, 2.1.1"):
        game_logic("2.0")


def test_rooms_come_from_alfred_layouts() -> None:
    kitchen = load_room(1)
    assert kitchen.kind == "Kitchen" and {"Fridge", "Microwave", "SinkBasin", "CoffeeMachine"} <= {
        r.cls for r in kitchen.receptacles
    }
    assert any(r.alfred_id.endswith("|SinkBasin") for r in kitchen.receptacles)
    assert load_room(401).kind == "Bathroom" and load_room(301).kind == "Bedroom"


@pytest.mark.slow
def test_bundled_archive_matches_its_recipe(tmp_path: Path, bundled_root: Path) -> None:
    """Regenerating with the fixed recipe gives the committed games, file for file (~1 min; on both cores)."""
    from strata.envs.alfworld.bundled import BUNDLE_RECIPE, build_bundle

    build_bundle(tmp_path, BUNDLE_RECIPE, workers=2)
    fresh = sorted(p.relative_to(tmp_path) for p in (tmp_path / "json_2.1.1").rglob("*") if p.is_file())
    committed = sorted(p.relative_to(bundled_root) for p in (bundled_root / "json_2.1.1").rglob("*") if p.is_file())
    assert fresh == committed
    for rel in fresh:
        assert (tmp_path / rel).read_bytes() == (bundled_root / rel).read_bytes(), rel
    assert Counter(p.parts[1] for p in fresh if p.name == "game.tw-pddl") == {
        "train": 24,
        "valid_seen": 12,
        "valid_unseen": 6,
    }
    assert len(SUBTASKS) == 6


def test_a_pinned_floor_plan_gives_the_whole_room_or_a_clear_error() -> None:
    spec = sample_spec("pick_heat_then_place_in_recep", random.Random(0), "valid_seen", max_receptacles=None,
                       max_object_classes=None, floor_plan=30)
    assert spec.floor_plan == 30
    assert {r.alfred_id for r in spec.receptacles} == {r.alfred_id for r in load_room(30).receptacles}
    with pytest.raises(ValueError, match="floor plan 301 is not a valid_seen room"):
        sample_spec("pick_heat_then_place_in_recep", random.Random(0), "valid_seen", floor_plan=301)
