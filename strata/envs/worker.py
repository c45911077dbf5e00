"""The body of an `EnvPool` worker process: many live episodes, served one request at a time.

A worker keeps one session per live episode and a stock of idle engines of its environment (`strata.envs.registry`:
ALFWorld's `AlfworldEngine` and `GameSession`, ScienceWorld's, WebShop's, ...). A new episode
takes an idle engine that already holds its game (then only a reset is needed: same game file, same
initial state) or else any idle engine (a load), and builds a new engine only when none is idle, so the
number of engines (and fast-downward library copies) stays at the worker's peak number of live episodes.
An engine exception ends only its episode: the error goes back in the reply, the engine is marked as
holding no game and returns to the stock. Game files are assumed not to change while a pool runs.
A ScienceWorld worker holds one JVM; an `EngineLostError` (its JVM died) is not caught: the worker exits and the
pool replaces it.
"""

from __future__ import annotations

import logging
import os
import time
from multiprocessing.connection import Connection
from typing import Any

from strata.envs.errors import EngineLostError
from strata.envs.protocol import (
    STATUS_SEQ,
    STATUS_SINCE,
    CloseRequest,
    Ready,
    Reply,
    StartRequest,
    StepRequest,
)
from strata.envs.records import REASON_ENGINE_ERROR
from strata.envs.registry import Environment

logger = logging.getLogger(__name__)


def _error_text(exc: BaseException, game_file: str) -> str:
    """One line: ``engine_error: <game file>: <exception type>: <message>``."""
    message = " ".join(str(exc).split())[:500]
    return f"{REASON_ENGINE_ERROR}: {game_file}: {type(exc).__name__}: {message}"


class WorkerState:
    """Live episodes and idle engines of one worker process."""

    def __init__(self, max_steps: int, normalize_actions: bool, environment: Environment) -> None:
        self.max_steps = max_steps
        self.normalize_actions = normalize_actions
        self.new_engine, self.new_session = environment.part("engine"), environment.part("session")
        self.sessions: dict[int, Any] = {}
        self.idle: list[Any] = []  # engines of the environment's kind

    def _take_engine(self, game_file: str) -> Any:
        for i, engine in enumerate(self.idle):
            if engine.game_file == game_file:
                return self.idle.pop(i)
        if self.idle:
            return self.idle.pop(0)
        return self.new_engine()

    def _release(self, episode_id: int, broken: bool) -> None:
        session = self.sessions.pop(episode_id, None)
        if session is not None:
            if broken:
                session.engine.unload()
            self.idle.append(session.engine)

    def handle(self, request: StartRequest | StepRequest | CloseRequest) -> Reply | None:
        if isinstance(request, CloseRequest):
            self._release(request.episode_id, broken=False)
            return None
        game_file = "<unknown game>"
        try:
            if isinstance(request, StartRequest):
                game_file = request.game_file
                engine = self._take_engine(request.game_file)
                session = self.new_session(engine, self.max_steps, self.normalize_actions)
                self.sessions[request.episode_id] = session
                return Reply(request.seq, result=session.start(request.game_file, request.with_walkthrough))
            session = self.sessions.get(request.episode_id)
            if session is None:
                return Reply(request.seq, error=f"{REASON_ENGINE_ERROR}: no live episode {request.episode_id}")
            game_file = session.engine.game_file or game_file
            return Reply(request.seq, result=session.step(request.action))
        except EngineLostError:
            raise  # the engine's own process died: this worker exits and the pool replaces it
        except Exception as exc:  # an engine failure ends this episode only; the worker goes on
            error = _error_text(exc, game_file)
            logger.warning("episode %d: %s", request.episode_id, error)
            self._release(request.episode_id, broken=True)
            return Reply(request.seq, error=error)


def worker_main(
    requests: Connection, replies: Connection, status: Any, max_steps: int, normalize_actions: bool,
    environment: Environment,
) -> None:
    """Serve requests until the pipe closes (the pool closed or died).

    ``status`` is the pool's shared ``[sequence, start time]`` array of doubles (see `strata.envs.protocol`);
    ``max_steps`` and ``normalize_actions`` configure every episode's session; ``environment`` says where its
    engine and session classes live (imported here, so a worker imports only its own).
    """
    logging.basicConfig(level=logging.WARNING, format=f"[env worker {os.getpid()}] %(levelname)s %(message)s")
    state = WorkerState(max_steps, normalize_actions, environment)
    state.idle.append(state.new_engine())  # imports the engine (~2 s; ScienceWorld: starts the JVM) before timing
    replies.send(Ready(pid=os.getpid()))
    while True:
        try:
            request = requests.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        status[STATUS_SINCE] = time.monotonic()  # the time first, so a reader never pairs a new
        status[STATUS_SEQ] = request.seq  # sequence number with an old start time
        reply = state.handle(request)
        status[STATUS_SEQ] = 0
        if reply is not None:
            replies.send(reply)
