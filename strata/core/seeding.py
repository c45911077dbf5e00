"""Sampling seeds derived from where a generation sits in the run, not from when it was requested.

Why: a resumed run must repeat the uninterrupted run's next step exactly (same responses, so the same
loss and gradient). A rollout server's own random stream cannot give that: it advances with every
request, in whatever order concurrent requests arrive, and restarts from scratch after a resume. A seed
built from stable names (run seed, training step, task, strategy, trajectory, turn) gives every
request the same random numbers in both runs, on any number of servers, in any arrival order. vLLM
honours a per-request ``seed`` sampling parameter the same way the ``hf`` server does.
"""

from __future__ import annotations

import hashlib

SEED_BITS = 63  # non-negative and within int64, which both torch.Generator and vLLM accept


def derive_seed(*parts: object) -> int:
    """A seed in [0, 2**63) from ``parts`` (their ``repr``s): stable across processes, machines and runs.

    Unlike ``hash()``, it does not change with ``PYTHONHASHSEED``; different parts give unrelated seeds.
    """
    digest = hashlib.blake2b(repr(parts).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> (64 - SEED_BITS)


def task_sampling_seed(run_seed: int, split: str, index: int, step: int | None) -> int:
    """The sampling seed of one task's group: the run's ``rollout.seed``, the training ``step`` and the task.

    Validation (``step`` None) leaves the step out, so every validation of a run samples a game with the same
    random numbers and two of its evaluations differ only by the weights: step 0 and step N can be compared
    game by game (a paired evaluation, `strata.report.paired`).
    """
    return derive_seed(int(run_seed), "validation" if step is None else int(step), split, index)
