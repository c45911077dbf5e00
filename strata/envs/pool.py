"""Many ALFWorld episodes at once, in worker processes, driven from asyncio.

The engine is pure Python under the GIL, so parallel episodes need processes. `EnvPool` starts
``num_workers`` processes (``spawn`` context: forking a parent that already runs torch or Ray threads is
unsafe). Each worker holds many live episodes and serves its requests in order; a new episode goes to
the worker with the fewest live episodes. The asyncio side never blocks: requests leave through a sender
thread per worker, and a reader thread per worker resolves the awaiting futures, so thousands of
episodes can wait on their ``step`` at once.

Failures stay local to what failed:

- an engine exception (bad game file, engine bug) ends that episode with ``failure`` =
  ``"engine_error: <type>: <message>"``; its worker goes on serving the others;
- a request that a worker serves for longer than its timeout (``step_timeout_s`` for steps,
  ``start_timeout_s`` for load + reset; time spent queued does not count) ends that episode with
  ``"timeout"``: the worker is killed and replaced, and its other episodes end with ``"worker_lost"``
  (their engine state died with the process; the rollout records them and the batch goes on);
- a worker that dies (crash, OOM kill) is replaced the same way; the episode it was serving ends with
  ``"engine_error: worker process died ..."``, the others with ``"worker_lost"``.

An ended episode answers its next ``step`` at once with ``done=True`` and the reason in ``failure``.
Close the pool (``close()``, ``with EnvPool(...)``, or at interpreter exit) to reap every process.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import itertools
import logging
import multiprocessing
import queue
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from multiprocessing.connection import wait

from strata.envs.protocol import (
    STATUS_SEQ,
    STATUS_SINCE,
    CloseRequest,
    Ready,
    Reply,
    StartRequest,
    StepRequest,
)
from strata.envs.records import (
    REASON_ABANDONED,
    REASON_ENGINE_ERROR,
    REASON_LOST,
    REASON_POOL_CLOSED,
    REASON_STEP_LIMIT,
    REASON_TIMEOUT,
    REASON_WON,
    REASON_WORKER_LOST,
    EpisodeOutcome,
    EpisodeStart,
    StepResult,
)
from strata.envs.registry import environment
from strata.envs.session import DEFAULT_MAX_STEPS
from strata.envs.tasks import Task
from strata.envs.worker import worker_main

logger = logging.getLogger(__name__)

POLL_S = 0.05  # how often a reader thread checks its worker's request clock
_SHUTDOWN = object()
_LIVE_POOLS: weakref.WeakSet[EnvPool] = weakref.WeakSet()


@dataclass
class _Pending:
    future: asyncio.Future
    loop: asyncio.AbstractEventLoop
    timeout_s: float


def _resolve(future: asyncio.Future, value: object) -> None:
    if not future.done():
        future.set_result(value)


class _Worker:
    """Parent-side handle of one worker process: its pipes, threads and in-flight requests."""

    def __init__(self, pool: EnvPool, slot: int) -> None:
        ctx = pool._ctx
        self.pool = pool
        self.slot = slot
        request_reader, self.requests = ctx.Pipe(duplex=False)
        self.replies, reply_writer = ctx.Pipe(duplex=False)
        # Lock-free on purpose: a worker killed while holding a lock would leave it locked forever.
        self.status = ctx.Array("d", 2, lock=False)
        self.process = ctx.Process(
            target=worker_main,
            args=(request_reader, reply_writer, self.status, pool.max_steps, pool.normalize_actions, pool.environment),
            name=f"strata-env-worker-{slot}",
            daemon=True,
        )
        self.process.start()
        request_reader.close()
        reply_writer.close()
        self.outbox: queue.SimpleQueue = queue.SimpleQueue()
        self.pending: dict[int, _Pending] = {}  # guarded by pool._lock
        self.episodes: dict[int, PooledEpisode] = {}  # live episodes, guarded by pool._lock
        self.alive = True
        self.stopping = False
        self.ready = threading.Event()
        self._timed_out_seq = 0
        self._sender = threading.Thread(target=self._send_loop, name=f"{self.process.name}-send", daemon=True)
        self._reader = threading.Thread(target=self._read_loop, name=f"{self.process.name}-read", daemon=True)
        self._sender.start()
        self._reader.start()

    def _send_loop(self) -> None:
        try:
            while True:
                message = self.outbox.get()
                self.requests.send(None if message is _SHUTDOWN else message)
                if message is _SHUTDOWN:
                    return
        except (BrokenPipeError, OSError):
            return  # the process is gone; the reader thread reports it
        finally:
            self.requests.close()

    def _read_loop(self) -> None:
        while True:
            ready = wait([self.replies, self.process.sentinel], timeout=POLL_S)
            if self.replies in ready:
                try:
                    message = self.replies.recv()
                except (EOFError, OSError):
                    break
                self._deliver(message)
                continue
            if self.process.sentinel in ready:
                break
            self._check_clock()
        self.replies.close()
        self._on_exit()

    def _deliver(self, message: Ready | Reply) -> None:
        if isinstance(message, Ready):
            self.ready.set()
            return
        with self.pool._lock:
            pending = self.pending.pop(message.seq, None)
        if pending is not None:
            self._call(pending, message)

    @staticmethod
    def _call(pending: _Pending, value: object) -> None:
        with contextlib.suppress(RuntimeError):  # the event loop is already closed: nobody waits
            pending.loop.call_soon_threadsafe(_resolve, pending.future, value)

    def _check_clock(self) -> None:
        seq, since = int(self.status[STATUS_SEQ]), self.status[STATUS_SINCE]
        if not seq or int(self.status[STATUS_SEQ]) != seq:  # idle, or moved on while we read
            return
        with self.pool._lock:
            pending = self.pending.get(seq)
        if pending is not None and time.monotonic() - since > pending.timeout_s:
            logger.warning(
                "env worker %s: request %d ran over %.2fs; replacing the worker",
                self.process.pid,
                seq,
                pending.timeout_s,
            )
            self._timed_out_seq = seq
            self.process.kill()

    def _on_exit(self) -> None:
        """The process ended: fail what it held, reap it, and start a replacement unless closing."""
        self.process.join(timeout=10)
        code = self.process.exitcode
        serving = int(self.status[STATUS_SEQ])
        with self.pool._lock:
            self.alive = False
            pending, self.pending = self.pending, {}
            episodes = list(self.episodes.values())
        for seq, item in pending.items():
            if self.stopping:
                reason = REASON_POOL_CLOSED
            elif seq == self._timed_out_seq:
                reason = REASON_TIMEOUT
            elif seq == serving:
                reason = f"{REASON_ENGINE_ERROR}: worker process died (exit code {code}) while serving it"
            else:
                reason = REASON_WORKER_LOST
            self._call(item, reason)
        for episode in episodes:
            episode._lost_reason = REASON_POOL_CLOSED if self.stopping else REASON_WORKER_LOST
        self.outbox.put(_SHUTDOWN)  # let the sender thread end
        if not self.stopping:
            self.pool._replace(self, code)

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """Ask the process to exit, kill it if it does not, and wait for both threads."""
        self.stopping = True
        self.outbox.put(_SHUTDOWN)
        self.process.join(timeout=timeout_s)
        if self.process.is_alive():
            self.process.kill()
        self._reader.join(timeout=timeout_s + 10)
        self._sender.join(timeout=1)


class PooledEpisode:
    """One live episode in an `EnvPool` (obtain it with ``async with pool.episode(task) as ep``).

    After the start, ``task_description``, ``initial_observation`` and ``admissible_commands`` describe
    the game; ``admissible_commands`` follows each step. If the start itself failed, the episode is
    already ``done`` with ``failure`` set and empty texts.
    """

    def __init__(
        self, pool: EnvPool, worker: _Worker, episode_id: int, task: Task, start_timeout_s: float, step_timeout_s: float
    ) -> None:
        self._pool = pool
        self._start_timeout_s = start_timeout_s
        self._step_timeout_s = step_timeout_s
        self._worker = worker
        self.episode_id = episode_id
        self.task = task
        self.task_description = ""
        self.initial_observation = ""
        self.admissible_commands: tuple[str, ...] = ()
        self.walkthrough: tuple[str, ...] | None = None
        self.num_steps = 0
        self.won = False
        self.score: float | None = None  # the environment's normalised score (ScienceWorld), after each step
        self._done = False
        self._failure: str | None = None
        self._lost_reason: str | None = None  # set by the worker's reader thread

    @property
    def failure(self) -> str | None:
        """Why the episode was cut short (timeout, worker_lost, engine_error: ...), or None."""
        return self._failure or self._lost_reason

    @property
    def done(self) -> bool:
        return self._done or self.failure is not None

    def _fail(self, reason: str, command: str = "") -> StepResult:
        self._failure = self._failure or reason
        self.admissible_commands = ()
        return StepResult(
            observation="", won=False, done=True, admissible_commands=(), command=command, admissible=False,
            failure=self.failure,
        )

    async def _start(self, with_walkthrough: bool) -> None:
        reply = await self._pool._request(
            self,
            lambda seq: StartRequest(seq, self.episode_id, self.task.game_file, with_walkthrough),
            self._start_timeout_s,
        )
        if isinstance(reply, str):
            self._fail(reply)
            return
        start = reply.result
        assert isinstance(start, EpisodeStart)
        self.task_description = start.task_description
        self.initial_observation = start.initial_observation
        self.admissible_commands = start.admissible_commands
        self.walkthrough = start.walkthrough
        self.score = start.score

    async def step(self, action: str) -> StepResult:
        """Send one text command; every call costs a step, valid or not.

        If the pool ended the episode since the last step (its worker was lost), this returns at once
        with ``done=True`` and the reason in ``failure``. Stepping an episode that was already done
        (won, out of steps, failed) is a caller bug and raises `RuntimeError`.
        """
        if self._done or self._failure:
            raise RuntimeError(
                f"episode {self.episode_id} of {self.task.name} is over ({self.outcome().reason}); "
                "start a new episode instead of stepping this one"
            )
        if self._lost_reason:
            return self._fail(self._lost_reason, action)
        reply = await self._pool._request(
            self, lambda seq: StepRequest(seq, self.episode_id, action), self._step_timeout_s
        )
        self.num_steps += 1
        if isinstance(reply, str):
            return self._fail(reply, action)
        result = reply.result
        assert isinstance(result, StepResult)
        self.won, self._done, self.admissible_commands = result.won, result.done, result.admissible_commands
        self.score = result.score
        return result

    def outcome(self) -> EpisodeOutcome:
        """The record metrics are computed from (see `strata.envs.metrics`)."""
        if self.failure:
            reason = self.failure
        elif self.won:
            reason = REASON_WON
        elif self._done:
            reason = REASON_STEP_LIMIT if self.num_steps >= self._pool.max_steps else REASON_LOST
        else:
            reason = REASON_ABANDONED
        return EpisodeOutcome(
            game_file=self.task.game_file,
            task_type=self.task.task_type,
            subtask=self.task.subtask,
            won=self.won,
            num_steps=self.num_steps,
            score=self.score,
            reason=reason,
        )


class EnvPool:
    """Worker processes running ALFWorld episodes for asyncio code (see the module docstring).

    Args:
        num_workers: worker processes; about one per free CPU core.
        step_timeout_s: longest a worker may spend on one step before the episode ends with "timeout".
        start_timeout_s: the same for loading and resetting a game (~0.5 s for small games, more for
            whole ALFRED rooms).
        max_steps: step cap of every episode (ALFWorld and StraTA: 50).
        normalize_actions: map each action to the admissible command it means before the engine sees it
            (``Go to cabinet 1.`` -> ``go to cabinet 1``; see `strata.envs.actions`); False sends it as is.
        mp_context: multiprocessing start method, "spawn" (default) or "forkserver".
        engine: the environment the workers run, by its registered name (`strata.envs.registry`): "alfworld"
            (default), "sciworld" (one JVM per worker), "webshop", or one registered at run time.
    """

    def __init__(
        self,
        num_workers: int = 2,
        step_timeout_s: float = 30.0,
        start_timeout_s: float = 120.0,
        max_steps: int = DEFAULT_MAX_STEPS,
        mp_context: str = "spawn",
        normalize_actions: bool = True,
        engine: str = "alfworld",
    ) -> None:
        if num_workers < 1:
            raise ValueError(f"num_workers must be >= 1, got {num_workers}")
        if step_timeout_s <= 0 or start_timeout_s <= 0:
            raise ValueError("step_timeout_s and start_timeout_s must be > 0")
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        if mp_context not in ("spawn", "forkserver"):
            raise ValueError(f"mp_context must be 'spawn' or 'forkserver' (fork is unsafe here), got {mp_context!r}")
        self.step_timeout_s = step_timeout_s
        self.start_timeout_s = start_timeout_s
        self.max_steps = max_steps
        self.normalize_actions = normalize_actions
        self.environment = environment(engine)  # an unknown name fails here, not in every worker
        self.engine = engine
        self.workers_replaced = 0
        self._ctx = multiprocessing.get_context(mp_context)
        self._lock = threading.Lock()
        self._seq = itertools.count(1)
        self._episode_ids = itertools.count(1)
        self._closed = False
        self._broken: str | None = None
        self._workers = [_Worker(self, slot) for slot in range(num_workers)]
        _LIVE_POOLS.add(self)

    @property
    def num_workers(self) -> int:
        return len(self._workers)

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the current workers (replacements included)."""
        with self._lock:
            return [w.process.pid for w in self._workers if w.process.pid is not None]

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        """Block until every worker has imported the engine (so timings exclude start-up)."""
        deadline = time.monotonic() + timeout_s
        for worker in list(self._workers):
            if not worker.ready.wait(max(0.0, deadline - time.monotonic())):
                raise TimeoutError(f"env worker {worker.process.pid} not ready after {timeout_s}s")
        if self._broken:
            raise RuntimeError(self._broken)

    def _replace(self, dead: _Worker, exit_code: int | None) -> None:
        with self._lock:
            if self._closed:
                return
            if not dead.ready.is_set():
                self._broken = (
                    f"env worker exited with code {exit_code} before it was ready: the engine cannot start "
                    f"in a fresh process (see the worker's error above; is {self.engine} installed?)"
                )
                logger.error(self._broken)
                return
            self._workers[dead.slot] = _Worker(self, dead.slot)
            self.workers_replaced += 1
        logger.warning(
            "env worker %s (slot %d) exited with code %s; started a replacement",
            dead.process.pid,
            dead.slot,
            exit_code,
        )

    async def _request(
        self, episode: PooledEpisode, make: Callable[[int], StartRequest | StepRequest], timeout_s: float
    ) -> Reply | str:
        """Send one request for ``episode``; the reply, or the failure reason as a string."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        worker = episode._worker
        with self._lock:
            if episode._lost_reason or not worker.alive:
                return episode._lost_reason or REASON_WORKER_LOST
            seq = next(self._seq)
            worker.pending[seq] = _Pending(future, loop, timeout_s)
        worker.outbox.put(make(seq))
        try:
            reply = await future
        except asyncio.CancelledError:
            episode._fail(REASON_ABANDONED)
            raise
        if isinstance(reply, Reply) and reply.error is not None:
            return reply.error
        return reply

    def _assign(self, task: Task, start_timeout_s: float | None, step_timeout_s: float | None) -> PooledEpisode:
        with self._lock:
            if self._closed:
                raise RuntimeError("EnvPool is closed; create a new pool")
            if self._broken:
                raise RuntimeError(self._broken)
            worker = min((w for w in self._workers if w.alive), key=lambda w: len(w.episodes))
            episode = PooledEpisode(
                self,
                worker,
                next(self._episode_ids),
                task,
                start_timeout_s=start_timeout_s or self.start_timeout_s,
                step_timeout_s=step_timeout_s or self.step_timeout_s,
            )
            worker.episodes[episode.episode_id] = episode
        return episode

    def _release(self, episode: PooledEpisode) -> None:
        worker = episode._worker
        with self._lock:
            worker.episodes.pop(episode.episode_id, None)
            alive = worker.alive
            seq = next(self._seq)
        if alive:
            worker.outbox.put(CloseRequest(seq, episode.episode_id))

    @contextlib.asynccontextmanager
    async def episode(
        self,
        task: Task,
        with_walkthrough: bool = False,
        start_timeout_s: float | None = None,
        step_timeout_s: float | None = None,
    ) -> AsyncIterator[PooledEpisode]:
        """Start an episode of ``task`` from its initial state; release its engine on exit.

        Starting the same task M times gives M episodes from the same initial state (a worker that still
        holds the game only resets it). ``with_walkthrough`` also fetches the game's winning plan. The
        timeouts default to the pool's.
        """
        episode = self._assign(task, start_timeout_s, step_timeout_s)
        try:
            await episode._start(with_walkthrough)
            yield episode
        finally:
            self._release(episode)

    def close(self) -> None:
        """Stop and reap every worker process; waiting episodes end with "pool_closed". Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            workers = list(self._workers)
        for worker in workers:
            worker.shutdown()
        _LIVE_POOLS.discard(self)

    def __enter__(self) -> EnvPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@atexit.register
def _close_live_pools() -> None:
    for pool in list(_LIVE_POOLS):
        pool.close()
