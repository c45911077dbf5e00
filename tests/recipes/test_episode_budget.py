"""H = 50 steps fit every GPU recipe's row budgets in the largest ALFWorld kitchen, measured, not estimated.

A multi-turn trajectory row (the spec's default: the policy sees the task, the strategy and the whole
interaction so far) grows by one observation turn per step, and a kitchen's turn lists ~55 admissible
actions. With ``data.max_response_length=16384`` the rows of big kitchens ran out after ~30 steps, in
training and in evaluation alike, so the base model's ~50-step episodes could not be reproduced.

The measurement: the largest kitchen the offline generator builds (ALFRED FloorPlan30 with all 51
receptacles and every object class) is played for 50 steps on the real engine by the project's own
`Episode` (so every turn is rendered and tokenised exactly as in a rollout) with the real Qwen2.5
tokenizer. The scripted policy searches the room as a model does early in training: it opens what it can
open where it stands, else goes to the next receptacle it has not visited, cycling through all of them;
each response is a short well-formed answer (a sentence of reasoning, then the ``<action>`` tag).
Each recipe's resolved budgets (``DRY_RUN=1``) must then hold all 50 steps with every response
`LONGER_RESPONSES` tokens longer than the scripted one, within Qwen2.5's context, with verl's dynamic
batch limits at least the row length.

The tiny CPU recipe is exempt: it plays H=4 steps of the small bundled rooms with a 32-token L_max.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from strata.core.prompting import load_prompt_templates
from strata.envs.alfworld.discovery import DATA_VERSION_DIR
from strata.envs.alfworld.gen.catalog import load_room, room_kind, scene_numbers
from strata.envs.alfworld.gen.spec import sample_spec
from strata.envs.alfworld.gen.writer import write_game_files
from strata.envs.pool import EnvPool
from strata.envs.records import REASON_STEP_LIMIT
from strata.envs.tasks import Task
from strata.workflow.chat import ChatTokens
from strata.workflow.episode import Episode, EpisodeLimits
from strata.workflow.policy import Policy
from strata.workflow.records import Trajectory
from strata.workflow.rows import trajectory_row
from tests.recipes.resolved import EVALUATION_ARGS, resolve

H = 50
QWEN25_CONTEXT = 32768  # max_position_embeddings of Qwen2.5-1.5B-Instruct and -7B-Instruct
LONGER_RESPONSES = 64  # the stated headroom: each of the 50 responses may be this many tokens longer
PRE_ISSUE_BUDGET = 16384  # data.max_response_length before this test existed
GPU_RECIPES = {
    "train-strata-alfworld-text-qwen2.5-1.5b.sh": (),
    "train-strata-alfworld-text-qwen2.5-7b.sh": (),
    "train-strata-alfworld-text-qwen2.5-7b-lora.sh": (),
    "evaluate-strata-alfworld-text-qwen2.5-1.5b.sh": EVALUATION_ARGS,
    "evaluate-strata-alfworld-text-qwen2.5-7b.sh": EVALUATION_ARGS,
}
STRATEGY = (
    "Find a plate: check the cabinets first, then the countertops and the drawers, opening each closed one. "
    "Take the plate, go to microwave 1 and heat it there. Then go to a cabinet, open it and put the hot plate "
    "in it."
)


def largest_kitchen() -> int:
    """The ALFRED kitchen floor plan with the most receptacles (then object classes)."""
    kitchens = [fp for fp in scene_numbers("valid_seen") if room_kind(fp) == "Kitchen"]
    return max(kitchens, key=lambda fp: (len(load_room(fp).receptacles), len(load_room(fp).object_classes)))


class SearchingServer:
    """verl's ``generate`` for a policy that searches the room: open what is here, else go somewhere new.

    It reads the admissible actions off the prompt as the model does (the last "Admissible actions:" list).
    """

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        self.visited: set[str] = set()
        self.admissible_counts: list[int] = []

    def _choose(self, prompt: str) -> str:
        listed = prompt.rpartition("Admissible actions:")[2].split("<|im_end|>")[0]
        actions = [line[2:] for line in listed.splitlines() if line.startswith("- ")]
        assert actions, "the action prompt lists no admissible actions"
        self.admissible_counts.append(len(actions))
        opens = [a for a in actions if a.startswith("open ")]
        if opens:
            return opens[0]
        places = [a for a in actions if a.startswith("go to ")]
        unvisited = [a for a in places if a not in self.visited] or places
        if unvisited == places:
            self.visited.clear()
        self.visited.add(unvisited[0])
        return unvisited[0]

    async def generate(self, request_id, prompt_ids, sampling_params):
        from verl.workers.rollout.replica import TokenOutput

        action = self._choose(self.tokenizer.decode(prompt_ids))
        text = f"I have not found what I need yet, so I will {action} and see what is there.\n<action>{action}</action>"
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


@dataclass(frozen=True)
class Measured:
    trajectory: Trajectory
    admissible_counts: list[int]

    @property
    def row_tokens(self) -> int:
        """Prompt + response tokens of the 50-step row, as `trajectory_row` builds it."""
        row = trajectory_row(self.trajectory, None)
        return len(row.prompt_ids) + len(row.response_ids)

    def steps_that_fit(self, limits: EpisodeLimits, max_tokens: int, longer: int) -> int:
        """Steps an episode gets under ``limits`` if every response were ``longer`` tokens longer (the rule
        `Episode` applies before each step)."""
        used = 0
        for t, step in enumerate(self.trajectory.steps, start=1):
            if t > limits.max_steps or not limits.room_for_response(used, max_tokens):
                return t - 1
            used += step.generation.num_tokens + longer + len(step.env_tokens)
        return len(self.trajectory.steps)

    def summary(self) -> str:
        steps = self.trajectory.steps
        responses = [s.generation.num_tokens for s in steps]
        turns = [len(s.env_tokens) for s in steps[:-1]]
        return (f"first prompt {len(self.trajectory.prompt_ids)} tokens; responses {min(responses)}-"
                f"{max(responses)} (mean {sum(responses) / len(responses):.1f}); observation turns "
                f"{min(turns)}-{max(turns)} (mean {sum(turns) / len(turns):.1f}); up to "
                f"{max(self.admissible_counts)} admissible actions; {len(steps)}-step row {self.row_tokens} tokens")


@pytest.fixture(scope="module")
def resolved_recipes() -> Iterator[dict[str, Future]]:
    """Each GPU recipe's resolved config, composed in the background while the episode plays (each
    composition is a subprocess of its own; the play waits mostly on the engine's worker process)."""
    with ThreadPoolExecutor(max_workers=2) as executor:
        yield {recipe: executor.submit(resolve, recipe, *args) for recipe, args in GPU_RECIPES.items()}


@pytest.fixture(scope="module")
def largest_kitchen_episode(resolved_recipes, qwen_tokenizer, tmp_path_factory) -> Measured:
    # Planning a win in a whole ALFRED kitchen takes minutes, and this policy never wins: written unverified.
    spec = sample_spec("pick_heat_then_place_in_recep", random.Random("largest-kitchen"), "valid_seen",
                       max_receptacles=None, max_object_classes=None, floor_plan=largest_kitchen())
    split_dir = tmp_path_factory.mktemp("largest-kitchen") / DATA_VERSION_DIR / "valid_seen"
    task = Task(str(write_game_files(spec, split_dir, 1)), spec.task_type, "valid_seen")
    server = SearchingServer(qwen_tokenizer)
    policy = Policy(server, ChatTokens(qwen_tokenizer), {}, max_tokens=512)
    limits = EpisodeLimits(max_steps=H, response_budget=10**9, prompt_tokens=2048)

    async def play() -> Trajectory:
        with EnvPool(num_workers=1, step_timeout_s=120, start_timeout_s=300, max_steps=H) as pool:
            async with pool.episode(task) as env_episode:
                return await Episode(env_episode, STRATEGY, policy, load_prompt_templates(), limits, False).run()

    return Measured(asyncio.run(play()), server.admissible_counts)


def test_the_largest_kitchen_plays_50_steps_that_the_old_budget_cut(largest_kitchen_episode):
    measured = largest_kitchen_episode
    print(measured.summary())
    assert measured.trajectory.num_steps == H and measured.trajectory.end_reason == REASON_STEP_LIMIT
    assert all(step.well_formed for step in measured.trajectory.steps)
    assert max(measured.admissible_counts) >= 50, measured.summary()
    old = EpisodeLimits(max_steps=H, response_budget=PRE_ISSUE_BUDGET, prompt_tokens=2048)
    old_steps = measured.steps_that_fit(old, max_tokens=512, longer=0)
    print(f"a {PRE_ISSUE_BUDGET}-token row held {old_steps} steps")
    assert old_steps < H, measured.summary()


@pytest.mark.parametrize("recipe", sorted(GPU_RECIPES))
def test_every_gpu_recipe_holds_50_steps_of_the_largest_kitchen(recipe, largest_kitchen_episode, resolved_recipes):
    config = resolved_recipes[recipe].result()
    measured = largest_kitchen_episode
    rollout, actor, ref = (config["actor_rollout_ref"][k] for k in ("rollout", "actor", "ref"))
    limits = EpisodeLimits(max_steps=config["env"]["max_steps"], response_budget=rollout["response_length"],
                           prompt_tokens=rollout["prompt_length"])
    max_tokens = config["strata"]["max_tokens_per_response"]
    assert limits.max_steps == H
    assert len(measured.trajectory.prompt_ids) <= limits.prompt_tokens
    fits = measured.steps_that_fit(limits, max_tokens, LONGER_RESPONSES)
    assert fits == H, f"{recipe}: {fits} of {H} steps fit; {measured.summary()}"
    row = limits.prompt_tokens + limits.response_budget  # the widest row verl pads to
    assert measured.row_tokens + H * LONGER_RESPONSES <= row <= QWEN25_CONTEXT
    assert rollout["max_model_len"] is None or rollout["max_model_len"] >= row  # None: the model's context
    # verl's dynamic batch sizing refuses a row longer than its per-GPU token limit.
    assert actor["use_dynamic_bsz"] and actor["ppo_max_token_len_per_gpu"] >= row
    assert ref["log_prob_max_token_len_per_gpu"] >= row
    assert rollout["log_prob_max_token_len_per_gpu"] >= row
