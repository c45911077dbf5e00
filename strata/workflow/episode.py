"""One episode as an explicit state machine: act -> environment -> ... -> (judge) -> done.

The episode is a multi-turn chat: the first action prompt shows the task, the strategy, the initial
observation and the admissible actions; every later user turn shows the new observation and the
admissible actions. Each episode runs on its own (asyncio task), so a finished episode never costs a
generation while others are still playing.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass

from strata.core.parsing import extract_tag, parse_judgment
from strata.core.prompting import PromptTemplates, build_action_messages, build_judge_messages, prompt_fits
from strata.core.rewards import REWARD_MODES
from strata.envs.records import REASON_LOST, REASON_STEP_LIMIT, REASON_WON
from strata.workflow.chat import ChatTokens
from strata.workflow.policy import Policy
from strata.workflow.records import Step, Trajectory

logger = logging.getLogger(__name__)

REASON_TOKEN_BUDGET = "token_budget"


class Phase(enum.Enum):
    ACT = "act"
    JUDGE = "judge"
    DONE = "done"


@dataclass(frozen=True)
class EpisodeLimits:
    """Budgets and settings of one episode.

    Args:
        max_steps: H, responses per episode (a malformed response costs a step too). Spec: 50.
        response_budget: tokens a multi-turn trajectory row may hold after its first prompt (verl's
            ``rollout.response_length``); the episode stops before a turn that could overflow it.
        prompt_tokens: budget of one re-rendered prompt (verl's ``rollout.prompt_length``): the judge
            prompt, and each step's action prompt in ``per_step`` mode.
        per_step: re-render the action prompt at every step (``strata.trajectory_rows=per_step``)
            instead of continuing one chat.
        history_window: steps shown in a re-rendered action prompt (None: all that fit).
        reward_mode: how the trajectory's R(τ) is computed (``env.reward``: success or score,
            `strata.core.rewards.outcome_reward`).
    """

    max_steps: int
    response_budget: int
    prompt_tokens: int
    per_step: bool = False
    history_window: int | None = None
    reward_mode: str = "success"

    def __post_init__(self) -> None:
        if self.reward_mode not in REWARD_MODES:
            raise ValueError(f"unknown env.reward {self.reward_mode!r}; valid: {', '.join(REWARD_MODES)}")

    def room_for_response(self, row_tokens: int, max_tokens: int) -> bool:
        """Whether a multi-turn row holding ``row_tokens`` after its first prompt still has room for a
        response of up to ``max_tokens`` (L_max); the episode ends with ``token_budget`` before a turn
        that has none, so a row never overflows verl's response length."""
        return self.response_budget - row_tokens >= max_tokens


class Episode:
    """Plays one episode of ``env_episode`` conditioned on ``strategy`` (None: on the task alone, the GRPO
    baseline); ``judge`` adds the self-judgment."""

    def __init__(
        self,
        env_episode,
        strategy: str | None,
        policy: Policy,
        templates: PromptTemplates,
        limits: EpisodeLimits,
        judge: bool,
    ) -> None:
        self.env = env_episode
        self.strategy = strategy
        self.policy = policy
        self.chat: ChatTokens = policy.chat
        self.templates = templates
        self.limits = limits
        self.judge = judge
        self.task = env_episode.task_description
        first_prompt = build_action_messages(
            templates, self.task, strategy, history=[], observation=env_episode.initial_observation,
            admissible_actions=env_episode.admissible_commands,
        )
        self.trajectory = Trajectory(prompt_ids=self.chat.prompt(first_prompt), score=env_episode.score,
                                     reward_mode=limits.reward_mode)
        self.response_ids: list[int] = []
        self.observation = env_episode.initial_observation
        self.admissible: tuple[str, ...] = tuple(env_episode.admissible_commands)
        self.fits = prompt_fits(self.chat.tokenizer, limits.prompt_tokens)

    async def run(self) -> Trajectory:
        if self.env.failure is not None:  # the game did not even start: nothing to play or judge
            self.trajectory.end_reason = self.env.failure
            return self.trajectory
        handlers = {Phase.ACT: self._act, Phase.JUDGE: self._judge}
        phase = Phase.ACT
        while phase is not Phase.DONE:
            phase = await handlers[phase]()
        return self.trajectory

    def _history(self) -> list[tuple[str, str]]:
        """(action, observation) of every step so far; a malformed response shows as its raw text."""
        return [(s.action if s.action is not None else s.generation.text.strip(), s.observation)
                for s in self.trajectory.steps]

    def _next_prompt(self) -> list[int] | None:
        """The prompt of the next action, or None when a multi-turn row has no room for another turn."""
        if self.limits.per_step:
            messages = build_action_messages(
                self.templates, self.task, self.strategy, self._history(), self.observation, self.admissible,
                window=self.limits.history_window, fits=self.fits,
            )
            return self.chat.prompt(messages)
        if not self.limits.room_for_response(len(self.response_ids), self.policy.max_tokens):
            return None
        return self.trajectory.prompt_ids + self.response_ids

    async def _act(self) -> Phase:
        trajectory = self.trajectory
        prompt = self._next_prompt()
        if prompt is None:
            trajectory.end_reason = REASON_TOKEN_BUDGET
            return self._after_episode()
        generation = await self.policy.generate(prompt)
        self.response_ids += generation.token_ids
        action = extract_tag(generation.text, "action")
        if action is None:
            # Spec §1.3: no environment step, but the response costs a step and the agent is told why.
            observation, admissible, done = self.templates.malformed_action, self.admissible, False
            command, was_admissible = None, None
        else:
            result = await self.env.step(action)
            observation, admissible = result.observation, result.admissible_commands
            command, was_admissible = result.command, result.admissible
            trajectory.won = result.won
            trajectory.score = result.score if result.score is not None else trajectory.score
            done = result.done
            if result.failure is not None:
                trajectory.end_reason = result.failure
            elif result.won:
                trajectory.end_reason = REASON_WON
            elif done and trajectory.num_steps + 1 < self.limits.max_steps:
                trajectory.end_reason = REASON_LOST  # the game ended without the goal before the step cap
        step = Step(generation=generation, action=action, observation=observation, command=command,
                    admissible=was_admissible)
        trajectory.steps.append(step)
        self.admissible, self.observation = tuple(admissible), observation
        if not done and trajectory.num_steps >= self.limits.max_steps:
            done, trajectory.end_reason = True, REASON_STEP_LIMIT
        if done:
            trajectory.end_reason = trajectory.end_reason or REASON_STEP_LIMIT
            return self._after_episode()
        if self.limits.per_step:
            return Phase.ACT
        content = self.templates.observation_turn.format(
            step=trajectory.num_steps + 1, observation=observation,
            admissible_actions="\n".join(f"- {a}" for a in self.admissible),
        )
        step.env_tokens.extend(self.chat.environment_turn(generation.token_ids, content))
        self.response_ids += step.env_tokens
        return Phase.ACT

    def _after_episode(self) -> Phase:
        return Phase.JUDGE if self.judge and self.trajectory.steps else Phase.DONE

    async def _judge(self) -> Phase:
        trajectory = self.trajectory
        messages = build_judge_messages(self.templates, self.task, self.strategy, self._history(), fits=self.fits)
        trajectory.judge = await self.policy.generate(self.chat.prompt(messages))
        flagged = parse_judgment(trajectory.judge.text, trajectory.num_steps)
        trajectory.judge_parsed = flagged is not None
        trajectory.flagged_steps = flagged or []
        return Phase.DONE
