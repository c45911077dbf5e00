"""The learning benchmark's report, from recorded runs (the runs themselves take hours: benchmarks/)."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import pytest

from strata.envs.tasks import Task
from strata.workflow.dump import DumpSettings, DumpWriter

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_alfworld_learning.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_alfworld_learning", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _outcomes(seed: int, wins: dict[tuple[int, str], int], games: dict[str, int]) -> list[dict]:
    """Per (step, set), the first ``wins`` games won; every game's admissible rate 0.25 at step 0, 0.5 after."""
    return [{"step": step, "split": split, "game": f"{split}/{g}", "seed": seed, "won": g < won,
             "admissible_rate": 0.25 if step == 0 else 0.5}
            for (step, split), won in wins.items() for g in range(games[split])]


def _record(runs: Path, out: Path, name: str, rows: list[dict], overrides: tuple[str, ...] = (),
            variables: tuple[str, ...] = ()) -> None:
    (runs / name).mkdir(parents=True)
    (runs / name / "outcomes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    wall = {"seconds": 3600.0, "steps": 10, **({"overrides": list(overrides)} if overrides else {}),
            **({"recipe_variables": list(variables)} if variables else {})}
    (runs / name / "wall_time.json").write_text(json.dumps(wall))
    memory = [{"seconds": 20 * i, "step": i, "pss_mib": 9000.0 + i, "rss_mib": 20000.0,
               "pss_by_kind": {"ray-system": 100.0 + i / 2, "python": 400.0 + i, "trainer": 300.0}} for i in range(11)]
    memory.append({"seconds": 240, "step": 10, "pss_mib": 600.0, "rss_mib": 700.0, "pss_by_kind": {}})  # teardown
    (runs / name / "memory.jsonl").write_text("".join(json.dumps(m) + "\n" for m in memory))
    (out / name).mkdir(parents=True)
    (out / name / "config.yaml").write_text("data:\n  train_batch_size: 4\n"
                                            "strata:\n  num_stras_per_run: 2\n  num_trajs_per_stra: 4\n"
                                            "actor_rollout_ref:\n  rollout:\n    temperature: 0.7\n")
    timing = {"timing_s/step": 58.0, "timing_s/gen": 30.0, "timing_s/update_actor": 20.0,
              "strata/success_rate": 0.25, "strata/admissible_action_rate": 0.6,
              "strata/zero_var_trajectory_groups": 0.5}
    # Refused repeats: logged from step 5 on (older runs have none), in training and on the fixed games' validation:
    # in between, the validation plays the fixed games alone (val/average), at the last step both sets (val/split).
    loops = {s: {"strata/refused_repeat_rate": 0.1, "val/average/metrics/refused_repeat_rate": 0.4} if s >= 5 else {}
             for s in range(1, 10)}
    loops[10] = {"strata/refused_repeat_rate": 0.1, "val/average/metrics/refused_repeat_rate": 0.9,
                 "val/split/train/refused_repeat_rate": 0.3}
    (out / name / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "data": {**timing, **loops[s]}}) + "\n"
                                                      for s in range(1, 11)))


def _folders(tmp_path: Path, manifest: dict) -> tuple[Path, Path, Path]:
    """The report's three folders (its output, the runs' records, the agent with ``manifest`` as agent.json)."""
    out, runs, agent = tmp_path / "out", tmp_path / "runs", tmp_path / "agent"
    agent.mkdir()
    (agent / "agent.json").write_text(json.dumps(manifest))
    return out, runs, agent


def _dump_take_steps(run: Path) -> None:
    """Held-out dumps at steps 0, 5 and 10: one take, refused at 0 (object not in view), admitted at 5 and 10; a fixed
    training game's at 0 and 10."""
    writer = DumpWriter(DumpSettings(run_dir=run))
    task = Task("/agent/valid/pick-1/trial/game.tw-pddl", "pick_and_place_simple", "valid_seen", 0)
    for step, seen in ((0, "a handtowel 1"), (5, "a spraybottle 1"), (10, "a spraybottle 1")):
        steps = [{"action": "take spraybottle 1 from sidetable 1", "command": "take spraybottle 1 from sidetable 1",
                  "admissible": step > 0, "observation": "Nothing happens."}]
        record = {"schema": 1, "step": step, "task": {"split": "valid_seen", "index": 0, "game_file": task.game_file},
                  "task_description": "put a spraybottle in toilet.", "initial_observation": f"You see {seen}.",
                  "strategies": [{"trajectories": [{"won": False, "steps": steps}]}]}
        writer.maybe_write("valid", step, task, lambda r=record: r)
    # A fixed training game at steps 0 and 10: the refused take sent again at 0 (a loop), followed by a go at 10.
    game = Task("/agent/rl/pick-1/trial/game.tw-pddl", "pick_and_place_simple", "train", 0)
    for step, second in ((0, ("take spraybottle 1 from sidetable 1", False)), (10, ("go to toilet 1", True))):
        steps = [{"action": c, "command": c, "admissible": a, "observation": "Nothing happens."}
                 for c, a in (("take spraybottle 1 from sidetable 1", False), second)]
        record = {"schema": 1, "step": step, "task": {"split": "train", "index": 0, "game_file": game.game_file},
                  "task_description": "put a spraybottle in toilet.", "initial_observation": "You see a handtowel 1.",
                  "strategies": [{"trajectories": [{"won": False, "steps": steps}]}]}
        writer.maybe_write("valid", step, game, lambda r=record: r)
    # A training dump at step 10: a won trajectory's in-view take (+1.0), a lost one's out-of-view take (-0.5).
    won, lost = ({"won": won, "trained": True, "steps": [
        {"action": c, "command": c, "admissible": won, "observation": "Nothing happens.", "advantage": a}]}
        for won, c, a in ((True, "take spraybottle 1 from toilet 1", 1.0),
                          (False, "take spraybottle 1 from sidetable 1", -0.5)))
    for index, (trajectory, seen) in enumerate(((won, "a spraybottle 1"), (lost, "a handtowel 1"))):
        task = Task(f"/agent/rl/pick-{index}/trial/game.tw-pddl", "pick_and_place_simple", "train", index)
        record = {"schema": 1, "step": 10, "task": {"split": "train", "index": index, "game_file": task.game_file},
                  "task_description": "put a spraybottle in toilet.", "initial_observation": f"You see {seen}.",
                  "strategies": [{"trajectories": [trajectory]}]}
        writer.maybe_write("train", 10, task, lambda r=record: r)


def test_the_report_states_paired_changes_the_control_and_the_targets(tmp_path: Path) -> None:
    bench = _bench()
    out, runs, agent = _folders(tmp_path, {"held_out_success": 0.28, "splits": {"valid_seen": {"games": 300},
                                                                              "rl_train": {"games": 200}}})
    games = {"held_out": 300, "train_fixed": 64}
    for seed in (0, 1):  # held-out: seed 0 wins 60 more games at step 10, seed 1 none; averaged, 30 -> 60
        _record(runs, out, f"strata-seed{seed}", _outcomes(seed, {
            (0, "held_out"): 30, (0, "train_fixed"): 0, (5, "train_fixed"): 10,
            (10, "held_out"): 90 - 60 * seed, (10, "train_fixed"): 20}, games))
        _record(runs, out, f"control-seed{seed}", _outcomes(seed, {
            (0, "held_out"): 30, (0, "train_fixed"): 0, (5, "train_fixed"): 1,
            (10, "held_out"): 27, (10, "train_fixed"): 2}, games),
            overrides=("actor_rollout_ref.actor.kl_loss_coef=0.1",) if seed else (),
            variables=("SIGMA=1",) if seed else ())
    _dump_take_steps(out / "strata-seed0")
    # strata-seed0 trained on fixed games 0-9 by step 5 and on 0-31 by step 10 (the others are not RL games here).
    drawn = {1: range(0, 10), 6: range(10, 32)}
    (runs / "strata-seed0" / "trained.jsonl").write_text("".join(json.dumps(
        {"step": step, "games": [f"train_fixed/{g}" for g in drawn.get(step, ())]}) + "\n" for step in range(1, 11)))
    report = bench.write_report(out, runs, agent, ["strata", "control"], [0, 1]).read_text()
    # Trained games gain 10/10 by step 5 and 20/32 by step 10, the others nothing: (1 + 0.625) / 2 more.
    assert "| strata-seed0 | 5, 10 | 64 | +81.2 | +0.0 | +81.2 [+" in report
    assert "| strata-seed1 |" not in report.split("## Fixed games trained on")[1].split("##")[0]  # no record
    assert "runs pooled" not in report  # one run of strata has a record
    assert "| strata-seed0 | 0 | take | no | 1 | 0.0 |" in report  # took the object where it was not
    assert "| strata-seed0 | 10 | take | yes | 1 | 100.0 |" in report and "| 5 | take |" not in report
    assert "| strata-seed0 | 0 | 1 | 0 | 0 |" in report and "| strata-seed0 | 10 | 0 | 0 | 0 |" in report  # fresh take
    assert "| strata-seed0 | take | no | 1 | -0.500 | 0.0 |" in report  # the credit of the out-of-view take
    assert "| strata-seed0 | take | yes | 1 | +1.000 | 100.0 |" in report
    # Loops at the validations of both sets: the fixed game's second step repeats its refused take at step 0.
    assert "| strata-seed0 | 0 | 0.0 | 50.0 |" in report and "| strata-seed0 | 10 | 0.0 | 0.0 |" in report
    # train_fixed: StraTA +20/64 = +31.25 points, the control +2/64 = +3.125: +28.1 more, on 64 games.
    # Both settings' seeds agree on the fixed games, so the interval over runs is the games' one.
    assert "StraTA's gain minus the control's: +28.1 [+17.2, +39.1] points over games; +28.1 [+17.2, +39.1] over " \
           "their 2 and 2 runs and games (target >= +15, the interval over runs excluding 0): **met**" in report
    # Held-out, StraTA's seeds +20 and +0 against the control's -1 and -1: the interval over runs nearly reaches 0.
    assert "| strata | held_out | 0 -> 10 | 300 | +11.0 [+8.7, +13.5] | +11.0 [+0." in report \
        and "] (2 vs 2 runs) |" in report
    # 30 -> 60 of 300 averaged over the seeds, which add +20 and +0 points: the interval over runs reaches 0.
    assert "StraTA's paired difference (step 0 -> 10): +10.0 [+7.8, +12.3] points over games; +10.0 [+0.0, +2" \
           in report and "over its 2 runs and games (target >= +5, the interval over runs excluding 0): **not met**" \
           in report
    assert "| +10.0 [+7.8, +12.3] | +10.0 [+0.0, +2" in report
    # On the fixed games the seeds agree: the interval over runs is the games' one.
    assert "| 0.0 -> 31.2 | +31.2 [+20.3, +42.2] | +31.2 [+20.3, +42.2] (2 runs) |" in report
    assert "| strata | held_out | 300 | 0 -> 10 | 10.0 -> 20.0 | +10.0 [" in report
    # Each seed's run on a row of its own: +20 points and +0.
    assert "| strata, seed 0 | held_out | 300 | 0 -> 10 | 10.0 -> 30.0 | +20.0 [+15.7, +24.7] | - |" in report
    assert "| strata, seed 1 | held_out | 300 | 0 -> 10 | 10.0 -> 10.0 | +0.0 [+0.0, +0.0] | - |" in report
    assert "| control | train_fixed | 0 -> 10 | 64 |" not in report  # the control is not compared with itself
    assert "| strata | train_fixed | 0 -> 10 | 64 | +28.1 [" in report
    assert "| 25.0 -> 50.0 | +25.0 [+25.0, +25.0] |" in report  # admissible rate, the same on every game
    assert "| strata | train_fixed | 5 | 15.6 |" in report  # the curve has the interim step
    assert "| strata-seed0 | 10 | 4 x 2 x 4 = 32 | 30.0 | - | - | 20.0 | 58.0 | - |" in report
    # Training sampling beside the fixed games' last validation in each block of 8 steps (5: 10/64, 10: 20/64).
    # Refused repeats: the training steps 5-8 that log them (10.0), the fixed games' validation at step 5 (40.0).
    assert "| strata-seed0 | 0.7 | 1-8 | 25.0 | 60.0 | 10.0 | 50.0 | 15.6 (step 5) | 50.0 | 40.0 |" in report
    # How often training drew each RL game: 10 steps x 4 tasks over 200 games.
    assert "RL games: 200 (rl_train); drawn by strata-seed0 10 x 4 = 40 draws (0.20 a game); strata-seed1" in report
    assert "| control-seed1 | 0.7 | 9-10 | 25.0 | 60.0 | 10.0 | 50.0 | 3.1 (step 10) | 50.0 | 30.0 |" in report
    # 9, 10: final validation and teardown; medians of steps 2-6 (9004) and 4-8 (9006): the engines grew most.
    assert ("| strata-seed0 | 9001 (step 1) | 9008 (step 8) | +7 | +4 | +2 (steps 2-6 -> 4-8) "
            "| python +2, ray-system +1 | 9010 |") in report
    # The wall times, with the settings a run was given beyond the recipe's (older records have none).
    assert "control-seed0 60.0 min (10 steps), control-seed1 60.0 min (10 steps; SIGMA=1; " \
           "actor_rollout_ref.actor.kl_loss_coef=0.1)" in report
    assert (out / "curve.png").read_bytes().startswith(PNG_SIGNATURE)


def test_overrides_are_hydra_ones_and_follow_the_training_temperature() -> None:
    bench = _bench()
    assert bench.hydra_override("+strata_test.permute_rewards=true") == "+strata_test.permute_rewards=true"
    for wrong in ("actor_rollout_ref.actor.kl_loss_coef", "=0.1", "+=1"):
        with pytest.raises(argparse.ArgumentTypeError, match="not a Hydra override"):
            bench.hydra_override(wrong)
    assert bench.chosen_overrides(0.7, ["trainer.save_freq=60"]) == [
        "actor_rollout_ref.rollout.temperature=0.7", "trainer.save_freq=60"]
    assert bench.chosen_overrides(None, []) == []


def test_without_a_control_the_targets_say_what_is_missing(tmp_path: Path) -> None:
    bench = _bench()
    dagger = {"base": "/agents/base", "rounds": [{}], "train_fixed_change": "+3.1 [-1.6, +7.8]"}
    out, runs, agent = _folders(tmp_path, {
        "held_out_success": 0.2, "splits": {"valid_seen": {"games": 300}, "rl_train": {"games": 20}},
        "train_fixed_success": 0.25, "train_fixed_refused_repeat_rate": 0.3,
        "recipe": {"rl_eval_games": 64, "rl_games": 20}, "dagger": dagger})
    _record(runs, out, "strata-seed0", _outcomes(0, {(0, "held_out"): 30, (10, "held_out"): 27,
                                                     (0, "train_fixed"): 5, (10, "train_fixed"): 5},
                                                 {"held_out": 300, "train_fixed": 64}))
    report = bench.write_report(out, runs, agent, ["strata", "control"], [0]).read_text()
    assert "StraTA vs control: not measured" in report
    # The header counts the fixed games the build played (20 RL games, not --rl-eval-games 64) and names DAgger.
    assert "25.0% on its first 20 RL games, 30.0% of their steps refused repeats; DAgger, 1 round(s) from " \
           "/agents/base: fixed RL games +3.1 [-1.6, +7.8] points (paired)." in report
    assert "RL games: 20 (rl_train); drawn by strata-seed0 10 x 4 = 40 draws (2.00 a game)." in report
    assert "StraTA's paired difference (step 0 -> 10): -1.0 [" in report and "**not met**" in report


def test_the_trained_table_pools_an_algorithms_seeds(tmp_path: Path) -> None:
    bench = _bench()
    out, runs, agent = _folders(tmp_path, {"held_out_success": 0.3, "splits": {"valid_seen": {"games": 300},
                                                                             "rl_train": {"games": 64}}})
    games = {"held_out": 300, "train_fixed": 64}
    # Both seeds win fixed games 0-9 at step 5 and 0-19 at step 10. Seed 0 trained on games 0-9 by step 5 and 0-31
    # by step 10; seed 1 on games 32-63 at step 1, none of which it wins.
    drawn = {0: {1: range(0, 10), 6: range(10, 32)}, 1: {1: range(32, 64)}}
    for seed in (0, 1):
        _record(runs, out, f"strata-seed{seed}", _outcomes(seed, {(0, "train_fixed"): 0, (5, "train_fixed"): 10,
                                                                  (10, "train_fixed"): 20}, games))
        (runs / f"strata-seed{seed}" / "trained.jsonl").write_text("".join(json.dumps(
            {"step": step, "games": [f"train_fixed/{g}" for g in drawn[seed].get(step, ())]}) + "\n"
            for step in range(1, 11)))
    table = bench.write_report(out, runs, agent, ["strata"], [0, 1]).read_text().split("## Fixed games trained")[1]
    assert "| strata-seed0 | 5, 10 | 64 | +81.2 | +0.0 | +81.2 [+" in table
    assert "| strata-seed1 | 5, 10 | 64 | +0.0 | +46.9 | -46.9 [" in table  # (10/32 + 20/32) / 2 not yet
    # Pooled, step 5: trained 10 of 10 + 32 won 10/42, not yet 10/86; step 10: trained 20/64, not yet 20/64.
    assert "| strata, 2 runs pooled | 5, 10 | 128 | +27.5 | +21.4 | +6.1 [" in table


def test_each_method_is_compared_with_grpo_on_the_same_games(tmp_path: Path) -> None:
    bench = _bench()
    out, runs, agent = _folders(tmp_path, {"held_out_success": 0.3, "splits": {"valid_seen": {"games": 300},
                                                                             "rl_train": {"games": 200}}})
    games = {"held_out": 300, "train_fixed": 64}
    for name, held_out, fixed in (("strata", 60, 20), ("grpo", 45, 10), ("control", 27, 2)):
        _record(runs, out, f"{name}-seed0", _outcomes(0, {(0, "held_out"): 30, (10, "held_out"): held_out,
                                                          (0, "train_fixed"): 0, (10, "train_fixed"): fixed}, games))
    report = bench.write_report(out, runs, agent, ["strata", "grpo", "control"], [0]).read_text()
    versus_grpo = report.split("## Against GRPO")[1].split("##")[0]
    # StraTA +10 held-out points (30 -> 60 of 300) against GRPO's +5 (30 -> 45); fixed +20/64 against +10/64.
    assert "| strata | held_out | 0 -> 10 | 300 | +5.0 [" in versus_grpo
    held_out_row = next(line for line in versus_grpo.splitlines() if line.startswith("| strata | held_out"))
    assert held_out_row.endswith("] | - |")  # one run each: no interval over runs
    assert "| strata | train_fixed | 0 -> 10 | 64 | +15.6 [" in versus_grpo
    assert "| grpo |" not in versus_grpo and "| control |" not in versus_grpo  # neither itself nor the drift
    versus_control = report.split("## Against the control")[1].split("##")[0]
    assert "| grpo | held_out | 0 -> 10 | 300 | +6.0 [" in versus_control  # +5 against the control's -1


def test_a_run_records_the_recipe_variables_it_was_given() -> None:
    """`M=8 TASKS=2 bench ...` changes every run; the record keeps what was set, and each name is one the recipe
    reads with a default."""
    bench = _bench()
    assert bench.recipe_variables({"SIGMA": "1", "HOME": "/root", "M": "8"}) == ["M=8", "SIGMA=1"]
    assert bench.recipe_variables({"PATH": "/bin"}) == []
    recipe = bench.RECIPE.read_text()
    assert all(f"{name}=${{{name}:-" in recipe for name in bench.RECIPE_VARIABLES)


def test_from_nothing_the_agent_of_the_reported_runs_is_built_then_dagger_trained(tmp_path: Path) -> None:
    bench = _bench()
    agent, recipe = tmp_path / "agent", bench.AgentRecipe()
    base = tmp_path / "agent-base"
    assert bench.agent_build_commands(agent, 300, recipe) == [
        ["build-alfworld-agent", "--out", str(base), "--valid-games", "300", "--hidden-size", "128",
         "--steps", "3000", "--lr", "0.0015"],
        ["dagger-alfworld-agent", "--agent", str(base), "--out", str(agent), "--rounds", "2"]]
    base.mkdir()
    (base / "agent.json").write_text("{}")  # a build that finished before DAgger stopped: not built again
    assert bench.agent_build_commands(agent, 300, recipe) == [
        ["dagger-alfworld-agent", "--agent", str(base), "--out", str(agent), "--rounds", "2"]]
    without_dagger = bench.AgentRecipe(width=64, steps=1500, lr=0.001, dagger_rounds=0)
    assert bench.agent_build_commands(agent, 100, without_dagger) == [
        ["build-alfworld-agent", "--out", str(agent), "--valid-games", "100", "--hidden-size", "64",
         "--steps", "1500", "--lr", "0.001"]]
    equal = bench.AgentRecipe(action_shares=(13, 13), dagger_rounds=0)
    assert bench.agent_build_commands(agent, 300, equal)[0][-3:] == ["--action-shares", "13", "13"]
    agent.mkdir()
    (agent / "agent.json").write_text("{}")
    assert bench.agent_build_commands(agent, 300, recipe) == []
