"""`strata build-alfworld-agent` end to end at toy size: games, traces, tokenizer, warm start, evaluation."""

from __future__ import annotations

import dataclasses
import json

import pandas as pd
import pytest

from strata.assets.alfworld_agent import AgentRecipe
from strata.cli import main
from tests.checkpoint.conftest import run_fsdp_writer


def test_action_shares_that_leave_no_room_are_refused_before_anything_is_built(tmp_path):
    out = tmp_path / "agent"
    with pytest.raises(SystemExit) as refused:
        main(["build-alfworld-agent", "--out", str(out), "--action-shares", "20", "10"])
    assert str(refused.value).startswith("error: --action-shares (20, 10): two shares")
    assert "at most 26" in str(refused.value) and str(refused.value).count("shares") == 2
    assert not out.exists()


def test_dagger_refuses_an_agent_whose_recorded_recipe_cannot_be_built(tmp_path, capsys):
    agent = tmp_path / "agent"
    agent.mkdir()
    recipe = {**dataclasses.asdict(AgentRecipe()), "action_shares": [30, 30]}
    (agent / "agent.json").write_text(json.dumps({"recipe": recipe}))
    assert main(["dagger-alfworld-agent", "--agent", str(agent), "--out", str(tmp_path / "out")]) != 0
    assert "cannot build" in capsys.readouterr().err and not (tmp_path / "out").exists()


@pytest.mark.slow
def test_the_command_builds_a_complete_agent_folder(tmp_path, capsys):
    out = tmp_path / "agent"
    assert main(["build-alfworld-agent", "--out", str(out), "--train-games", "3", "--valid-games", "2",
                 "--rl-games", "2", "--rl-eval-games", "1", "--orders-per-game", "1", "--steps", "3",
                 "--misplaced-take-rate", "0.5", "--action-shares", "12", "14",
                 "--history-window", "3", "--hidden-size", "128", "--num-layers", "2", "--lr", "0.001"]) == 0
    manifest = json.loads((out / "agent.json").read_text())
    assert manifest["recipe"]["train_games"] == 3 and manifest["splits"]["valid_seen"]["games"] == 2
    assert manifest["splits"]["rl_train"] == {"split": "train", "games": 2, "seed": 1, "folder": "rl_data"}
    assert manifest["expert"]["traces"] == 3 and manifest["expert"]["won"] >= 1
    assert manifest["examples"]["strategy"] == manifest["expert"]["won"]
    assert 0.0 <= manifest["held_out_success"] <= 1.0
    # The training-side reading: the first --rl-eval-games RL games, played as the held-out ones are.
    assert manifest["recipe"]["rl_eval_games"] == 1
    for name in ("held_out", "train_fixed"):
        assert 0.0 <= manifest[f"{name}_success"] <= 1.0
        assert 0.0 <= manifest[f"{name}_refused_repeat_rate"] < manifest[f"{name}_well_formed_actions"] + 1e-9
    assert 0 < sum(total for _, total in manifest["train_fixed_situations"].values()) <= 15  # one 15-step game
    assert manifest["recipe"]["misplaced_take_rate"] == 0.5 and manifest["expert"]["misplaced_takes"] >= 1
    assert manifest["recipe"]["action_shares"] == [12, 14]
    situations = manifest["held_out_situations"]  # "<verb>, object (not) in view" -> [admitted, steps]
    assert situations and all(0 <= admitted <= steps for admitted, steps in situations.values())
    assert all(key.split(", object ")[1] in ("in view", "not in view") for key in situations)
    assert set(manifest["seconds"]) == {"games", "traces", "warm_start", "evaluation"}
    for name in ("train.parquet", "valid_seen.parquet", "rl_train.parquet", "model/config.json",
                 "model/tokenizer.json"):
        assert (out / name).is_file(), name
    from transformers import AutoConfig, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(out / "model")
    config = AutoConfig.from_pretrained(out / "model")
    assert len(tokenizer) <= 2048 and config.vocab_size >= len(tokenizer)
    assert (config.hidden_size, config.intermediate_size, config.num_hidden_layers) == (128, 256, 2)
    assert manifest["recipe"]["history_window"] == 3 and manifest["recipe"]["lr"] == 0.001
    printed = capsys.readouterr().out
    assert f"agent written to {out / 'model'}" in printed and "held-out success" in printed
    assert "on the first 1 RL games" in printed
    # The held-out games are neither the warm start's nor RL's, and RL's are new to the warm start.
    train, valid, rl = ({p.read_bytes() for p in (out / folder / "json_2.1.1" / split).rglob("game.tw-pddl")}
                        for folder, split in (("data", "train"), ("data", "valid_seen"), ("rl_data", "train")))
    assert train and valid and len(rl) == 2 and not train & valid and not rl & (train | valid)
    rl_games = set(pd.read_parquet(out / "rl_train.parquet")["extra_info"].map(lambda info: info["game_file"]))
    assert len(rl_games) == 2 and all(game.startswith(str(out / "rl_data")) for game in rl_games)
    # DAgger from an RL step of it (verl's checkpoint of its weights before any update): a new folder on the base's
    # games, the base left as it was.
    base_manifest = (out / "agent.json").read_bytes()
    step = tmp_path / "rl" / "global_step_3"
    run_fsdp_writer(out / "model", 1, out=step, steps=0)
    dagger = tmp_path / "dagger"
    assert main(["dagger-alfworld-agent", "--agent", str(out), "--checkpoint", str(step), "--out", str(dagger),
                 "--steps", "2"]) == 0
    assert (out / "agent.json").read_bytes() == base_manifest
    trained = json.loads((dagger / "agent.json").read_text())
    assert trained["recipe"] == manifest["recipe"] and trained["dagger"]["base"] == str(out)
    assert trained["dagger"]["start"] == str(step)
    # The step holds the agent's weights in fp32, exported exactly: the reading before the rounds is the build's.
    for key in ("train_fixed_won", "train_fixed_well_formed_actions", "train_fixed_refused_repeat_rate"):
        assert trained["dagger"]["before"][key] == manifest[key], key
    (strata, grpo), = ((r["action"], r["action_grpo"]) for r in trained["dagger"]["rounds"])
    for counts in (strata, grpo):  # each of the 3 training games played once per prompt style, replayed exactly
        assert counts["episodes"] == 3 and counts["diverged"] == counts["failed"] == 0
        assert 0 < counts["labels"] <= counts["states"] and 0.0 <= counts["agreement"] <= 1.0
    assert len(trained["dagger"]["before"]["train_fixed_won"]) == len(trained["train_fixed_won"]) == 1
    assert trained["dagger"]["train_fixed_change"].count("[") == 1
    assert set(trained["machine"]) == {"cpu", "cpus", "torch"}
    assert (dagger / "data").is_symlink() and (dagger / "model" / "config.json").is_file()
    rl_games = set(pd.read_parquet(dagger / "rl_train.parquet")["extra_info"].map(lambda info: info["game_file"]))
    assert len(rl_games) == 2 and all(game.startswith(str(dagger / "rl_data")) for game in rl_games)
    printed = capsys.readouterr().out
    assert f"from {step}: " in printed and "labels of its own states" in printed
    # It never writes over a folder.
    assert main(["dagger-alfworld-agent", "--agent", str(out), "--out", str(dagger)]) == 2
