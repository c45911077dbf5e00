"""The real ScienceWorld simulator for one game at a time, and an episode on it with a step cap.

One JVM per worker process (`jvm`), started on first use (~0.8 s) and shared by all the worker's engines:
each `SciWorldEngine` is its own simulator object (``PythonInterface``) inside it, so a worker holding K
live episodes still runs one JVM. The engine talks to the simulator object directly rather than through
``scienceworld.ScienceWorldEnv``, whose ``step`` also lists every valid action-object combination (up to
~9,000 strings, ~0.1 s) on every step.

Failures map onto the pool's: the JVM exits when its worker closes its stdin and is killed with its worker
(a parent-death signal), so a worker the pool kills after a timeout leaves no Java process behind, even a hung
one. A JVM that died under a worker raises `strata.envs.errors.EngineLostError`, which the worker does not
catch: the worker process exits and the pool treats it exactly as a crashed ALFWorld worker (the episode
being served ends with ``engine_error: worker process died ...``, the worker's other episodes with
``worker_lost``, a replacement starts with a fresh JVM).
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping
from typing import Any

from strata.envs.errors import EngineLostError
from strata.envs.records import EpisodeStart
from strata.envs.sciworld.tasks import SPLIT_METHODS, parse_game_id
from strata.envs.sciworld.view import object_view
from strata.envs.session import DEFAULT_MAX_STEPS, EpisodeSession, Outcome

logger = logging.getLogger(__name__)

UNKNOWN_ACTION = "No known action matches that input."
# The JVM's own sizing takes up to a quarter of the machine's memory as heap and a parallel collector with
# a thread per core: on this 24 GB VM a worker's JVM reached 2.2-2.7 GB resident after 30 random episodes with
# 9 live at once, and a GPU node with a terabyte and 48 game processes would let each grow far more. The live
# set of 9 episodes is ~100 MB (a 64 MB heap fails, 128 MB runs 3x slower in collection), so a 1 GB heap with
# the single-threaded collector holds the same run in 0.49 GB at the same speed (9.7 s vs 10.4 s).
JVM_OPTIONS = ("-XX:+UseSerialGC", "-Xmx1g")
FIRST_ACTION = "look around"  # what scienceworld's own reset() plays to get the first observation


class Jvm:
    """One ScienceWorld JVM (py4j gateway) and a factory of simulator objects inside it."""

    def __init__(self) -> None:
        from py4j.java_gateway import GatewayParameters, JavaGateway, find_jar_path
        from scienceworld.constants import BASEPATH, JAR_PATH

        began = time.perf_counter()
        # What py4j's launch_gateway(die_on_exit=True) runs, behind setpriv (util-linux) for a parent-death
        # signal: the JVM exits when its worker closes its stdin, and is killed when its worker is killed
        # even while it hangs (and so never reads that stdin).
        setpriv = shutil.which("setpriv")
        command = [*([setpriv, "--pdeathsig", "KILL"] if setpriv else []), "java", *JVM_OPTIONS,
                   "-classpath", os.pathsep.join((find_jar_path(), JAR_PATH)),
                   "py4j.GatewayServer", "--die-on-broken-pipe", "0"]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, cwd=BASEPATH)
        port = int(self.process.stdout.readline())
        threading.Thread(target=self.process.stdout.read, name="jvm-stdout", daemon=True).start()  # drain
        self._gateway = JavaGateway(gateway_parameters=GatewayParameters(auto_field=True, port=port),
                                    java_process=self.process)
        self.start_s = time.perf_counter() - began
        logger.info("ScienceWorld JVM %d started in %.2fs", self.process.pid, self.start_s)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def simulator(self) -> Any:
        """A new, independent simulator object (no task loaded)."""
        return self._gateway.jvm.scienceworld.runtime.pythonapi.PythonInterface()

    def call(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` on a simulator object; `EngineLostError` when the JVM has died under it."""
        from py4j.protocol import Py4JError

        try:
            return fn(*args)
        except Py4JError as exc:
            if not self.alive:
                raise EngineLostError(f"the ScienceWorld JVM (pid {self.process.pid}) died: {exc}") from exc
            raise


@functools.cache
def jvm() -> Jvm:
    """This process's JVM, started on first use."""
    return Jvm()


class SciWorldEngine:
    """One simulator object; `start` a game id (task type + variation), then play it. A worker keeps it across
    episodes as it keeps an `strata.envs.alfworld.engine.AlfworldEngine` (``game_file``, ``unload``)."""

    def __init__(self) -> None:
        self._jvm = jvm()
        self._sim = self._jvm.simulator()
        self.game_file: str | None = None

    def _call(self, name: str, *args: Any) -> Any:
        return self._jvm.call(getattr(self._sim, name), *args)

    def start(self, game_file: str, with_walkthrough: bool = False) -> EpisodeStart:
        """Load the task type and variation of ``game_file`` (a game id) afresh and look around.

        Always a load: ScienceWorld's load costs 0.02-0.3 s, its reset more (it rebuilds the task too).
        ``with_walkthrough`` also generates the gold action sequence (0.1-12 s, mendelian genetics longest).
        """
        task_type, variation = parse_game_id(game_file)
        self.game_file = None
        self._call("load", task_type, variation, "", with_walkthrough)
        self.game_file = game_file
        observation = self._call("step", FIRST_ACTION)
        walkthrough = tuple(self._call("getGoldActionSequence")) if with_walkthrough else None
        return EpisodeStart(
            task_description=str(self._call("getTaskDescription")).strip(),
            initial_observation=observation,
            admissible_commands=self.objects(observation),
            walkthrough=walkthrough,
            score=float(self._call("getScore")),
        )

    def unload(self) -> None:
        self.game_file = None

    def objects(self, observation: str) -> tuple[str, ...]:
        """The object names the parser accepts now, trimmed for the prompt (`strata.envs.sciworld.view`)."""
        return object_view(list(self._call("getPossibleObjects")), observation)

    def step(self, command: str) -> tuple[str, float, bool]:
        """Apply one command: (observation, score in [0, 1] or negative when lost, task completed)."""
        observation = self._call("step", command)
        return observation, float(self._call("getScore")), bool(self._call("getCompleted"))

    def variations(self, task_type: str, split: str) -> list[int]:
        """The variation numbers of ``task_type`` in one of our splits (train / valid / test).

        The simulator lists variations only of a loaded task type, so this loads its variation 0 first and then
        marks the engine as holding no game: the next `start` loads its own."""
        self._call("load", task_type, 0, "", False)
        self.game_file = None
        return sorted(int(v) for v in self._call(SPLIT_METHODS[split]))


class SciWorldSession(EpisodeSession):
    """An episode on a `SciWorldEngine` (`strata.envs.session`'s rules): lost when the score turns negative.
    ScienceWorld's own parser resolves what normalisation leaves; ``admissible`` is whether it knew the command."""

    def __init__(self, engine: SciWorldEngine, max_steps: int = DEFAULT_MAX_STEPS, normalize_actions: bool = True):
        super().__init__(engine, max_steps, normalize_actions)

    def begin(self, game_file: str, with_walkthrough: bool) -> EpisodeStart:
        return self.engine.start(game_file, with_walkthrough)

    def apply(self, command: str) -> Outcome:
        observation, score, completed = self.engine.step(command)
        return Outcome(observation, won=completed and score > 0, lost=score < 0,
                       admissible=observation.strip() != UNKNOWN_ACTION, score=score)

    def commands_after(self, observation: str) -> tuple[str, ...]:
        return () if self.done else self.engine.objects(observation)


def host_check(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """What ScienceWorld needs beyond Python packages (`strata.envs.registry`): Java, since every game process
    starts the simulator's jar with it."""
    java = shutil.which("java", path=environ.get("PATH", os.defpath))
    if java is None:
        return [("error", "sciworld: no `java` on PATH, and every ScienceWorld game process starts its simulator "
                          "with it: install a Java 17 runtime (apt-get install openjdk-17-jre-headless; "
                          "`make install` does where apt-get works) or put its bin folder on PATH.")]
    return [("ok", f"sciworld: the simulator runs on {java}")]
