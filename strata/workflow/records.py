"""Typed records of one task's rollout: generations, steps, trajectories, strategy groups.

The strategy level is explicit (a `StrategyRollout` owns its trajectories), and every metric and
every training row is computed from these records, never from counters kept on the side.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

from strata.core.rewards import outcome_reward


@dataclass(frozen=True)
class Generation:
    """One response of the policy.

    Args:
        prompt_ids: the tokens the model was conditioned on.
        token_ids: the tokens it generated (ending with a stop token unless truncated).
        logprobs: per generated token, from the rollout server.
        text: ``token_ids`` decoded without special tokens.
        truncated: generation hit the per-response token budget before a stop token.
        weights_version: the training step whose weights generated it (verl's ``global_steps``), used by
            verl's staleness bookkeeping.
    """

    prompt_ids: list[int]
    token_ids: list[int]
    logprobs: list[float] | None
    text: str
    truncated: bool
    weights_version: int | None = None

    @property
    def num_tokens(self) -> int:
        return len(self.token_ids)


@dataclass(frozen=True)
class StrategyCandidate:
    """A sampled strategy response; ``strategy`` is the text inside ``<strategy>``, None if malformed."""

    generation: Generation
    strategy: str | None

    @property
    def well_formed(self) -> bool:
        return self.strategy is not None

    @property
    def text_for_conditioning(self) -> str:
        """What later prompts show as the strategy: the tag's content, or the raw text when malformed."""
        return self.strategy if self.strategy is not None else self.generation.text.strip()


@dataclass(frozen=True)
class Step:
    """One action response and its effect.

    Args:
        generation: the action response.
        action: the text inside ``<action>``, None if malformed (the environment was not stepped).
        observation: what the agent was told next (the engine's text, or the malformed-answer notice).
        command: what the environment sent to the engine for ``action`` (the admissible command it was
            mapped to, see `strata.envs.actions`); None when the environment was not stepped.
        admissible: ``command`` was among the admissible actions shown; None when not stepped.
        env_tokens: tokens of the environment turn that followed this response in the trajectory row.
    """

    generation: Generation
    action: str | None
    observation: str
    command: str | None = None
    admissible: bool | None = None
    env_tokens: list[int] = field(default_factory=list)

    @property
    def well_formed(self) -> bool:
        return self.action is not None


def count_refused_repeats(moves: Iterable[tuple[str | None, bool | None]]) -> int:
    """Steps, given as (command sent or None, admitted or None), that send again the command the environment just
    refused: a loop, since a refused action ("Nothing happens.") leaves the game as it was.

    Why count them: the tiny ALFWorld agent spends 56% of its steps this way on its RL games at validation sampling
    (T = 0.7), and 13-29% at training sampling (T = 1.0), so the loop that decides evaluation is rare in what
    training sees (benchmarks/RESULTS_alfworld_learning.md)."""
    return sum(repeats_refusal(previous, admitted, command)
               for (previous, admitted), (command, _) in itertools.pairwise(moves))


def repeats_refusal(previous: str | None, previous_admitted: bool | None, command: str | None) -> bool:
    """Whether ``command`` sends again the command ``previous`` that the environment just refused (see
    `count_refused_repeats`)."""
    return command is not None and previous_admitted is False and command == previous


@dataclass
class Trajectory:
    """One episode conditioned on one strategy.

    Args:
        prompt_ids: the first action prompt (task, strategy, initial observation, admissible actions).
        steps: the responses in order; step t is ``steps[t-1]``.
        won: the environment's ``won`` at the end.
        end_reason: why it ended: won, step_limit, lost, token_budget, or an environment failure reason.
        score: the environment's last normalised progress score (`strata.envs.records.StepResult.score`),
            None where it has none (ALFWorld) or no step reached it.
        reward_mode: how R(τ) is computed from ``won`` and ``score`` (``env.reward``:
            `strata.core.rewards.outcome_reward`); ``success``, the spec's default, is ``1.0 if won else 0.0``.
        flagged_steps: I(τ), 1-based steps the self-judgment flagged (empty when no judge ran).
        judge_parsed: False when the judge's answer could not be parsed (it then flags nothing).
        judge: the judge generation, kept for inspection (never trained on).
    """

    prompt_ids: list[int]
    steps: list[Step] = field(default_factory=list)
    won: bool = False
    end_reason: str = ""
    score: float | None = None
    reward_mode: str = "success"
    flagged_steps: list[int] = field(default_factory=list)
    judge_parsed: bool | None = None
    judge: Generation | None = None

    @property
    def reward(self) -> float:
        return outcome_reward(self.won, self.score, self.reward_mode)

    @property
    def progress(self) -> float | None:
        """The environment's progress score as a reward in [0, 1] (1 when won), whatever ``reward_mode`` is:
        what the ``score`` metrics average. None where the environment reports no score."""
        return None if self.score is None else outcome_reward(self.won, self.score, "score")

    @property
    def num_steps(self) -> int:
        return len(self.steps)

    @property
    def refused_repeats(self) -> int:
        """`count_refused_repeats` of this episode's steps."""
        return count_refused_repeats((step.command, step.admissible) for step in self.steps)

    def anchors(self, initial_observation: str, last_admitted: bool = False) -> list[str]:
        """The observation each step's action was chosen on (GiGPO's anchors): ``initial_observation`` (the
        engine's first text) for step 1, the previous step's observation after it.

        ``last_admitted``: the observation after the last step the environment admitted instead. A refused action
        ("Nothing happens.") or a malformed reply changes nothing in the game, so the state is still the one that
        observation described, and two steps in the same room compare even when one follows a refusal."""
        anchors, current = [], initial_observation
        for step in self.steps:
            anchors.append(current)
            if not last_admitted or step.admissible:
                current = step.observation
        return anchors


@dataclass
class StrategyRollout:
    """A kept strategy and the M trajectories executed under it.

    ``candidate`` is None for the flat GRPO baseline (``strata.algorithm=grpo``): its one group of
    trajectories is played without a strategy, and no strategy row is trained.
    """

    candidate: StrategyCandidate | None
    trajectories: list[Trajectory] = field(default_factory=list)

    @property
    def strategy(self) -> str | None:
        """The text the trajectories were conditioned on (None: no strategy)."""
        return self.candidate.text_for_conditioning if self.candidate is not None else None


@dataclass
class TaskRollout:
    """Everything one task produced in one training (or validation) step.

    Args:
        candidates: all σ·N sampled strategy candidates, in sampling order.
        kept: indices into ``candidates`` of the N kept strategies, in selection order.
        strategies: one `StrategyRollout` per kept strategy, same order as ``kept``.
        selection_seconds: wall time of embedding + farthest-point selection.
        nearest_kept_cosine: per candidate, its cosine to the most similar other kept candidate (None where
            nothing was embedded); see `strata.core.diversity.Selection`.
        task_description: the goal sentence the task showed.
        initial_observation: the engine's first text.
    """

    candidates: list[StrategyCandidate]
    kept: list[int]
    strategies: list[StrategyRollout]
    selection_seconds: float = 0.0
    nearest_kept_cosine: list[float | None] = field(default_factory=list)
    task_description: str = ""
    initial_observation: str = ""

    @property
    def trajectories(self) -> list[Trajectory]:
        return [t for s in self.strategies for t in s.trajectories]
