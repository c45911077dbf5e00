"""Training entry point: ``python -m strata.trainer.main [--config-name NAME] key=value ...``.

Composes the config (`strata.trainer.config.load_config`), runs the start-up checks
(`strata.trainer.preflight`), then hands over to verl's own runner as ``python -m verl.trainer.main_ppo``
would, with verl's task runner extended to register the StraTA trainer in its actor
(`strata.trainer.task_runner`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from strata.trainer.checks.inputs import check_strata, validate_like_verl
from strata.trainer.config import ConfigError, load_config
from strata.trainer.preflight import preflight
from strata.trainer.run_processes import GRACE_S, end_orphans, mark_run
from strata.trainer.shared_memory import remove_leftovers, shared_segments

DEFAULT_CONFIG = "strata_trainer"
RESOLVED_CONFIG_MARKER = "# --- resolved config ---"
RUN_CONFIG = "config.yaml"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m strata.trainer.main", description=__doc__)
    parser.add_argument("--config-name", default=DEFAULT_CONFIG, help="a config in configs/")
    parser.add_argument(
        "--dry-run", action="store_true",
        help="compose and validate the config as verl does at start-up, print it as YAML, and exit "
             "(no model or data needed: recipes are checked this way in CI)",
    )
    parser.add_argument(
        "--doctor", action="store_true", default=bool(os.environ.get("STRATA_DOCTOR")),
        help="run every start-up check on this machine, one line each, and exit (STRATA_DOCTOR=1 does the "
             "same, so `strata doctor RECIPE.sh` needs nothing from the recipe)",
    )
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. trainer.total_training_steps=2")
    return parser.parse_intermixed_args(argv)


def use_configured_platform(config: DictConfig) -> None:
    """Run this process on the verl platform the config gives Ray's workers (``VERL_PLATFORM``).

    ``+platform=cpu`` selects the ``cpu`` platform for the workers through
    ``ray_kwargs.ray_init.runtime_env.env_vars``; verl never picks it by itself. This process checks the
    config against its own platform (verl's ``auto_set_device`` rewrites ``trainer.device`` to it), so it
    must be the same one. Called before anything here asks verl for the platform, which verl fixes on first use.
    """
    platform = OmegaConf.select(config, "ray_kwargs.ray_init.runtime_env.env_vars.VERL_PLATFORM")
    if platform:
        os.environ["VERL_PLATFORM"] = str(platform)


# The driver's variables a run's workers need. A local Ray cluster is started by this process, so its workers
# inherit its environment; a running cluster's workers inherit their node's `ray start` shell instead.
FORWARDED_PREFIXES = ("VERL_", "STRATA_", "HF_", "TRANSFORMERS_", "TOKENIZERS_", "WANDB_", "VLLM_", "ALFWORLD_")
SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def join_running_cluster(config: DictConfig, env: Mapping[str, str] = os.environ) -> tuple[str, list[str]] | None:
    """Let ``ray.init`` join the Ray cluster that ``RAY_ADDRESS`` (or ``ray_kwargs.ray_init.address``) names.

    A multi-node run is started on a cluster brought up with ``ray start`` on every node (scripts/ray-node.sh,
    scripts/slurm-multinode.sh); each node declares its own CPUs and GPUs there. Ray refuses ``num_cpus``,
    ``num_gpus`` and ``_system_config`` when it joins a running cluster; configs/platform/cpu.yaml sets the first
    two for a local one and configs/strata_trainer.yaml the last (the head's `ray start` has its own), so they are
    cleared. The workers of a running cluster do not inherit this process's environment, so the variables the
    run reads there (``VERL_FILE_LOGGER_PATH``, ``HF_HUB_OFFLINE``, ``WANDB_MODE``, ...:
    `FORWARDED_PREFIXES`) go into the runtime env, unless the config sets them; secrets (names with KEY, TOKEN,
    SECRET, PASSWORD) are not copied into the config, whose resolved form is saved in the run folder.

    Returns the address joined and the secret variables left out, or None for a local cluster (config unchanged).
    """
    address = OmegaConf.select(config, "ray_kwargs.ray_init.address") or env.get("RAY_ADDRESS")
    if not address or address == "local":
        return None
    for key in ("num_cpus", "num_gpus", "resources", "_system_config"):
        if OmegaConf.select(config, f"ray_kwargs.ray_init.{key}") is not None:
            OmegaConf.update(config, f"ray_kwargs.ray_init.{key}", None, force_add=True)
    # In the config, so that the task runner, whose node need not have RAY_ADDRESS, knows it joined a cluster.
    OmegaConf.update(config, "ray_kwargs.ray_init.address", str(address), force_add=True)
    configured = OmegaConf.select(config, "ray_kwargs.ray_init.runtime_env.env_vars") or {}
    wanted = sorted(name for name in env if name.startswith(FORWARDED_PREFIXES) and name not in configured)
    secrets = [name for name in wanted if any(marker in name for marker in SECRET_MARKERS)]
    for name in wanted:
        if name not in secrets:
            OmegaConf.update(config, f"ray_kwargs.ray_init.runtime_env.env_vars.{name}", env[name], force_add=True)
    return str(address), secrets


def save_run_config(config: DictConfig) -> Path | None:
    """Write the resolved config to ``run.dir/config.yaml``, so the run folder describes itself: `strata
    show`, `strata curve` and `strata model-card` need only ``--run-dir``. A resumed run rewrites it (its
    overrides may differ); the previous one is kept as ``config.previous.yaml``.

    Both files are written to a temporary file in the same folder and renamed into place (``os.replace``), so
    a crash or a full disk leaves the old file or the new one, never half a YAML file, and ``config.yaml``
    exists at every moment once written.
    """
    run_dir = OmegaConf.select(config, "run.dir")
    if not run_dir:
        return None
    path = Path(run_dir) / RUN_CONFIG
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file():
        _replace_atomically(path.with_suffix(".previous.yaml"), path.read_bytes())
    _replace_atomically(path, OmegaConf.to_yaml(config, resolve=True).encode("utf-8"))
    return path


def _replace_atomically(path: Path, content: bytes) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        config = load_config(args.config_name, args.overrides)
        use_configured_platform(config)
        if args.doctor:
            from strata.trainer.checkup import run_doctor

            return run_doctor(config)
        if args.dry_run:
            if "strata" in config:
                check_strata(config)
            try:
                validate_like_verl(config)
            except (AssertionError, ValueError) as err:  # verl's start-up rules (ConfigError is a ValueError)
                raise err if isinstance(err, ConfigError) else ConfigError(f"verl rejects the config: {err}") from err
            print(RESOLVED_CONFIG_MARKER)
            print(OmegaConf.to_yaml(config, resolve=True))
            from strata.trainer.dry_run import summary_lines

            print(*summary_lines(config), sep="\n")
            return 0
        for warning in preflight(config):
            print(f"strata: warning: {warning.check}: {warning.message}", file=sys.stderr)
    except ConfigError as err:
        for line in str(err).splitlines():
            print(f"strata: {line}", file=sys.stderr)
        return 2

    from verl.trainer.main_ppo import run_ppo

    from strata.trainer.task_runner import StrataTaskRunner

    OmegaConf.resolve(config)  # `${strata_file:...}` resolves here, where its resolver is registered
    joined = join_running_cluster(config)
    if joined:
        address, secrets = joined
        print(f"strata: joining the Ray cluster at {address}: its nodes' own CPUs and GPUs apply "
              f"(ray_kwargs.ray_init.num_cpus/num_gpus are not passed)", file=sys.stderr)
        if secrets:
            print(f"strata: not forwarded to the cluster's workers (secrets): {', '.join(secrets)}; they see "
                  f"them only if each node's `ray start` ran with them set", file=sys.stderr)
    save_run_config(config)
    segments_before = shared_segments()
    run_mark = mark_run()  # after `join_running_cluster`, which forwards STRATA_* variables to a cluster's workers
    try:
        run_ppo(config, task_runner_class=StrataTaskRunner)
    finally:
        shut_down_ray(segments_before, run_mark)
    return 0


def shut_down_ray(segments_before: set[Path], run_mark: str) -> None:
    """End Ray's actors now rather than at interpreter exit, then the processes they started that outlive them
    (`strata.trainer.run_processes`), then remove the shared memory they left."""
    import ray

    if ray.is_initialized():
        ray.shutdown()
    killed = end_orphans(run_mark)
    if killed:
        names = ", ".join(f"{name} (pid {pid})" for pid, name in killed.items())
        print(f"strata: ended {len(killed)} process(es) of the run still running {GRACE_S:.0f} s after Ray's "
              f"shutdown: {names}", file=sys.stderr)
    removed = remove_leftovers(segments_before)
    if removed:
        print(f"strata: removed {len(removed)} shared-memory segment(s), {sum(removed.values()) / 2**20:.0f} MiB, "
              f"that the run's Ray actors left in /dev/shm", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
