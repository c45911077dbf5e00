"""verl's v1 task runner, with StraTA's trainer registered in the Ray actor that runs it.

verl looks the trainer up by name (``trainer.v1.trainer_mode=strata``) in a process-local registry, inside
the task runner actor. Registering it there, when the actor is built, needs no Ray
``worker_process_setup_hook``: such a hook runs in every worker process as it starts, before Ray sets
``CUDA_VISIBLE_DEVICES`` for the actor it will host, and importing verl there queries CUDA, which then
sees every GPU for the life of the process (verl issue #1752). In a cluster the run joined, it also runs the
machine's own checks on every node before any worker starts (`strata.trainer.checks.nodes`).
"""

from __future__ import annotations

import ray
from omegaconf import DictConfig
from verl.trainer.main_ppo import TaskRunnerV1


class StrataTaskRunnerBase(TaskRunnerV1.__ray_actor_class__):
    """verl's ``TaskRunnerV1`` (the class under its ``@ray.remote``), registering the StraTA trainer first."""

    def __init__(self) -> None:
        import strata.trainer.strata_trainer  # noqa: F401  (registers trainer_mode "strata" in this process)

        super().__init__()

    def run(self, config: DictConfig) -> None:
        """Check every node of a joined cluster first (`strata.trainer.preflight.enforce_node_checks`)."""
        from strata.trainer.preflight import enforce_node_checks

        for warning in enforce_node_checks(config):
            print(f"strata: warning: {warning.check}: {warning.message}", flush=True)
        super().run(config)


StrataTaskRunner = ray.remote(StrataTaskRunnerBase)
