"""Fixtures for the checkpoint tests.

Fast tests get checkpoint folders laid out exactly as verl 0.9.1 names them: the shard files are real
``torch.save`` zip archives of small dicts (completeness is decided from names and archive end records,
which is what those tests exercise) and ``data.pt`` is a real torchdata ``StatefulDataLoader`` state.

Slow tests get real FSDP2 checkpoints written by verl's own checkpoint manager (``fsdp_writer.py``, one
gloo process per rank), built once per session.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch


def write_dataloader_state(path: Path, num_workers: int = 0) -> Path:
    from torchdata.stateful_dataloader import StatefulDataLoader

    loader = StatefulDataLoader(list(range(8)), batch_size=2, num_workers=num_workers)
    iterator = iter(loader)
    next(iterator)
    torch.save(loader.state_dict(), path)
    del iterator
    return path


def _make_step(root: Path, step: int, world_size: int = 1, kinds: tuple[str, ...] = ("model", "optim", "extra_state"),
              data: bool = True, fsdp_config: bool = True, num_workers: int = 0) -> Path:
    """``root/global_step_{step}`` with every rank's shards of ``kinds``, fsdp_config.json and data.pt."""
    actor = root / f"global_step_{step}" / "actor"
    (actor / "huggingface").mkdir(parents=True, exist_ok=True)
    (actor / "huggingface" / "config.json").write_text("{}")
    for kind in kinds:
        for rank in range(world_size):
            torch.save({"rank": rank, "kind": kind}, actor / f"{kind}_world_size_{world_size}_rank_{rank}.pt")
    if fsdp_config:
        (actor / "fsdp_config.json").write_text(json.dumps({"FSDP_version": 2, "world_size": world_size}))
    if data:
        write_dataloader_state(actor.parent / "data.pt", num_workers)
    return actor.parent


def _truncate(path: Path) -> None:
    """What a process killed in the middle of ``torch.save`` leaves behind."""
    content = path.read_bytes()
    path.write_bytes(content[: len(content) // 2])


@pytest.fixture
def make_step():
    """Factory: ``make_step(root, step, world_size=1, kinds=(...), data=True, fsdp_config=True)``."""
    return _make_step


@pytest.fixture
def truncate():
    return _truncate


WRITER = Path(__file__).with_name("fsdp_writer.py")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_fsdp_writer(model: Path, world_size: int, *, out: Path | None = None, load: Path | None = None,
                    dump: Path | None = None, steps: int = 1, seed: int = 0) -> None:
    """Run ``fsdp_writer.py``: verl's FSDP2 wrapping and checkpoint manager on ``world_size`` gloo ranks."""
    command = [sys.executable, str(WRITER), "--model", str(model), "--world-size", str(world_size),
               "--steps", str(steps), "--seed", str(seed), "--port", str(_free_port())]
    for flag, value in (("--out", out), ("--load", load), ("--dump", dump)):
        if value is not None:
            command += [flag, str(value)]
    env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]


@pytest.fixture(scope="session")
def fsdp_writer():
    return run_fsdp_writer


@pytest.fixture(scope="session")
def fsdp_checkpoints(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path) -> dict[int, Path]:
    """Real verl FSDP2 checkpoints of the tiny model after one AdamW step: world size -> global_step_1."""
    steps = {}
    for world_size in (1, 2):
        root = tmp_path_factory.mktemp(f"ckpt-w{world_size}")
        run_fsdp_writer(tiny_model_dir, world_size, out=root / "global_step_1", seed=world_size)
        steps[world_size] = root / "global_step_1"
    return steps


@pytest.fixture(scope="session")
def loaded_by_verl(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path):
    """Factory: the full state verl's loader restores from a step at a world size (cached per step)."""
    cache: dict[tuple[Path, int], dict] = {}

    def load(step: Path, world_size: int) -> dict:
        if (step, world_size) not in cache:
            dump = tmp_path_factory.mktemp("dump") / "full.pt"
            run_fsdp_writer(tiny_model_dir, world_size, load=step, dump=dump, steps=0)
            cache[step, world_size] = torch.load(dump, weights_only=False)
        return cache[step, world_size]

    return load
