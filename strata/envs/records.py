"""Typed records that cross the process boundary: what an episode shows at its start, after each step,
and how it ended. Plain frozen dataclasses, so they pickle cheaply and compare by value in tests."""

from __future__ import annotations

from dataclasses import dataclass

# Why an episode ended (`EpisodeOutcome.reason`). Engine errors carry their message after the prefix.
REASON_WON = "won"
REASON_STEP_LIMIT = "step_limit"
REASON_LOST = "lost"  # the game ended without the goal before the step cap (ScienceWorld: a wrong `focus on`)
REASON_TIMEOUT = "timeout"
REASON_WORKER_LOST = "worker_lost"
REASON_ENGINE_ERROR = "engine_error"  # written as "engine_error: <type>: <message>"
REASON_ABANDONED = "abandoned"  # the caller left the episode before it was done
REASON_POOL_CLOSED = "pool_closed"


@dataclass(frozen=True)
class EpisodeStart:
    """An episode right after reset.

    Args:
        task_description: the goal sentence, e.g. ``"put a clean mug in coffeemachine"``.
        initial_observation: the engine's full first text, as ALFWorld shows it:
            ``"-= Welcome to TextWorld, ALFRED! =-\\n\\nYou are in the middle of a room. ...\\n\\n
            Your task is to: put a clean mug in coffeemachine."``
        admissible_commands: the commands the engine accepts now (sorted, as textworld returns them).
        walkthrough: the planner's winning command list when it was asked for, else ``None``.
        score: the environment's normalised progress score at the start (as `StepResult.score`), ``None``
            where it has none (ALFWorld): an episode that never steps the engine still has a score.
    """

    task_description: str
    initial_observation: str
    admissible_commands: tuple[str, ...]
    walkthrough: tuple[str, ...] | None = None
    score: float | None = None


@dataclass(frozen=True)
class StepResult:
    """What one ``step(action)`` returns.

    Args:
        observation: the engine's feedback (``"Nothing happens."`` for a command it does not know).
        won: the goal holds now (reward 1).
        done: the episode is over: won, step cap reached, or failed.
        admissible_commands: commands accepted from the new state (empty once done by failure).
        command: what was sent to the engine: the action, or the admissible command it was mapped to
            (`strata.envs.actions.match_command`, when the environment normalises actions).
        admissible: ``command`` was among the admissible commands of the state it was issued in
            (False on a failed step: the engine did not answer).
        failure: ``None`` for a normal step; else why the episode was cut short
            (``"timeout"``, ``"worker_lost"``, ``"engine_error: ..."``). A failed step has ``done=True``.
        score: the environment's own progress score after the step, normalised to [0, 1] (ScienceWorld's
            0-100 score / 100; negative when the game was lost), or ``None`` where the environment has only
            won / not won (ALFWorld).
    """

    observation: str
    won: bool
    done: bool
    admissible_commands: tuple[str, ...]
    command: str
    admissible: bool
    failure: str | None = None
    score: float | None = None

    @property
    def reward(self) -> float:
        """ALFWorld's sparse reward: 1 on the winning step, else 0."""
        return 1.0 if self.won else 0.0


@dataclass(frozen=True)
class EpisodeOutcome:
    """How one episode ended; the record the metrics are computed from.

    Args:
        game_file: the game played.
        task_type: its ALFWorld or ScienceWorld task type.
        subtask: its StraTA subtask name (ALFWorld: pick, look, clean, heat, cool, pick2; ScienceWorld: the
            task type).
        won: the goal was reached.
        num_steps: ``step`` calls made (invalid commands count: each costs a step).
        reason: ``"won"``, ``"step_limit"``, ``"timeout"``, ``"worker_lost"``, ``"engine_error: ..."``,
            ``"abandoned"``, ``"pool_closed"`` or ``"lost"`` (ScienceWorld ended the game).
        score: the last normalised environment score (`StepResult.score`), ``None`` for ALFWorld.
    """

    game_file: str
    task_type: str
    subtask: str
    won: bool
    num_steps: int
    reason: str
    score: float | None = None

    @property
    def failed(self) -> bool:
        """Ended by an infrastructure problem rather than by the agent (won or out of steps)."""
        return self.reason not in (REASON_WON, REASON_STEP_LIMIT, REASON_LOST, REASON_ABANDONED)
