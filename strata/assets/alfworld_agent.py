"""A tiny ALFWorld agent built offline: generated games, an exploring expert's traces, a supervised warm start.

Why: a random tiny model writes no well-formed tag, so on ALFWorld every reward is 0 and RL has nothing to
follow. This builds, from nothing and in minutes on a CPU, a small model that plays held-out generated pick
games through StraTA's two-level interface (a strategy, then one ``<action>`` per step), winning some and
losing others, so RL on ALFWorld has a signal and integration runs see varying rewards.

1. Games: ``train`` games for the traces, ``valid_seen`` games held out for evaluation, and ``rl_games`` more
   training games for RL that the warm start never sees, generated with recorded seeds
   (`strata.envs.alfworld.gen.generate.generate_split`; a game's stream is keyed by seed, split and index, so the RL
   games, drawn with ``game_seed + 1``, share no game with the other two).
2. Traces: the exploring expert (`strata.envs.alfworld.explorer`) plays every training game ``orders_per_game`` times,
   each time with another search order as its strategy (the listed one or its reverse, or random ones),
   through the real engine in worker processes.
3. Examples, rendered by the rollout's own prompt builders and chat tokenisation with the compact preset and
   per-step rows: strategy prompt -> ``<strategy>...</strategy>``; each step's action prompt (task,
   strategy, last ``history_window`` steps, observation, admissible actions) -> ``<action>...</action>``;
   the judge prompt of a won trace -> ``<judgment>[]</judgment>`` (every step of the expert's helped).
4. A tokenizer of the agent's own, trained on those dialogues (2,048 entries, Qwen2.5's chat template and
   special tokens: `strata.assets.tokenizer.build_game_tokenizer`), so that RL steps on a CPU are not spent
   on 151,665-way softmaxes; then a warm start of a from-scratch width-64 Qwen2, loss on response tokens
   only (`strata.assets.warm_start.fit_responses`).
5. Evaluation through the trainer's validation path (`strata.assets.local_policy`): on the held-out games, and on
   the first ``rl_eval_games`` RL games (the learning benchmark's fixed training set), the training-side reading
   by which one build is chosen over another.

Layout of ``root`` (task lists hold absolute paths: do not move it):

    data/json_2.1.1/{train,valid_seen}/   the games
    rl_data/json_2.1.1/train/             the RL games (when ``rl_games`` > 0)
    train.parquet, valid_seen.parquet     task lists for the trainer: the warm start's games, the held-out ones
    rl_train.parquet                      the RL games' task list (the benchmark recipe's training games)
    tokenizer/                            the agent's tokenizer
    tiny/                                 the random model the warm start begins from
    model/                                the agent (``actor_rollout_ref.model.path``)
    agent.json                            settings, seeds, expert and agent success, timings; written
                                          last, so its presence means the folder is complete
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from strata.assets.tokenizer import QWEN25_DEFAULT_SYSTEM, build_game_tokenizer
from strata.assets.warm_start import Example
from strata.core.config import FLAT_ALGORITHMS, JudgeConfig, PromptConfig, StrataConfig
from strata.core.prompting import (
    Message,
    PromptTemplates,
    build_action_messages,
    build_judge_messages,
    build_strategy_messages,
)
from strata.envs.alfworld.explorer import ExploringExpert, receptacles_in_view
from strata.envs.pool import EnvPool
from strata.envs.tasks import Task
from strata.report.situations import situation_table
from strata.workflow.chat import ChatTokens
from strata.workflow.dump import task_record
from strata.workflow.records import TaskRollout

logger = logging.getLogger(__name__)

MANIFEST = "agent.json"
PRESET = "alfworld_compact"
VALIDATION_SAMPLING = {"temperature": 0.7, "top_p": 0.8, "top_k": 20}  # the trainer's val_kwargs (spec §3)


MIXTURE_SHARES = {"action": 16, "action_grpo": 10, "strategy": 4, "judge": 2}
"""Examples of each kind per batch of 32 by default: StraTA's actions (what decides a game), the flat baseline's
actions, strategies, judgments. `AgentRecipe.action_shares` changes the first two."""


@dataclass(frozen=True)
class AgentRecipe:
    """What `build_alfworld_agent` builds; every field is recorded in ``agent.json``."""

    task_types: tuple[str, ...] = ("pick",)
    train_games: int = 200
    valid_games: int = 100
    # Games RL trains on, unseen by the warm start: on its own training games the agent has memorised the
    # expert's plans, so RL there can improve recall without improving play on new layouts (StraTA at lr 3e-4:
    # training success 35% -> 44%, held-out flat; benchmarks/RESULTS_alfworld_learning.md). 0: none.
    # Enough for 50 steps of 4 tasks (the benchmark's runs took 10-30); session 13-18's runs drew from 400
    # (`--rl-games 400`), which cost the build ~60 s more.
    rl_games: int = 200
    # The first games of rl_train played once more after the warm start, as the benchmark's ``train_fixed`` set
    # (64): a training-side reading of the new agent, so that a choice between builds never reads held-out games.
    rl_eval_games: int = 64
    game_seed: int = 0
    orders_per_game: int = 2
    # "listed": the game's listing, then its reverse (`ExploringExpert.for_game`): two plans the model can learn
    # (held-out success 29% vs 1% for a random order per trace, benchmarks/RESULTS_alfworld_learning.md);
    # "random": a new order per trace.
    search_order: str = "listed"
    slip_rate: float = 0.15
    # Chance that the expert, at a receptacle without the object, first tries to take it there, as the tiny agent
    # does (`ExploringExpert.misplaced_take`; once a place, a slip: history, never a target), so that the warm start
    # shows the search going on after "Nothing happens." instead of the take repeated. Off: at 0.3 the agent won
    # 18.8% of 64 RL training games against 26.6% without (it traded the repeated takes for repeated `go to` the
    # place it stands at; benchmarks/RESULTS_alfworld_learning.md, "Misplaced takes in the warm start").
    misplaced_take_rate: float = 0.0
    max_steps: int = 15
    history_window: int = 2
    max_tokens_per_response: int = 96
    hidden_size: int = 64  # the MLP's width is twice this
    num_layers: int = 4
    steps: int = 1500
    batch_size: int = 32
    lr: float = 3e-3
    # The agent's own tokenizer, trained on its training dialogues (`strata.assets.tokenizer.build_game_tokenizer`):
    # ~75x cheaper log-prob passes than Qwen2.5's 151,665 entries. None: the real Qwen2.5 tokenizer, where
    # `negatives` makes the warm start's softmax a sample (`strata.assets.warm_start.SampledSoftmax`).
    vocab_size: int | None = 2048
    negatives: int | None = None
    seed: int = 0
    workers: int = 2
    # Action examples a batch of 32 holds with StraTA's prompts and with the flat baselines' strategy-free prompts.
    # The default practises StraTA's more, and GRPO starts 7.3 held-out points below StraTA from such an agent
    # (benchmarks/RESULTS_alfworld_learning.md); equal shares (13, 13) give the two algorithms the same start.
    action_shares: tuple[int, int] = (MIXTURE_SHARES["action"], MIXTURE_SHARES["action_grpo"])

    def __post_init__(self) -> None:
        room = 32 - MIXTURE_SHARES["strategy"] - MIXTURE_SHARES["judge"]
        if len(self.action_shares) != 2 or min(self.action_shares) < 1 or sum(self.action_shares) > room:
            raise ValueError(f"action_shares {tuple(self.action_shares)}: two shares of at least 1 whose sum is at "
                             f"most {room} (a batch of 32 also holds strategies and judgments)")
        for name in ("task_types", "action_shares"):  # agent.json's lists, read back
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def mixture_shares(self) -> dict[str, int]:
        """Examples of each kind per batch of 32 (`training_mixture`)."""
        strata_actions, flat_actions = self.action_shares
        return {**MIXTURE_SHARES, "action": strata_actions, "action_grpo": flat_actions}

    def strata_config(self, algorithm: str = "strata") -> StrataConfig:
        """The ``strata`` settings the agent is trained for (and the benchmark runs with); ``grpo`` or ``gigpo``: a
        flat baseline's (`configs/baseline/`) strategy-free group with the compact preset's strategy-free prompts."""
        baseline = algorithm in FLAT_ALGORITHMS
        prompts = PromptConfig(preset=f"{PRESET}_grpo" if baseline else PRESET, history_window=self.history_window)
        return StrataConfig(algorithm=algorithm, trajectory_rows="per_step",
                            max_tokens_per_response=self.max_tokens_per_response, prompts=prompts,
                            **({"num_stras_per_run": 1, "num_cands_per_stra": 1, "judge": JudgeConfig(enable=False)}
                               if baseline else {}))


@dataclass
class Trace:
    """One expert episode: what the agent saw and did at every step."""

    task: Task
    task_description: str
    initial_observation: str
    initial_admissible: tuple[str, ...]
    strategy: str
    steps: list[TraceStep] = field(default_factory=list)
    won: bool = False


@dataclass(frozen=True)
class TraceStep:
    """One step of a trace; a ``slip`` is a deliberate mistake the agent must learn to recover from, never a
    target."""

    action: str
    observation: str
    admissible: tuple[str, ...]
    slip: bool = False
    misplaced_take: bool = False  # a slip that is `ExploringExpert.misplaced_take`


def slip_action(admissible: tuple[str, ...], rng: random.Random) -> str:
    """A step that changes nothing in the game: what a small model does when unsure (a look, the inventory,
    or a garbled command that the game answers with "Nothing happens.")."""
    garbled = f"{rng.choice(admissible)} from {rng.choice(receptacles_in_view(admissible) or ['it'])}"
    return rng.choice(["look", "inventory", garbled, garbled])


async def expert_traces(pool: EnvPool, tasks: list[Task], orders_per_game: int, seed: int,
                        slip_rate: float = 0.0, search_order: str = "random",
                        misplaced_take_rate: float = 0.0) -> list[Trace]:
    """``orders_per_game`` expert episodes per task, each with its own search order (seeded, or the k-th
    listed plan: `ExploringExpert.for_game`); after the first step, each step is a `slip_action` with
    probability ``slip_rate``; at each searched receptacle without the object, the expert first tries the
    `ExploringExpert.misplaced_take` there with probability ``misplaced_take_rate`` (a slip as well).

    Why slips: an expert that never errs shows only states on its own path, so a model that makes one
    mistake ("Nothing happens.") has never seen where it is then, and repeats it (measured: most lost
    held-out games of a slip-free agent were such loops).

    A game's episodes run one after another, so each after the first finds an engine that holds its game and
    only resets it: a load is 0.27 s of textworld parsing, ~40% of an episode's engine time."""
    limit = asyncio.Semaphore(4 * pool.num_workers)

    async def one(task: Task, order: int) -> Trace:
        async with pool.episode(task) as episode:
            if episode.failure is not None:
                raise RuntimeError(f"could not start {task.game_file}: {episode.failure}")
            rng = random.Random(f"{seed}/{task.index}/{order}")
            expert = ExploringExpert.for_game(task.game_file, episode.admissible_commands, rng, search_order, order)
            trace = Trace(task, episode.task_description, episode.initial_observation,
                          tuple(episode.admissible_commands), expert.strategy)
            tried: set[str] = set()
            while not episode.done:
                admissible = tuple(episode.admissible_commands)
                misplaced = expert.misplaced_take(admissible)
                if misplaced_take_rate and misplaced and misplaced not in tried and rng.random() < misplaced_take_rate:
                    tried.add(misplaced)
                    action, slip = misplaced, True
                else:
                    slip = bool(trace.steps) and rng.random() < slip_rate
                    action = slip_action(admissible, rng) if slip else expert.act(admissible)
                result = await episode.step(action)
                trace.steps.append(TraceStep(action, result.observation, tuple(result.admissible_commands), slip,
                                             action == misplaced))
            trace.won = episode.outcome().won
            return trace

    async def game(task: Task) -> list[Trace]:
        async with limit:
            return [await one(task, order) for order in range(orders_per_game)]

    return [trace for traces in await asyncio.gather(*map(game, tasks)) for trace in traces]


Dialogue = tuple[list[Message], str]
"""A prompt's chat messages and the response that should follow them."""


def trace_dialogues(templates: PromptTemplates, baseline_templates: PromptTemplates, traces: list[Trace],
                    window: int) -> dict[str, list[Dialogue]]:
    """The supervised dialogues of the won traces, rendered exactly as the per-step rollout renders its
    prompts: ``action`` with the strategy in the prompt (StraTA), ``action_grpo`` without (the flat GRPO
    baseline's ``baseline_templates``), so one agent starts both algorithms of the benchmark. Slips are shown
    in the history but never targets; the judgment flags exactly the slips."""
    dialogues: dict[str, list[Dialogue]] = {"strategy": [], "action": [], "action_grpo": [], "judge": []}
    for trace in (t for t in traces if t.won):
        dialogues["strategy"].append((
            build_strategy_messages(templates, trace.task_description, trace.initial_observation),
            f"<strategy>{trace.strategy}</strategy>"))
        observation, admissible = trace.initial_observation, trace.initial_admissible
        history: list[tuple[str, str]] = []
        for step in trace.steps:
            for kind, kind_templates in (("action", templates), ("action_grpo", baseline_templates)):
                if step.slip:
                    break
                messages = build_action_messages(kind_templates, trace.task_description, trace.strategy, history,
                                                 observation, admissible, window=window)
                dialogues[kind].append((messages, f"<action>{step.action}</action>"))
            history.append((step.action, step.observation))
            observation, admissible = step.observation, step.admissible
        flagged = [number for number, step in enumerate(trace.steps, start=1) if step.slip]
        dialogues["judge"].append((build_judge_messages(templates, trace.task_description, trace.strategy, history),
                                   f"<judgment>{flagged}</judgment>"))
    return dialogues


def dialogue_texts(dialogues: dict[str, list[Dialogue]]) -> Iterator[str]:
    """Every text of the dialogues (the corpus of the agent's own tokenizer), with the chat template's
    default system prompt."""
    yield QWEN25_DEFAULT_SYSTEM
    for items in dialogues.values():
        for messages, response in items:
            yield from (m["content"] for m in messages)
            yield response


def tokenize_dialogues(chat: ChatTokens, dialogues: dict[str, list[Dialogue]]) -> dict[str, list[Example]]:
    """Each dialogue as the rollout tokenises it: the chat-template prompt, then the response and EOS."""
    eos = chat.tokenizer.eos_token_id
    return {kind: [Example(chat.prompt(messages), chat.tokenizer.encode(response, add_special_tokens=False) + [eos])
                   for messages, response in items]
            for kind, items in dialogues.items()}


GAME_FOLDERS = {"train": "data", "valid_seen": "data", "rl_train": "rl_data"}
"""Where each task list's games live under the agent's folder."""


def game_sets(recipe: AgentRecipe) -> list[tuple[str, str, int, int]]:
    """(task list name, ALFWorld split, games, seed) of every game set the agent's folder holds."""
    sets = [("train", "train", recipe.train_games, recipe.game_seed),
            ("valid_seen", "valid_seen", recipe.valid_games, recipe.game_seed)]
    if recipe.rl_games:
        sets.append(("rl_train", "train", recipe.rl_games, recipe.game_seed + 1))
    return sets


def training_mixture(examples: dict[str, list[Example]], recipe: AgentRecipe,
                     relabelled: dict[str, list[Example]] | None = None) -> list[tuple[list[Example], int]]:
    """`strata.assets.warm_start.fit_responses`'s mixture: the recipe's shares (`AgentRecipe.mixture_shares`) of
    its batch. With ``relabelled`` examples of a kind (DAgger's labels of the agent's own states,
    `strata.assets.dagger`), half of that kind's share is drawn from them: the expert's states keep what the agent
    already does right."""
    mixture = []
    for kind, share in recipe.mixture_shares().items():
        extra = (relabelled or {}).get(kind)
        count = recipe.batch_size * share // 32
        mixture += [(examples[kind], count - count // 2), (extra, count // 2)] if extra else [(examples[kind], count)]
    return mixture


def machine() -> dict[str, Any]:
    """The CPU model, core count and torch version: a build is deterministic on one machine, not across CPU models
    (one recipe gave 29.7% and 23.4% on its RL games on two; benchmarks/RESULTS_alfworld_learning.md)."""
    import os
    import platform

    import torch

    cpuinfo = Path("/proc/cpuinfo")
    names = [line.split(":", 1)[1].strip() for line in
             (cpuinfo.read_text(encoding="utf-8").splitlines() if cpuinfo.is_file() else [])
             if line.startswith("model name")]
    return {"cpu": names[0] if names else platform.processor(), "cpus": os.cpu_count(), "torch": torch.__version__}


def situations(tasks: list[Task], rollouts: list[TaskRollout], algorithm: str) -> dict[str, list[int]]:
    """`strata.report.situations.situation_table` of evaluation rollouts, keyed for JSON."""
    records = [task_record("valid", 0, algorithm, task, rollout, None)
               for task, rollout in zip(tasks, rollouts, strict=True)]
    return {f"{verb}, object {'in view' if in_view else 'not in view'}": [admitted, total]
            for (verb, in_view), (admitted, total) in situation_table(records).items()}


def play_summary(name: str, tasks: list[Task], rollouts: list[TaskRollout], algorithm: str) -> dict[str, Any]:
    """What one evaluation of the built agent measured, keyed ``<name>_<measure>`` for ``agent.json``: success,
    well-formed and refused-repeat shares of its steps (`count_refused_repeats`: the loop that decides most lost
    games), and the admissible rate by situation."""
    trajectories = [t for r in rollouts for s in r.strategies for t in s.trajectories]
    steps = max(1, sum(len(t.steps) for t in trajectories))
    return {f"{name}_success": round(sum(t.won for t in trajectories) / len(trajectories), 4),
            f"{name}_well_formed_actions": round(sum(s.action is not None for t in trajectories for s in t.steps)
                                                 / steps, 4),
            f"{name}_refused_repeat_rate": round(sum(t.refused_repeats for t in trajectories) / steps, 4),
            # Per game, in task order: what a paired comparison of two agents on these games reads.
            f"{name}_won": [int(any(t.won for t in r.trajectories)) for r in rollouts],
            # Where its actions are refused: "<verb>, object in view|not in view" -> [admitted, steps].
            f"{name}_situations": situations(tasks, rollouts, algorithm)}


def evaluate_agent(model: Path, recipe: AgentRecipe, held_out: list[Task], train_fixed: list[Task],
                   pool: EnvPool) -> dict[str, Any]:
    """What the trainer's validation measures at step 0 (spec §3: one strategy and one episode per game, T=0.7), on
    the held-out games and on the benchmark's fixed RL training games: `play_summary` of each non-empty set."""
    from strata.assets.local_policy import play_evaluation

    config = recipe.strata_config()
    summaries: dict[str, Any] = {}
    for name, tasks in (("held_out", held_out), ("train_fixed", train_fixed)):
        if tasks:
            rollouts = asyncio.run(play_evaluation(model, tasks, config, pool, recipe.max_steps, VALIDATION_SAMPLING,
                                                   seed=recipe.seed))
            summaries |= play_summary(name, tasks, rollouts, config.algorithm)
    return summaries


def build_alfworld_agent(root: str | Path, recipe: AgentRecipe = AgentRecipe()) -> Path:
    """Build the agent under ``root`` (see the module docstring) and return ``root``."""
    from transformers import AutoTokenizer

    from strata.assets.tiny_model import build_tiny_model
    from strata.assets.warm_start import fit_responses
    from strata.envs.alfworld.gen.generate import generate_split
    from strata.envs.task_list import write_task_list

    root = Path(root).resolve()
    (root / MANIFEST).unlink(missing_ok=True)  # an interrupted rebuild must not look complete
    seconds: dict[str, float] = {}
    began = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal began
        seconds[name] = round(time.perf_counter() - began, 1)
        logger.info("%s: %.0f s", name, seconds[name])
        began = time.perf_counter()

    splits = {}
    for name, split, count, seed in game_sets(recipe):
        games = generate_split(root / GAME_FOLDERS[name], split, count, seed=seed, task_types=recipe.task_types,
                               workers=recipe.workers)
        splits[name] = [Task(g.game_file, g.task_type, split, i) for i, g in enumerate(games)]
        write_task_list(splits[name], root / f"{name}.parquet")
    lap("games")

    config = recipe.strata_config()
    with EnvPool(num_workers=recipe.workers, max_steps=recipe.max_steps) as pool:
        traces = asyncio.run(expert_traces(pool, splits["train"], recipe.orders_per_game, recipe.seed,
                                           recipe.slip_rate, recipe.search_order, recipe.misplaced_take_rate))
        lap("traces")
        dialogues = trace_dialogues(config.prompts.templates(), recipe.strata_config("grpo").prompts.templates(),
                                    traces, recipe.history_window)
        tokenizer = None if recipe.vocab_size is None else build_game_tokenizer(
            root / "tokenizer", dialogue_texts(dialogues), recipe.vocab_size)
        tiny = build_tiny_model(root / "tiny", seed=recipe.seed, tokenizer_dir=tokenizer,
                                hidden_size=recipe.hidden_size, intermediate_size=2 * recipe.hidden_size,
                                num_hidden_layers=recipe.num_layers)
        examples = tokenize_dialogues(ChatTokens(AutoTokenizer.from_pretrained(tiny)), dialogues)
        fit_responses(tiny, root / "model", training_mixture(examples, recipe), recipe.steps, recipe.lr,
                      recipe.seed, recipe.negatives)
        lap("warm_start")
        summaries = evaluate_agent(root / "model", recipe, splits["valid_seen"],
                                   splits.get("rl_train", [])[:recipe.rl_eval_games], pool)
        lap("evaluation")

    manifest = {
        "recipe": asdict(recipe),
        "splits": {name: {"split": split, "games": count, "seed": seed, "folder": GAME_FOLDERS[name]}
                   for name, split, count, seed in game_sets(recipe)},
        "expert": {"traces": len(traces), "won": sum(t.won for t in traces),
                   "mean_steps": round(sum(len(t.steps) for t in traces) / max(1, len(traces)), 2),
                   "slips": sum(s.slip for t in traces for s in t.steps),
                   "misplaced_takes": sum(s.misplaced_take for t in traces for s in t.steps)},
        "examples": {kind: len(items) for kind, items in examples.items()},
        **summaries,
        "seconds": seconds,
        "machine": machine(),
    }
    (root / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return root
