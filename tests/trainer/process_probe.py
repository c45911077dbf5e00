"""Runs one process's set-up step with CUDA queries trapped, and prints what happened as JSON.

Used by `test_process_setup.py`, one fresh interpreter per process, so that no module cache or registry
filled by another step hides a missing registration. verl and torch are imported first with plug-ins
off, as a GPU worker with ``VERL_PLATFORM=nvidia``. Then ``torch.cuda.is_available``,
``torch.cuda.device_count`` and ``torch.accelerator.is_available`` are trapped and the step runs. A call
is blamed on the innermost module being imported when it happened: from a third-party module's own
import-time code (verl's ``constants_ppo`` asks for the device capability) it is answered and listed, as
those run inside an actor once Ray has assigned its GPUs; from a strata module, or from a set-up step
itself, it is recorded and raises.

    python process_probe.py modules                      # the plug-in entry point, then every strata module
    python process_probe.py task_runner RUNNER CONFIG     # Ray's task runner actor, up to its manager
    python process_probe.py agent_loop_worker CONFIG      # Ray's agent-loop worker actor
"""

from __future__ import annotations

import importlib
import json
import os
import pickle
import pkgutil
import sys
import traceback
from importlib.metadata import entry_points

import torch
import verl

CALLS: list[dict] = []
THIRD_PARTY_IMPORT_CALLS: list[dict] = []
TRAPPED = {
    "torch.cuda.is_available": (torch.cuda, "is_available"),
    "torch.cuda.device_count": (torch.cuda, "device_count"),
    "torch.accelerator.is_available": (torch.accelerator, "is_available"),
}


def importing_module(stack: traceback.StackSummary) -> str:
    """The file whose module-level code is innermost on the stack (this probe, outside any import)."""
    return next(frame.filename for frame in reversed(stack) if frame.name == "<module>")


def trap(name: str, original):
    def trapped(*args, **kwargs):
        stack = traceback.extract_stack()[:-1]
        record = {"call": name, "stack": [f"{frame.filename}:{frame.lineno}" for frame in stack][-12:]}
        module = importing_module(stack)
        if "site-packages" in module:
            THIRD_PARTY_IMPORT_CALLS.append({"module": module, **record})
            return original(*args, **kwargs)
        CALLS.append({"module": module, **record})
        raise RuntimeError(f"{name} called during process set-up")

    return trapped


def load_actor_class(path: str) -> type:
    """What Ray does in the process hosting an actor: unpickle the class the creator exported."""
    with open(path, "rb") as f:
        return pickle.loads(f.read())


def modules() -> dict:
    for entry_point in entry_points(group="verl.plugins"):  # as verl's __init__ loads plug-ins
        entry_point.load()
    import strata

    failed = {}
    for info in pkgutil.walk_packages(strata.__path__, "strata."):
        try:
            importlib.import_module(info.name)
        except Exception as err:  # noqa: BLE001 (reported, and the test fails on it)
            failed[info.name] = repr(err)
    from verl.plugin.platform.platform_manager import PlatformRegistry

    return {"failed_imports": failed, "platforms": list(PlatformRegistry.registered_names()),
            "modules": sorted(m for m in sys.modules if m.split(".")[0] == "strata")}


def task_runner(runner_path: str, config_path: str) -> dict:
    from omegaconf import OmegaConf
    from verl.trainer.ppo.v1 import get_trainer_cls
    from verl.utils.import_utils import load_class_from_fqn

    runner = load_actor_class(runner_path)()  # the actor's __init__
    config = OmegaConf.load(config_path)
    trainer_cls = get_trainer_cls(config.trainer.v1.trainer_mode)  # TaskRunnerV1.run, first thing
    manager_cls = load_class_from_fqn(config.actor_rollout_ref.rollout.agent.agent_loop_manager_class,
                                      "AgentLoopManager")  # TaskRunnerV1.init_agent_loop_manager
    manager_cls(config=config, llm_client=None)
    return {"runner": type(runner).__ray_actor_class__.__qualname__,
            "trainer": f"{trainer_cls.__module__}.{trainer_cls.__qualname__}",
            "manager": f"{manager_cls.__module__}.{manager_cls.__qualname__}"}


def agent_loop_worker(config_path: str) -> dict:
    """What verl's ``AgentLoopWorker.__init__`` does with ``agent_loop_config_path``, then what its first
    ``_run_agent_loop`` does with the loop's entry: import the class named by ``_target_``."""
    from hydra.utils import get_class
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import _agent_loop_registry
    from verl.utils.import_utils import resolve_config_path

    config = OmegaConf.load(config_path)
    for entry in OmegaConf.load(resolve_config_path(config.actor_rollout_ref.rollout.agent.agent_loop_config_path)):
        _agent_loop_registry[entry.name] = entry
    loops = {name: get_class(entry["_target_"]) for name, entry in _agent_loop_registry.items()}
    return {"agent_loops": {name: f"{cls.__module__}.{cls.__qualname__}" for name, cls in loops.items()}}


def main() -> None:
    assert os.environ.get("VERL_USE_EXTERNAL_PLUGINS") == "none", "run with plug-ins off for the pre-import"
    for name, (module, attr) in TRAPPED.items():
        setattr(module, attr, trap(name, getattr(module, attr)))
    step, *args = sys.argv[1:]
    result = {"modules": modules, "task_runner": task_runner, "agent_loop_worker": agent_loop_worker}[step](*args)
    print(json.dumps({"verl": verl.__version__, "calls": CALLS, "third_party_import_calls": THIRD_PARTY_IMPORT_CALLS,
                      **result}))


if __name__ == "__main__":
    main()
