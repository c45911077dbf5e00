"""What one start-up check reports: a level and one line saying what is wrong and what to do."""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from omegaconf import DictConfig, OmegaConf


class Level(enum.Enum):
    """How bad a finding is: ERROR stops the trainer at start-up, WARNING is printed and the run goes on."""

    OK = "ok"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True)
class Finding:
    """One line of the report: which check, how bad, and (for a problem) what to do about it."""

    check: str
    level: Level
    message: str

    def line(self) -> str:
        label = "ok" if self.level is Level.OK else self.level.value.upper()
        return f"{label:<8}{self.check:<11}{self.message}"


# A check yields (level, message) pairs; raising `ConfigError` counts as one ERROR with its message.
Check = Callable[[DictConfig], Iterator[tuple[Level, str]]]


def select(config: DictConfig, key: str, default: Any = None) -> Any:
    """``config``'s value at dotted ``key``; ``default`` when absent or left mandatory (``???``)."""
    value = OmegaConf.select(config, key, default=default, throw_on_missing=False)
    return default if value is None else value


def run_env(config: DictConfig) -> dict[str, str]:
    """The environment the run's processes see: this process's, plus the Ray runtime env's variables."""
    extra = select(config, "ray_kwargs.ray_init.runtime_env.env_vars", {}) or {}
    return {**os.environ, **{str(k): str(v) for k, v in extra.items()}}


def uses_cpu_platform(config: DictConfig) -> bool:
    """Whether the config selects the project's `cpu` platform (configs/platform/cpu.yaml), so needs no GPU.

    ``VERL_PLATFORM=cpu`` is what selects it; ``trainer.device=cpu`` is the same intent stated in verl's key.
    """
    return run_env(config).get("VERL_PLATFORM") == "cpu" or select(config, "trainer.device") == "cpu"


def uses_reference(config: DictConfig) -> bool:
    """Whether verl builds a reference model (a KL loss or a KL penalty in the reward)."""
    return bool(select(config, "actor_rollout_ref.actor.use_kl_loss", False)
                or select(config, "algorithm.use_kl_in_reward", False))


# Bytes per parameter of each part of the training state that lives either on the GPUs or, offloaded, in host
# memory, sharded over the run's ranks: the actor's fp32 parameters, Adam's two fp32 moments, the reference's
# fp32 parameters (the recipes' headers do the same arithmetic).
STATE_BYTES_PER_PARAM = {"actor": 4, "optimizer": 8, "ref": 4}


def offloaded_parts(config: DictConfig) -> list[str]:
    """What the run keeps in host memory between its phases: of ``actor`` (fp32 parameters), ``optimizer`` (Adam's
    moments) and ``ref`` (the reference's parameters, when there is a reference), in that order."""
    actor, ref = "actor_rollout_ref.actor.fsdp_config", "actor_rollout_ref.ref.fsdp_config"
    parts = [("actor", f"{actor}.param_offload"), ("optimizer", f"{actor}.optimizer_offload"),
             ("ref", f"{ref}.param_offload")]
    return [name for name, key in parts if select(config, key, False) and (name != "ref" or uses_reference(config))]
