"""Every StraTA and baseline switch changes what it says: one group per setting, played through the real agent loop.

Each test builds `strata.workflow.agent_loop.StrataAgentLoop` from a trainer config (the ``strata``, ``env``,
``algorithm`` and ``run`` groups the trainer passes), answers its generation requests with a scripted
policy server, and reads back what the loop returns to verl: the training rows with their per-token
advantages, plus the trajectory dump. Everything between is the real code: `rollout_task`, the selection,
the episodes on a real environment (the magic-word game; ALFWorld's bundled games and ScienceWorld for
``env.normalize_actions``), the judge, `group_advantages` and the rows.

The scripted group (`GROUP`) is built so that every shaping term reaches an advantage: strategy and action
responses without their tag, responses cut at L_max without a stop token, responses longer than λ·L_max,
flagged and unparsable judgments, and strategy groups whose rewards tie or differ. The expected advantages
are recomputed here from the script's rewards, token counts, formats and judge flags following
docs/algorithm.md §2, by `expected_group` (written without `strata.core.advantage`), and every switch is
run on and off with the difference it must make checked.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import math
import random
import statistics
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import pytest
from omegaconf import OmegaConf
from verl.experimental.agent_loop.agent_loop import DictConfigWrap
from verl.workers.rollout.replica import TokenOutput

import strata.workflow.agent_loop as agent_loop
from strata.core.seeding import derive_seed
from strata.envs.magic_word.game import write_games
from strata.envs.sciworld.tasks import game_id
from strata.envs.tasks import Task

L_MAX = 64  # strata.max_tokens_per_response
EPS = 1e-6
MAGIC_STEPS = 3  # env.max_steps of the magic-word groups

FILL = " and then I check the sign once more"  # 8 tokens


# --- the scripted policy -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """One scripted response and whether it carries its required tag (declared by hand)."""

    text: str
    well_formed: bool


def act(action: str) -> Reply:
    return Reply(f"<action>{action}</action>", True)


MALFORMED = Reply("I am not sure what to do here.", False)  # no tag at all
LONG_LOOK = Reply("Before acting" + FILL * 4 + " <action>look</action>", True)  # over λ·L_max, under L_max
CUT_LOOK = Reply("<action>look</action>" + FILL * 10, True)  # tag first, then cut at L_max (no stop token)
CUT_MALFORMED = Reply("Before acting" + FILL * 10 + " <action>look</action>", False)  # cut before its tag


@dataclass(frozen=True)
class Episode:
    replies: tuple[Reply, ...]
    won: bool  # what the magic-word game must answer (checked against the engine)
    judgment: str = "<judgment>[]</judgment>"
    flagged: tuple[int, ...] = ()  # what that judgment flags (declared by hand)


@dataclass(frozen=True)
class Strategy:
    marker: str  # a word only this strategy's text holds: the server finds its episodes' prompts by it
    reply: Reply
    episodes: tuple[Episode, ...]


# σ = 1, N = 4, M = 2 on the magic-word game ("say candle" wins, any other listed word loses, anything else
# is "Nothing happens." and costs a step, MAGIC_STEPS at most).
GROUP = (
    Strategy("ALPHA", Reply("<strategy>ALPHA say the magic word</strategy>", True), (
        Episode((act("say candle"),), won=True),
        Episode((MALFORMED, LONG_LOOK, act("say candle")), won=True,
                judgment="<judgment>[1, 2]</judgment>", flagged=(1, 2)),
    )),
    Strategy("BRAVO", Reply("BRAVO I will just say whatever comes to mind.", False), (
        Episode((act("look"), act("say river")), won=False, judgment="<judgment>[1]</judgment>", flagged=(1,)),
        Episode((CUT_LOOK, act("say candle")), won=True),
    )),
    Strategy("CHARLIE", Reply("<strategy>CHARLIE say the word on the sign" + FILL * 3 + "</strategy>", True), (
        Episode((CUT_MALFORMED, act("look"), LONG_LOOK), won=False,
                judgment="<judgment>[2, 3]</judgment>", flagged=(2, 3)),
        Episode((act("say candle"),), won=True),
    )),
    Strategy("DELTA", Reply("<strategy>DELTA say the word" + FILL * 10 + "</strategy>", False), (
        Episode((act("say river"),), won=False),
        Episode((MALFORMED, act("say apple")), won=False, judgment="no idea which steps were bad"),
    )),
)
MARKERS = tuple(s.marker for s in GROUP)


@dataclass
class Call:
    kind: str  # "strategy", "action" or "judge"
    prompt_ids: list[int]
    prompt: str
    response_ids: list[int]
    episode: tuple[str | None, int] | None = None  # (strategy marker, episode number under it)
    step: int | None = None


class ScriptedServer:
    """verl's ``generate``: strategy candidates in the order given, each episode's replies in order (found
    by the marker of the strategy in its prompt, and numbered by first request under that strategy), the
    episode's judgment on its judge prompt. Like vLLM it stops at ``max_tokens``: a longer reply comes back
    cut, without its stop token. Records every call."""

    def __init__(self, tokenizer, strategies: list[str], episodes: dict[str | None, list[list[str]]],
                 judgments: dict[tuple[str | None, int], str] | None = None):
        self.tokenizer = tokenizer
        self.strategies = list(strategies)
        self.episodes = episodes
        self.judgments = judgments or {}
        self.markers = [m for m in episodes if m is not None]
        self.calls: list[Call] = []
        self._episode_of: dict[str, tuple[str | None, int]] = {}

    def of(self, kind: str) -> list[Call]:
        return [c for c in self.calls if c.kind == kind]

    def actions_of(self, episode: tuple[str | None, int]) -> list[Call]:
        return [c for c in self.of("action") if c.episode == episode]

    def _answer(self, request_id: str, prompt: str) -> tuple[str, str, tuple | None, int | None]:
        if "<judgment>" in prompt:
            episode = self._episode_of[request_id]
            return "judge", self.judgments.get(episode, "<judgment>[]</judgment>"), episode, None
        if "<action>" in prompt:
            if request_id not in self._episode_of:
                marker = next((m for m in self.markers if m in prompt), None)
                number = sum(1 for e in self._episode_of.values() if e[0] == marker)
                self._episode_of[request_id] = (marker, number)
            episode = self._episode_of[request_id]
            step = len(self.actions_of(episode)) + 1
            return "action", self.episodes[episode[0]][episode[1]][step - 1], episode, step
        served = len(self.of("strategy"))
        return "strategy", self.strategies[served] if served < len(self.strategies) else "(unscripted)", None, None

    async def generate(self, request_id, prompt_ids, sampling_params):
        prompt = self.tokenizer.decode(prompt_ids)
        kind, text, episode, step = self._answer(request_id, prompt)
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        cut = len(ids) > sampling_params["max_tokens"]
        ids = ids[: sampling_params["max_tokens"]]
        self.calls.append(Call(kind, list(prompt_ids), prompt, ids, episode, step))
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="length" if cut else "completed")


def group_server(tokenizer, group=GROUP) -> ScriptedServer:
    return ScriptedServer(
        tokenizer, [s.reply.text for s in group],
        {s.marker: [[r.text for r in e.replies] for e in s.episodes] for s in group},
        {(s.marker, j): e.judgment for s in group for j, e in enumerate(s.episodes)},
    )


# --- the agent loop, as verl's worker builds and calls it ------------------------------------------------------


@pytest.fixture(scope="module")
def magic_task(tmp_path_factory) -> Task:
    return write_games(tmp_path_factory.mktemp("magic-word"), "train", 1)[0]


def trainer_config(run_dir: Path | None, overrides: dict) -> DictConfigWrap:
    config = OmegaConf.create({
        "actor_rollout_ref": {"rollout": {"response_length": 4096, "prompt_length": 4096, "seed": 0}},
        "strata": {"num_stras_per_run": 4, "num_trajs_per_stra": 2, "num_cands_per_stra": 1,
                   "max_tokens_per_response": L_MAX, "diversity": {"embedder": "hashed_bow"}},
        # A step timeout no other test uses: the loop's environment pool is cached per argument set.
        "env": {"name": "magic_word", "num_workers": 1, "step_timeout_s": 61.5, "max_steps": MAGIC_STEPS,
                "normalize_actions": True, "reward": "success"},
        "algorithm": {"norm_adv_by_std_in_grpo": True},
        "run": {"dir": str(run_dir) if run_dir else None, "dump": {"train_every": 1, "validation": True}},
    })
    for key, value in overrides.items():
        OmegaConf.update(config, key, value, force_add=True)
    return DictConfigWrap(config)


@contextmanager
def agent(tokenizer, server, overrides: dict, run_dir: Path | None = None):
    """The agent loop built from the config; its environment pool is closed afterwards (ALFWorld, ScienceWorld)."""
    loop = agent_loop.StrataAgentLoop(trainer_config(run_dir, overrides), server, tokenizer, None, None,
                                      DictConfigWrap(OmegaConf.create({})))
    try:
        yield loop
    finally:
        if hasattr(loop.pool, "close"):
            loop.pool.close()
            agent_loop.make_environment.cache_clear()  # no later loop may get the closed pool


@dataclass
class Played:
    outputs: list  # verl's AgentLoopOutput, as the loop returns them
    rollout: object  # the TaskRollout the loop built them from
    server: ScriptedServer
    dumps: list[dict] = field(default_factory=list)

    def rows(self, role: str) -> list:
        return [o for o in self.outputs if o.extra_fields["strata_role"] == role]


def play(loop, task: Task, step: int = 1) -> Played:
    """One training call of the loop on ``task``; the rollout is captured on its way from `rollout_task`."""
    captured = []
    real_rollout_task = agent_loop.rollout_task

    async def spy(*args, **kwargs):
        captured.append(await real_rollout_task(*args, **kwargs))
        return captured[-1]

    extra_info = {"game_file": task.game_file, "task_type": task.task_type, "split": task.split, "index": task.index}
    with mock.patch.object(agent_loop, "rollout_task", spy):
        outputs = asyncio.run(loop.run({"temperature": 1.0}, extra_info=extra_info, global_steps=step))
    dumps = []
    if loop.dumps.settings.run_dir is not None:
        for path in sorted(Path(loop.dumps.settings.run_dir).glob(f"rollouts/train/step_{step:06d}-*.jsonl.gz")):
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                dumps += [json.loads(line) for line in handle]
    return Played(outputs, captured[0], loop.server_manager, dumps)


def play_group(tokenizer, task: Task, overrides: dict, group=GROUP, run_dir: Path | None = None,
               step: int = 1) -> Played:
    with agent(tokenizer, group_server(tokenizer, group), overrides, run_dir) as loop:
        return play(loop, task, step)


# --- the expected advantages, from docs/algorithm.md §2 ----------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """The switches that enter the advantages (docs/algorithm.md, symbols table and §2)."""

    delta: float = 0.5
    threshold: float = 0.5
    kappa: float = 0.1
    format_penalty: float = 1.0
    judge: bool = True
    post_norm: bool = True
    by_std: bool = True


def tokens_of(tokenizer, reply: Reply) -> tuple[int, bool]:
    """(L, truncated): the reply's tokens with its stop token, cut at L_max."""
    length = len(tokenizer.encode(reply.text, add_special_tokens=False)) + 1
    return min(length, L_MAX), length > L_MAX


def shaping(tokenizer, reply: Reply, s: Settings) -> float:
    """s(r) = clip(−f(r) − ℓ(r), −1, 0)."""
    length, truncated = tokens_of(tokenizer, reply)
    free = s.threshold * L_MAX
    if truncated:
        ell = 1.0
    elif length <= free:
        ell = 0.0
    else:
        ell = (length - free) / ((1 - s.threshold) * L_MAX)
    f = 0.0 if reply.well_formed else s.format_penalty
    return min(0.0, max(-1.0, -f - ell))


def normalise(values: list[float], by_std: bool) -> list[float]:
    """verl's GRPO normalisation within one group (unbiased std, ε); a lone member keeps mean 0, std 1."""
    mean, std = (0.0, 1.0) if len(values) == 1 else (sum(values) / len(values), statistics.stdev(values))
    return [(v - mean) / (std + EPS) if by_std else v - mean for v in values]


def top_mean(values: list[float], delta: float) -> float:
    k = max(1, math.floor(delta * len(values)))
    return sum(sorted(values, reverse=True)[:k]) / k


@dataclass
class Expected:
    strategy: dict[str, float]  # marker -> advantage of every strategy token
    score: dict[str, float]  # marker -> the strategy row's reward (S_i, or S̃_i in pre_norm)
    actions: dict[tuple[str | None, int], list[float]]  # (marker, j) -> advantage of each action reply


def expected_group(tokenizer, group, s: Settings) -> Expected:
    """Hierarchical GRPO of docs/algorithm.md §2 over the scripted group."""
    def step_penalties(episode: Episode) -> list[float]:
        flagged = set(episode.flagged) if s.judge else set()
        return [shaping(tokenizer, r, s) - (s.kappa if t in flagged else 0.0)
                for t, r in enumerate(episode.replies, start=1)]

    rewards = {st.marker: [1.0 if e.won else 0.0 for e in st.episodes] for st in group}
    penalties = {(st.marker, j): step_penalties(e) for st in group for j, e in enumerate(st.episodes)}
    if s.post_norm:
        scores = [top_mean(rewards[st.marker], s.delta) for st in group]
        base = normalise(scores, s.by_std)
        strategy = {st.marker: b + shaping(tokenizer, st.reply, s) for st, b in zip(group, base, strict=True)}
        actions = {}
        for st in group:
            for j, a in enumerate(normalise(rewards[st.marker], s.by_std)):
                actions[(st.marker, j)] = [a + p for p in penalties[(st.marker, j)]]
    else:  # pre_norm: penalties enter the rewards, every action of an episode shares one advantage
        penalised = {st.marker: [r + sum(penalties[(st.marker, j)]) for j, r in enumerate(rewards[st.marker])]
                     for st in group}
        scores = [top_mean(penalised[st.marker], s.delta) + shaping(tokenizer, st.reply, s) for st in group]
        strategy = dict(zip([st.marker for st in group], normalise(scores, s.by_std), strict=True))
        actions = {}
        for st in group:
            for j, a in enumerate(normalise(penalised[st.marker], s.by_std)):
                actions[(st.marker, j)] = [a] * len(st.episodes[j].replies)
    return Expected(strategy, dict(zip([st.marker for st in group], scores, strict=True)), actions)


# --- reading the rows back -------------------------------------------------------------------------------------


def trained(output) -> tuple[list[int], list[float]]:
    """The trained tokens of a row and their advantages (response_mask 1)."""
    mask = output.response_mask
    return ([t for t, m in zip(output.response_ids, mask, strict=True) if m],
            [a for a, m in zip(output.extra_fields["strata_advantages"], mask, strict=True) if m])


def strategy_rows(played: Played) -> dict[str, object]:
    """Strategy rows by the marker of the candidate each one trains (its response is that candidate's reply)."""
    replies = {tuple(c.response_ids): c for c in played.server.of("strategy")}
    rows = {}
    for output in played.rows("strategy"):
        call = replies[tuple(output.response_ids)]
        marker = next(m for m in played.server.markers if m in played.server.tokenizer.decode(call.response_ids))
        assert output.prompt_ids == call.prompt_ids  # the row's prompt is the one the reply answered
        rows[marker] = output
    return rows


def episode_of_trajectory_row(played: Played, output) -> tuple[str | None, int]:
    """The scripted episode whose multi-turn row this is: every action prompt the server got for it is a
    prefix of the row, followed by the reply it gave, and the row ends with the last reply."""
    sequence = output.prompt_ids + output.response_ids
    matches = []
    for episode in {c.episode for c in played.server.of("action")}:
        calls = played.server.actions_of(episode)
        if all(sequence[: len(c.prompt_ids)] == c.prompt_ids
               and sequence[len(c.prompt_ids): len(c.prompt_ids) + len(c.response_ids)] == c.response_ids
               for c in calls) and len(sequence) == len(calls[-1].prompt_ids) + len(calls[-1].response_ids):
            matches.append(episode)
    assert len(matches) == 1, f"row matches episodes {matches}"
    return matches[0]


def check_advantages(played: Played, expected: Expected) -> None:
    """Every strategy row and trajectory row carries the expected advantage on each of its trained tokens."""
    rows = strategy_rows(played)
    assert set(rows) == set(expected.strategy)
    for marker, output in rows.items():
        got, want = output.extra_fields["strata_advantages"], expected.strategy[marker]
        assert got == pytest.approx([want] * len(output.response_ids), abs=1e-5), \
            f"strategy {marker}: advantage {got[0]:.6f}, expected {want:.6f}"
        assert output.reward_score == pytest.approx(expected.score[marker], abs=1e-6), \
            f"strategy {marker}: score {output.reward_score:.6f}, expected {expected.score[marker]:.6f}"
    seen = set()
    for output in played.rows("trajectory"):
        episode = episode_of_trajectory_row(played, output)
        seen.add(episode)
        calls = played.server.actions_of(episode)
        tokens, advantages = trained(output)
        assert tokens == [t for c in calls for t in c.response_ids]  # exactly the replies are trained
        want = [a for c, a in zip(calls, expected.actions[episode], strict=True) for _ in c.response_ids]
        per_step = [advantages[sum(len(c.response_ids) for c in calls[:t])] for t in range(len(calls))]
        assert advantages == pytest.approx(want, abs=1e-5), \
            f"episode {episode}: step advantages {per_step}, expected {expected.actions[episode]}"
    assert seen == set(expected.actions)


# --- the script did what it says, and the penalties reach the advantages -------------------------------------


def test_the_scripted_group_has_every_kind_of_reply(qwen_tokenizer, magic_task):
    lengths = {reply: tokens_of(qwen_tokenizer, reply) for reply in (MALFORMED, LONG_LOOK, CUT_LOOK, CUT_MALFORMED)}
    assert lengths[LONG_LOOK][0] > 0.5 * L_MAX and not lengths[LONG_LOOK][1]  # over λ·L_max, finished
    assert lengths[CUT_LOOK] == (L_MAX, True) and lengths[CUT_MALFORMED] == (L_MAX, True)
    played = play_group(qwen_tokenizer, magic_task, {})
    rollout = played.rollout
    by_marker = {s.marker: s for s in GROUP}
    for strategy in rollout.strategies:
        script = next(by_marker[m] for m in MARKERS if m in strategy.candidate.generation.text)
        assert strategy.candidate.well_formed == script.reply.well_formed
        assert (strategy.candidate.generation.num_tokens, strategy.candidate.generation.truncated) == tokens_of(
            qwen_tokenizer, script.reply)
        for trajectory, episode in zip(strategy.trajectories, script.episodes, strict=True):
            assert trajectory.won == episode.won
            assert [(s.generation.num_tokens, s.generation.truncated) for s in trajectory.steps] == [
                tokens_of(qwen_tokenizer, r) for r in episode.replies]
            assert [s.well_formed for s in trajectory.steps] == [r.well_formed for r in episode.replies]
            assert trajectory.flagged_steps == list(episode.flagged)
    # Every reply kind is there, and the default settings give the hand-computed advantages.
    kinds = {(s.generation.truncated, s.well_formed) for t in rollout.trajectories for s in t.steps}
    assert kinds == {(False, True), (False, False), (True, True), (True, False)}
    check_advantages(played, expected_group(qwen_tokenizer, GROUP, Settings()))
    shaped = [a for o in played.rows("trajectory") for a in trained(o)[1]]
    assert min(shaped) < -1.0  # a penalty on top of a negative trajectory advantage: the shaping reached it


# --- strata.judge.enable and strata.judge.kappa -------------------------------------------------------------------


def test_judge_enable(qwen_tokenizer, magic_task, tmp_path):
    on = play_group(qwen_tokenizer, magic_task, {}, run_dir=tmp_path / "on")
    off = play_group(qwen_tokenizer, magic_task, {"strata.judge.enable": False}, run_dir=tmp_path / "off")
    assert len(on.server.of("judge")) == 8  # one self-judgment per episode, on the episode's own stream
    assert off.server.of("judge") == []  # switched off: the judge is never asked
    assert all(t.judge is None and t.flagged_steps == [] for t in off.rollout.trajectories)
    assert [t["judge"] is None for s in off.dumps[0]["strategies"] for t in s["trajectories"]] == [True] * 8
    assert sorted(f for s in on.dumps[0]["strategies"] for t in s["trajectories"]
                  for f in t["judge"]["flagged_steps"]) == [1, 1, 2, 2, 3]
    check_advantages(on, expected_group(qwen_tokenizer, GROUP, Settings(judge=True)))
    check_advantages(off, expected_group(qwen_tokenizer, GROUP, Settings(judge=False)))
    # ALPHA's second episode had its steps 1 and 2 flagged: −κ each, only with the judge on.
    on_steps = {episode_of_trajectory_row(on, o): trained(o)[1] for o in on.rows("trajectory")}
    off_steps = {episode_of_trajectory_row(off, o): trained(o)[1] for o in off.rows("trajectory")}
    first_token_of_step = [0, len(on.server.actions_of(("ALPHA", 1))[0].response_ids)]
    for i in first_token_of_step:
        assert on_steps[("ALPHA", 1)][i] - off_steps[("ALPHA", 1)][i] == pytest.approx(-0.1, abs=1e-6)
    assert on_steps[("ALPHA", 0)] == pytest.approx(off_steps[("ALPHA", 0)])  # nothing flagged there


def test_judge_kappa(qwen_tokenizer, magic_task):
    low = play_group(qwen_tokenizer, magic_task, {"strata.judge.kappa": 0.1})
    high = play_group(qwen_tokenizer, magic_task, {"strata.judge.kappa": 0.6})
    check_advantages(low, expected_group(qwen_tokenizer, GROUP, Settings(kappa=0.1)))
    check_advantages(high, expected_group(qwen_tokenizer, GROUP, Settings(kappa=0.6)))
    # CHARLIE's first episode, step 2 (a short well-formed "look", flagged): moves by exactly −0.5.
    low_row = next(o for o in low.rows("trajectory") if episode_of_trajectory_row(low, o) == ("CHARLIE", 0))
    high_row = next(o for o in high.rows("trajectory") if episode_of_trajectory_row(high, o) == ("CHARLIE", 0))
    step_2 = len(low.server.actions_of(("CHARLIE", 0))[0].response_ids)
    assert trained(high_row)[1][step_2] - trained(low_row)[1][step_2] == pytest.approx(-0.5, abs=1e-6)
    assert trained(high_row)[1][0] == pytest.approx(trained(low_row)[1][0])  # step 1 was not flagged


# --- strata.diversity.enable -----------------------------------------------------------------------------------


# Three rewordings of one plan (the same words: identical bag-of-words embeddings) and one different plan.
DIVERSE = ("candle say slowly", "say candle slowly", "slowly say candle", "zulu yankee xray")
FARTHEST_POINT = [0, 3]  # the most central candidate (a tie among 0-2: the lowest index), then the farthest


def random_pick(step: int, task: Task) -> list[int]:
    """What the seeded random draw keeps (spec §1.2's ablation) at ``step``: the loop's sampling seed is
    derived from rollout.seed (0), the step and the task, and the selection seed from that."""
    seed = derive_seed(derive_seed(0, step, task.split, task.index), "selection")
    return random.Random(seed).sample(range(len(DIVERSE)), 2)


def test_diversity_enable(qwen_tokenizer, magic_task):
    # A step at which the random draw keeps two rewordings, which farthest-point selection never would.
    step = next(s for s in range(1, 100) if 3 not in random_pick(s, magic_task))
    overrides = {"strata.num_stras_per_run": 2, "strata.num_cands_per_stra": 2, "strata.num_trajs_per_stra": 1,
                 "strata.judge.enable": False}
    results = {}
    for enable in (True, False):
        server = ScriptedServer(qwen_tokenizer, [f"<strategy>{text}</strategy>" for text in DIVERSE],
                                {text: [["<action>say candle</action>"]] for text in DIVERSE})
        with agent(qwen_tokenizer, server, {**overrides, "strata.diversity.enable": enable}) as loop:
            results[enable] = play(loop, magic_task, step)
    for enable, kept in ((True, FARTHEST_POINT), (False, random_pick(step, magic_task))):
        played = results[enable]
        assert played.rollout.kept == kept
        # the kept candidates, and only they, are played and trained
        assert sorted(e[0] for e in {c.episode for c in played.server.of("action")}) == sorted(DIVERSE[i] for i in kept)
        trained_replies = sorted(qwen_tokenizer.decode(o.response_ids) for o in played.rows("strategy"))
        assert trained_replies == sorted(f"<strategy>{DIVERSE[i]}</strategy><|im_end|>" for i in kept)
    assert set(results[True].rollout.kept) != set(results[False].rollout.kept)


# --- strata.penalty_mode, algorithm.norm_adv_by_std_in_grpo -----------------------------------------------------


def test_penalty_mode(qwen_tokenizer, magic_task):
    post = play_group(qwen_tokenizer, magic_task, {"strata.penalty_mode": "post_norm"})
    pre = play_group(qwen_tokenizer, magic_task, {"strata.penalty_mode": "pre_norm"})
    check_advantages(post, expected_group(qwen_tokenizer, GROUP, Settings(post_norm=True)))
    check_advantages(pre, expected_group(qwen_tokenizer, GROUP, Settings(post_norm=False)))
    # pre_norm: every action of an episode shares one advantage; post_norm: each step has its own penalty.
    for played, shared in ((pre, True), (post, False)):
        row = next(o for o in played.rows("trajectory") if episode_of_trajectory_row(played, o) == ("ALPHA", 1))
        assert (len(set(trained(row)[1])) == 1) == shared


def test_norm_adv_by_std(qwen_tokenizer, magic_task):
    by_std = play_group(qwen_tokenizer, magic_task, {"algorithm.norm_adv_by_std_in_grpo": True})
    mean_only = play_group(qwen_tokenizer, magic_task, {"algorithm.norm_adv_by_std_in_grpo": False})
    check_advantages(by_std, expected_group(qwen_tokenizer, GROUP, Settings(by_std=True)))
    check_advantages(mean_only, expected_group(qwen_tokenizer, GROUP, Settings(by_std=False)))
    # S = [1, 1, 1, 0] (δ·M = 1: the best reward): mean 0.75, std 0.5, so DELTA's Â(z) is −1.5 or −0.75,
    # plus its shaping (−1: malformed and cut).
    assert strategy_rows(by_std)["DELTA"].extra_fields["strata_advantages"][0] == pytest.approx(-2.5, abs=1e-5)
    assert strategy_rows(mean_only)["DELTA"].extra_fields["strata_advantages"][0] == pytest.approx(-1.75, abs=1e-6)


# --- strata.format_penalty, strata.length_penalty.threshold, strata.delta_coef ------------------------------------


def test_format_penalty(qwen_tokenizer, magic_task):
    full = play_group(qwen_tokenizer, magic_task, {"strata.format_penalty": 1.0})
    none = play_group(qwen_tokenizer, magic_task, {"strata.format_penalty": 0.0})
    check_advantages(full, expected_group(qwen_tokenizer, GROUP, Settings(format_penalty=1.0)))
    check_advantages(none, expected_group(qwen_tokenizer, GROUP, Settings(format_penalty=0.0)))
    # BRAVO's strategy reply is short and has no tag: f is its whole shaping.
    difference = (strategy_rows(full)["BRAVO"].extra_fields["strata_advantages"][0]
                  - strategy_rows(none)["BRAVO"].extra_fields["strata_advantages"][0])
    assert difference == pytest.approx(-1.0, abs=1e-6)


def test_length_penalty_threshold(qwen_tokenizer, magic_task):
    half = play_group(qwen_tokenizer, magic_task, {"strata.length_penalty.threshold": 0.5})
    free = play_group(qwen_tokenizer, magic_task, {"strata.length_penalty.threshold": 1.0})
    check_advantages(half, expected_group(qwen_tokenizer, GROUP, Settings(threshold=0.5)))
    check_advantages(free, expected_group(qwen_tokenizer, GROUP, Settings(threshold=1.0)))
    # CHARLIE's strategy reply is well formed and over λ·L_max: ℓ = (L − 32) / 32 at λ = 0.5, 0 at λ = 1.
    length, _ = tokens_of(qwen_tokenizer, GROUP[2].reply)
    difference = (strategy_rows(half)["CHARLIE"].extra_fields["strata_advantages"][0]
                  - strategy_rows(free)["CHARLIE"].extra_fields["strata_advantages"][0])
    assert difference == pytest.approx(-(length - 32) / 32, abs=1e-6)
    # a reply cut at L_max costs ℓ = 1 whatever λ is: BRAVO's second episode, step 1
    for played in (half, free):
        row = next(o for o in played.rows("trajectory") if episode_of_trajectory_row(played, o) == ("BRAVO", 1))
        first = trained(row)[1][0]
        assert first == pytest.approx(expected_group(qwen_tokenizer, GROUP, Settings()).actions[("BRAVO", 1)][0])


def test_delta_coef(qwen_tokenizer, magic_task):
    best = play_group(qwen_tokenizer, magic_task, {"strata.delta_coef": 0.5})
    mean = play_group(qwen_tokenizer, magic_task, {"strata.delta_coef": 1.0})
    check_advantages(best, expected_group(qwen_tokenizer, GROUP, Settings(delta=0.5)))
    check_advantages(mean, expected_group(qwen_tokenizer, GROUP, Settings(delta=1.0)))
    # rewards ALPHA [1, 1], BRAVO [0, 1], CHARLIE [0, 1], DELTA [0, 0]: S = [1, 1, 1, 0] with k = 1,
    # [1, 0.5, 0.5, 0] with k = 2 (the strategy rows' rewards).
    assert [strategy_rows(best)[m].reward_score for m in MARKERS] == [1.0, 1.0, 1.0, 0.0]
    assert [strategy_rows(mean)[m].reward_score for m in MARKERS] == [1.0, 0.5, 0.5, 0.0]
    # BRAVO ties ALPHA under δ = 0.5 (Â = +0.5) and sits at the mean under δ = 1 (Â = 0); shaping −1 on top.
    assert strategy_rows(best)["BRAVO"].extra_fields["strata_advantages"][0] == pytest.approx(-0.5, abs=1e-5)
    assert strategy_rows(mean)["BRAVO"].extra_fields["strata_advantages"][0] == pytest.approx(-1.0, abs=1e-5)


# --- strata.trajectory_rows and strata.prompts.history_window ----------------------------------------------------


def test_trajectory_rows(qwen_tokenizer, magic_task):
    multi = play_group(qwen_tokenizer, magic_task, {"strata.trajectory_rows": "multi_turn"})
    per_step = play_group(qwen_tokenizer, magic_task, {"strata.trajectory_rows": "per_step"})
    expected = expected_group(qwen_tokenizer, GROUP, Settings())
    num_steps = sum(len(e.replies) for s in GROUP for e in s.episodes)
    assert [o.extra_fields["strata_role"] for o in multi.outputs] == ["strategy"] * 4 + ["trajectory"] * 8
    assert [o.extra_fields["strata_role"] for o in per_step.outputs] == ["strategy"] * 4 + ["step"] * num_steps
    check_advantages(multi, expected)
    # per_step: each row is one action call, with the very prompt the policy answered and the reply it gave,
    # and that step's advantage on every token.
    calls = per_step.server.of("action")
    assert len(calls) == num_steps
    for output in per_step.rows("step"):
        call = next(c for c in calls if c.prompt_ids == output.prompt_ids and c.response_ids == output.response_ids)
        calls.remove(call)
        assert output.response_mask == [1] * len(call.response_ids)
        advantage = expected.actions[call.episode][call.step - 1]
        assert output.extra_fields["strata_advantages"] == pytest.approx([advantage] * len(call.response_ids),
                                                                         abs=1e-5)
        assert output.reward_score == (1.0 if GROUP[MARKERS.index(call.episode[0])].episodes[call.episode[1]].won
                                       else 0.0)
    assert calls == []
    # the multi-turn chat's later prompts hold the earlier turns; a per-step prompt is rendered afresh
    third = per_step.server.actions_of(("ALPHA", 1))[2]
    assert "[Step 2] Action: look" in third.prompt and "You are now at step 3" in third.prompt
    multi_third = multi.server.actions_of(("ALPHA", 1))[2]
    assert multi_third.prompt_ids[: len(multi.server.actions_of(("ALPHA", 1))[0].prompt_ids)] == \
        multi.server.actions_of(("ALPHA", 1))[0].prompt_ids
    assert "[Step 2]" not in multi_third.prompt


def test_history_window(qwen_tokenizer, magic_task):
    window = play_group(qwen_tokenizer, magic_task, {"strata.trajectory_rows": "per_step",
                                                      "strata.prompts.history_window": 1})
    full = play_group(qwen_tokenizer, magic_task, {"strata.trajectory_rows": "per_step"})
    # ALPHA's second episode: step 1 malformed (shown as its raw text), step 2 "look"; the prompt of step 3
    # shows the last step only with a window of 1, both without one.
    for played, shows_step_1 in ((window, False), (full, True)):
        third = played.server.actions_of(("ALPHA", 1))[2]
        assert "[Step 2] Action: look" in third.prompt
        assert ("[Step 1] Action: I am not sure what to do here." in third.prompt) == shows_step_1
        assert ("The most recent 1 step(s)" in third.prompt) != shows_step_1
        row = next(o for o in played.rows("step") if o.prompt_ids == third.prompt_ids)  # the row trains on it
        assert row.response_ids == third.response_ids
    # CHARLIE's first episode: the same cut at step 3
    assert "[Step 1]" not in window.server.actions_of(("CHARLIE", 0))[2].prompt
    assert "[Step 1]" in full.server.actions_of(("CHARLIE", 0))[2].prompt


# --- strata.algorithm=grpo ----------------------------------------------------------------------------------------


def test_algorithm_grpo(qwen_tokenizer, magic_task):
    # The same four episodes, as StraTA's two strategies (ALPHA, BRAVO; M = 2) or as one flat group of G = 4.
    group = GROUP[:2]
    episodes = [e for s in group for e in s.episodes]
    strata = play_group(qwen_tokenizer, magic_task, {"strata.num_stras_per_run": 2, "strata.judge.enable": False},
                        group=group)
    server = ScriptedServer(qwen_tokenizer, [], {None: [[r.text for r in e.replies] for e in episodes]})
    grpo = {"strata.algorithm": "grpo", "strata.num_stras_per_run": 1, "strata.num_cands_per_stra": 1,
            "strata.num_trajs_per_stra": 4, "strata.judge.enable": False, "strata.prompts.preset": "alfworld_grpo"}
    with agent(qwen_tokenizer, server, grpo) as loop:
        flat = play(loop, magic_task)
    # StraTA: strategies sampled and trained, trajectories normalised within each strategy
    assert len(strata.server.of("strategy")) == 2 and len(strata.rows("strategy")) == 2
    check_advantages(strata, expected_group(qwen_tokenizer, group, Settings(judge=False)))
    # GRPO: no strategy asked for, shown or trained; one normalisation over the four rewards [1, 1, 0, 1]
    assert flat.server.of("strategy") == [] and flat.rows("strategy") == []
    assert all("strategy" not in c.prompt.lower() for c in flat.server.calls)
    assert [o.extra_fields["strata_role"] for o in flat.outputs] == ["trajectory"] * 4
    rewards = [1.0 if e.won else 0.0 for e in episodes]
    base = normalise(rewards, by_std=True)
    assert base == pytest.approx([0.5, 0.5, -1.5, 0.5], abs=1e-5)
    for output in flat.rows("trajectory"):
        _, j = episode_of_trajectory_row(flat, output)
        calls = flat.server.actions_of((None, j))
        want = [base[j] + shaping(qwen_tokenizer, r, Settings())
                for r, c in zip(episodes[j].replies, calls, strict=True) for _ in c.response_ids]
        assert trained(output)[1] == pytest.approx(want, abs=1e-5)
        assert output.reward_score == rewards[j]


# --- env.normalize_actions on ALFWorld and ScienceWorld -----------------------------------------------------------


def formatted(command: str) -> str:
    """A command as a person would write it: a list bullet, capitals, a full stop."""
    return f"- {command.capitalize()}."


def test_normalize_actions_alfworld(qwen_tokenizer, bundled_valid_tasks, tmp_path):
    """The walkthrough written with a bullet, capitals and a full stop wins only when actions are normalised."""
    task = bundled_valid_tasks[0]
    max_steps = 6
    overrides = {"env.name": "alfworld", "env.max_steps": max_steps, "strata.num_stras_per_run": 2,
                 "strata.num_trajs_per_stra": 1, "strata.judge.enable": False}
    look = ["<action>look</action>"] * max_steps
    servers = {normalize: ScriptedServer(qwen_tokenizer, ["<strategy>FOLLOW the plan</strategy>",
                                                          "<strategy>LOOK around</strategy>"],
                                         {"FOLLOW": [[]], "LOOK": [look]})
               for normalize in (True, False)}

    async def walkthrough(pool) -> list[str]:
        async with pool.episode(task, with_walkthrough=True) as probe:
            return list(probe.walkthrough)

    with agent(qwen_tokenizer, servers[True], {**overrides, "env.normalize_actions": True}, tmp_path / "on") as on, \
            agent(qwen_tokenizer, servers[False], {**overrides, "env.normalize_actions": False},
                  tmp_path / "off") as off:
        commands = asyncio.run(walkthrough(on.pool))
        assert len(commands) < max_steps
        for server in servers.values():
            server.episodes["FOLLOW"] = [[f"<action>{formatted(c)}</action>" for c in commands] + look[len(commands):]]
        played = {normalize: play(loop, task) for normalize, loop in ((True, on), (False, off))}
    follow = {n: next(s for s in p.dumps[0]["strategies"] if "FOLLOW" in s["strategy"])["trajectories"][0]
              for n, p in played.items()}
    written = [f"<action>{formatted(c)}</action>" for c in commands]
    # normalised: the engine got the admissible commands, and the game was won at the walkthrough's end
    assert [s["command"] for s in follow[True]["steps"]] == commands
    assert [s["response"] for s in follow[True]["steps"]] == written
    assert all(s["admissible"] for s in follow[True]["steps"]) and follow[True]["won"]
    # as is: the engine got the written text, understood none of it, and the episode ran to the step cap
    unnormalised = follow[False]["steps"][: len(commands)]
    assert [s["command"] for s in unnormalised] == [formatted(c) for c in commands]
    assert [s["response"] for s in unnormalised] == written
    assert [s["observation"] for s in unnormalised] == ["Nothing happens."] * len(commands)
    assert not any(s["admissible"] for s in unnormalised)
    assert not follow[False]["won"] and follow[False]["num_steps"] == max_steps
    # the engine's answer is what the agent is shown next (the last user turn of its second prompt)
    shown = {n: p.server.actions_of(("FOLLOW", 0))[1].prompt.split("<|im_end|>")[-2] for n, p in played.items()}
    assert "Nothing happens." in shown[False] and "Nothing happens." not in shown[True]
    # R = [1, 0] against [0, 0]: only with normalisation do the strategies' advantages differ
    on_rows, off_rows = strategy_rows(played[True]), strategy_rows(played[False])
    assert on_rows["FOLLOW"].extra_fields["strata_advantages"][0] == pytest.approx(1 / math.sqrt(2), abs=1e-5)
    assert on_rows["LOOK"].extra_fields["strata_advantages"][0] == pytest.approx(-1 / math.sqrt(2), abs=1e-5)
    assert off_rows["FOLLOW"].extra_fields["strata_advantages"][0] == 0.0
    assert sorted(o.reward_score for o in played[True].rows("trajectory")) == [0.0, 1.0]
    assert [o.reward_score for o in played[False].rows("trajectory")] == [0.0, 0.0]


def test_normalize_actions_sciworld(qwen_tokenizer, tmp_path):
    """ScienceWorld's parser knows `look around`, not `- Look around.`: normalised, the step is understood."""
    task = Task(game_id("find-plant", 0), "find-plant", "train", 0)
    overrides = {"env.name": "sciworld", "env.max_steps": 2, "strata.num_stras_per_run": 1,
                 "strata.num_trajs_per_stra": 1, "strata.judge.enable": False, "strata.prompts.preset": "sciworld"}
    script = {"FOLLOW": [["<action>- Look around.</action>", "<action>look around</action>"]]}
    servers = {normalize: ScriptedServer(qwen_tokenizer, ["<strategy>FOLLOW: look first</strategy>"], script)
               for normalize in (True, False)}
    # both pools start their JVM at once
    with agent(qwen_tokenizer, servers[True], {**overrides, "env.normalize_actions": True}, tmp_path / "on") as on, \
            agent(qwen_tokenizer, servers[False], {**overrides, "env.normalize_actions": False},
                  tmp_path / "off") as off:
        played = {normalize: play(loop, task) for normalize, loop in ((True, on), (False, off))}
    on = played[True].dumps[0]["strategies"][0]["trajectories"][0]["steps"]
    off = played[False].dumps[0]["strategies"][0]["trajectories"][0]["steps"]
    assert [s["response"] for s in on] == [s["response"] for s in off] == [
        "<action>- Look around.</action>", "<action>look around</action>"]
    assert (on[0]["command"], on[0]["admissible"]) == ("look around", True)
    assert on[0]["observation"].startswith("This room is called the hallway")
    assert (off[0]["command"], off[0]["admissible"]) == ("- Look around.", False)
    assert off[0]["observation"] == "No known action matches that input."
    assert off[1]["observation"].startswith("This room is called the hallway")  # the plain command works either way
    # what the agent is shown after its first step
    second = {n: p.server.actions_of(("FOLLOW", 0))[1].prompt for n, p in played.items()}
    assert "No known action matches that input." in second[False]
    assert "No known action matches that input." not in second[True]
