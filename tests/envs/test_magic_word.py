"""The magic-word game: its files, its task lists, its rules, and its place behind ``env.name``."""

from __future__ import annotations

import asyncio

import pandas as pd
import pytest

from strata.core.prompting import build_action_messages, build_strategy_messages, load_prompt_templates
from strata.envs.magic_word.game import (
    MAGIC_WORD,
    TASK_DESCRIPTION,
    WORDS,
    MagicWordEnv,
    load_game,
    write_games,
    write_prompt_preset,
)
from strata.envs.task_list import read_task_list, write_task_list
from strata.workflow.environments import make_environment


def play(env: MagicWordEnv, task, actions: list[str]) -> list:
    async def run():
        async with env.episode(task) as episode:
            return episode, [await episode.step(a) for a in actions]

    return asyncio.run(run())


def test_games_are_deterministic_files_that_task_lists_accept(tmp_path):
    tasks = write_games(tmp_path / "a", "valid_seen", 6, seed=3)
    again = write_games(tmp_path / "b", "valid_seen", 6, seed=3)
    assert [t.index for t in tasks] == list(range(6))
    assert all(t.subtask == "pick" and t.split == "valid_seen" for t in tasks)
    orders = [load_game(t.game_file).words for t in tasks]
    assert orders == [load_game(t.game_file).words for t in again]
    assert all(sorted(order) == sorted(WORDS) for order in orders)
    assert len(set(orders)) > 1  # the order differs between games: position says nothing

    path = write_task_list(tasks, tmp_path / "valid_seen.parquet")
    assert read_task_list(path) == tasks
    row = pd.read_parquet(path).iloc[0]
    assert list(row["prompt"]) == [{"role": "user", "content": TASK_DESCRIPTION}]
    assert row["extra_info"]["subtask"] == "pick"


def test_the_magic_word_wins_and_any_other_word_loses(tmp_path):
    (task,) = write_games(tmp_path, "train", 1)
    env = MagicWordEnv(max_steps=1)
    episode, (result,) = play(env, task, [f"say {MAGIC_WORD}"])
    assert result.won and result.done and result.reward == 1.0 and result.failure is None
    assert episode.failure is None and episode.walkthrough == (f"say {MAGIC_WORD}",)
    assert episode.task_description == TASK_DESCRIPTION
    assert episode.initial_observation.endswith(f"Your task is to: {TASK_DESCRIPTION}.")
    assert sorted(episode.admissible_commands) == sorted(f"say {w}" for w in WORDS)

    loser = next(w for w in WORDS if w != MAGIC_WORD)
    _, (result,) = play(env, task, [f"say {loser}"])
    assert not result.won and result.done and result.admissible_commands == ()


def test_other_commands_cost_a_step_until_the_cap(tmp_path):
    (task,) = write_games(tmp_path, "train", 1)
    _, results = play(MagicWordEnv(max_steps=3), task, ["look", "say nothing", f"say  {MAGIC_WORD} "])
    assert [(r.observation, r.done) for r in results[:2]] == [("Nothing happens.", False)] * 2
    assert results[2].won and results[2].done  # whitespace is normalised, as a model's tag content may vary

    episode, results = play(MagicWordEnv(max_steps=2), task, ["look", "look"])
    assert [r.done for r in results] == [False, True] and not results[1].won
    with pytest.raises(RuntimeError, match="is over"):
        asyncio.run(episode.step("look"))


def test_actions_written_like_a_person_are_mapped_unless_switched_off(tmp_path):
    (task,) = write_games(tmp_path, "train", 1)
    written = f'- "Say {MAGIC_WORD.capitalize()}."'
    _, (result,) = play(MagicWordEnv(max_steps=1), task, [written])
    assert result.won and (result.command, result.admissible) == (f"say {MAGIC_WORD}", True)
    _, (result,) = play(MagicWordEnv(max_steps=1, normalize_actions=False), task, [written])
    assert not result.won and result.observation == "Nothing happens."
    assert (result.command, result.admissible) == (written, False)
    env = make_environment("magic_word", num_workers=1, step_timeout_s=1.0, max_steps=1, normalize_actions=False)
    assert not env.normalize_actions


def test_bad_settings_are_rejected(tmp_path):
    with pytest.raises(ValueError, match="max_steps"):
        MagicWordEnv(max_steps=0)
    with pytest.raises(ValueError, match="not among"):
        write_games(tmp_path, "train", 1, magic_word="dragon")
    with pytest.raises(ValueError, match="count"):
        write_games(tmp_path, "train", 0)


def test_env_name_selects_it():
    env = make_environment("magic_word", num_workers=1, step_timeout_s=1.0, max_steps=2)
    assert isinstance(env, MagicWordEnv) and env.max_steps == 2


def test_prompt_preset_is_a_loadable_preset_with_short_prompts(tmp_path):
    templates = load_prompt_templates(str(write_prompt_preset(tmp_path / "prompts.yaml")))
    game = load_game(write_games(tmp_path, "train", 1)[0].game_file)
    strategy_prompt = build_strategy_messages(templates, game.task_description, game.initial_observation)
    assert game.initial_observation in strategy_prompt[-1]["content"]
    action_prompt = build_action_messages(templates, game.task_description, "say apple", [],
                                          game.initial_observation, game.admissible_commands)
    assert "Your strategy: say apple" in action_prompt[-1]["content"]
    assert templates.judge == load_prompt_templates("alfworld").judge  # only the two prompts change
