"""The real ALFWorld text engine for one game at a time, and an episode on it with a step cap.

The engine is what AlfredTWEnv builds for each game (alfworld 0.4.2): textworld's `PddlEnv` wrapped in
`AlfredDemangler` (object ids -> "mug 1") and `AlfredInfos` (records the game file), without the gym
batching layer, so a worker process can hold many of them and step each on its own. Its `PddlEnv` parses each
of the game grammar's strings once (`strata.envs.alfworld.grammar`), which halves a step's cost.

Loading a game costs ~0.5 s (two PDDL -> SAS translations; textworld's reset repeats them, so a reset
costs about as much as a load). Every `PddlEnv` also loads its own copy of fast-downward's shared
library (a 33 MB file copied into ``$TMPDIR`` and mapped; that is page cache, or RAM where ``$TMPDIR`` is
a tmpfs), which is never unloaded. So an `AlfworldEngine` is built once and then reused for any number
of games: `load` a new game file, or only `reset` when the same game comes again.

The admissible commands it reports leave out ``help`` (alfworld 0.4.2's grammar offers it in every
state): it only prints the command list the prompt already shows, so the model never sees it and the
random policy never plays it. The engine still answers ``help`` when it is sent.
"""

from __future__ import annotations

from strata.envs.actions import match_command
from strata.envs.records import EpisodeStart
from strata.envs.session import DEFAULT_MAX_STEPS, EpisodeSession, Outcome

TASK_PREFIX = "Your task is to: "
HIDDEN_COMMANDS = frozenset({"help"})  # never reported as admissible (see the module docstring)


def task_description_of(observation: str, game_file: str = "<game>") -> str:
    """The goal sentence of an initial observation, without "Your task is to: " and the final period."""
    _, sep, task = observation.rpartition(TASK_PREFIX)
    if not sep or not task.strip():
        raise ValueError(f"{game_file}: initial observation has no {TASK_PREFIX!r} line: {observation[-200:]!r}")
    return task.strip().removesuffix(".").strip()


class AlfworldEngine:
    """One reusable textworld PDDL environment with ALFWorld's wrappers."""

    def __init__(self) -> None:
        import textworld
        from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos

        from strata.envs.alfworld.grammar import MemoizedPddlEnv

        infos = textworld.EnvInfos(won=True, admissible_commands=True, extras=["gamefile"])
        self._env = AlfredInfos(AlfredDemangler(MemoizedPddlEnv(infos), shuffle=False))
        self.game_file: str | None = None

    def load(self, game_file: str) -> None:
        """Parse and translate ``game_file`` (the slow part); it then stays loaded until the next `load`."""
        self.game_file = None
        self._env.load(game_file)
        self.game_file = game_file

    def unload(self) -> None:
        """Forget the loaded game, so the next episode loads its file from disk again (after the file
        changed, or after an engine error left the state unknown)."""
        self.game_file = None

    def reset(self, with_walkthrough: bool = False) -> EpisodeStart:
        """Back to the game's initial state (deterministic for a game file).

        ``with_walkthrough`` also returns the game's stored walkthrough, or the planner's plan when the
        file stores none (a planner call: only ask for it when it is needed).
        """
        if self.game_file is None:
            raise RuntimeError("AlfworldEngine.reset() called before a successful load()")
        self._env.unwrapped.request_infos.extras = ["gamefile"] + (["walkthrough"] if with_walkthrough else [])
        state = self._env.reset()
        observation = state.feedback
        walkthrough = tuple(state["extra.walkthrough"]) if with_walkthrough else None
        return EpisodeStart(
            task_description=task_description_of(observation, self.game_file),
            initial_observation=observation,
            admissible_commands=_shown(state["admissible_commands"]),
            walkthrough=walkthrough,
        )

    def step(self, command: str) -> tuple[str, bool, tuple[str, ...]]:
        """Apply one command: (feedback, won, admissible commands); unknown ones give "Nothing happens."."""
        state, _, _ = self._env.step(command)
        return state.feedback, bool(state["won"]), _shown(state["admissible_commands"])


def _shown(commands: list[str]) -> tuple[str, ...]:
    """textworld's admissible commands without `HIDDEN_COMMANDS`, in textworld's order."""
    return tuple(command for command in commands if command not in HIDDEN_COMMANDS)


class GameSession(EpisodeSession):
    """An episode on an `AlfworldEngine` (`strata.envs.session`'s rules). ALFWorld lists its commands, so with
    ``normalize_actions`` an action is mapped to the listed command it means (`strata.envs.actions.match_command`:
    ``Go to cabinet 1.`` -> ``go to cabinet 1``); without it the engine gets the action as written. A game is
    loaded only when it is not the engine's current one (a reset alone replays it)."""

    def __init__(
        self, engine: AlfworldEngine, max_steps: int = DEFAULT_MAX_STEPS, normalize_actions: bool = True
    ) -> None:
        super().__init__(engine, max_steps, normalize_actions)
        self._next_commands: tuple[str, ...] = ()

    def begin(self, game_file: str, with_walkthrough: bool) -> EpisodeStart:
        if self.engine.game_file != game_file:
            self.engine.load(game_file)
        return self.engine.reset(with_walkthrough=with_walkthrough)

    def command_for(self, action: str) -> str:
        return match_command(action, self.admissible_commands) if self.normalize_actions else action

    def apply(self, command: str) -> Outcome:
        admissible = command in self.admissible_commands
        observation, won, self._next_commands = self.engine.step(command)
        return Outcome(observation, won=won, lost=False, admissible=admissible)

    def commands_after(self, observation: str) -> tuple[str, ...]:
        return self._next_commands  # listed after the last step too, as textworld reports them
