"""Checks of the configuration and the files it names: StraTA's keys, verl's own validation, task lists,
and the checkpoint to resume from."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from omegaconf import DictConfig, open_dict

from strata.trainer.checks.base import Level, run_env, select
from strata.trainer.config import ConfigError


def check_strata(config: DictConfig) -> None:
    """StraTA's own keys and the verl settings its trainer relies on; raises `ConfigError`."""
    from strata.core.config import StrataConfig

    try:
        StrataConfig.from_dict(config.strata)
    except ValueError as err:
        raise ConfigError(str(err)) from err
    for key in ("data.train_batch_size", "actor_rollout_ref.actor.ppo_mini_batch_size", "actor_rollout_ref.rollout.n"):
        require_positive_int(config, key)
    rollout = config.actor_rollout_ref.rollout
    if rollout.n != 1:
        raise ConfigError(
            f"actor_rollout_ref.rollout.n={rollout.n}: StraTA makes its own N strategies x M trajectories per task; "
            "set strata.num_stras_per_run / strata.num_trajs_per_stra and keep rollout.n=1."
        )
    if config.data.train_batch_size % config.actor_rollout_ref.actor.ppo_mini_batch_size:
        raise ConfigError(
            "data.train_batch_size must be a multiple of actor_rollout_ref.actor.ppo_mini_batch_size "
            "(both count tasks)."
        )
    check_env_and_run(config)


def require_positive_int(config: DictConfig, key: str) -> int:
    """The value at dotted ``key``, which must be a positive integer; `ConfigError` naming the key otherwise."""
    value = select(config, key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{key}={value!r} must be a positive integer")
    return value


def check_env_and_run(config: DictConfig) -> None:
    """The ``env`` and ``run`` keys the agent loop reads only once Ray and the rollout servers are up: a
    typo there must stop the run before that, not in every agent-loop worker."""
    from strata.core.rewards import REWARD_MODES
    from strata.workflow.dump import DumpSettings
    from strata.workflow.environments import environment_names

    env = config.get("env") or {}
    name, reward = str(env.get("name", "alfworld")), str(env.get("reward", "success"))
    if name not in environment_names():
        raise ConfigError(f"env.name={name!r} is not an environment; valid: {', '.join(environment_names())}")
    if reward not in REWARD_MODES:
        raise ConfigError(f"env.reward={reward!r} is not a reward mode; valid: {', '.join(REWARD_MODES)}")
    try:
        DumpSettings.from_config(config.get("run"))
    except ValueError as err:
        raise ConfigError(str(err)) from err


def environment(config: DictConfig) -> Iterator[tuple[Level, str]]:
    """What the environment needs beyond the project's Python packages, as its registry entry's ``host_check``
    says (ScienceWorld: Java; WebShop: spaCy's English model); an environment without one needs nothing more."""
    from strata.envs.registry import environment as registered
    from strata.envs.registry import environment_names

    name = str(select(config, "env.name", "alfworld"))
    if name not in environment_names() or not registered(name).host_check:
        yield Level.OK, name
        return
    for level, line in registered(name).part("host_check")(run_env(config)):
        yield Level(level), line


# Counts verl's start-up validation does arithmetic on: a string there (`key=abc`) would be a TypeError.
_VERL_INT_KEYS = (
    "data.train_batch_size", "data.dataloader_num_workers", "trainer.nnodes", "trainer.n_gpus_per_node",
    "trainer.total_epochs", "trainer.total_training_steps", "trainer.save_freq", "trainer.test_freq",
    "actor_rollout_ref.rollout.n", "actor_rollout_ref.actor.ppo_mini_batch_size",
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", "actor_rollout_ref.rollout.tensor_model_parallel_size",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu",
)


def validate_like_verl(config: DictConfig) -> None:
    """The checks verl's own ``main_ppo`` runs before starting Ray (may set ``trainer.device``)."""
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config
    from verl.utils.device import auto_set_device

    for key in _VERL_INT_KEYS:
        value = select(config, key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ConfigError(f"{key}={value!r} must be an integer")
    auto_set_device(config)
    from hydra.errors import InstantiationException

    try:
        validate_config(config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config))
    except InstantiationException as err:  # verl builds its config dataclasses through Hydra: the cause says why
        cause = err.__cause__ or err
        where = str(err).strip().splitlines()[-1] if str(err).strip() else ""
        where = f" ({where})" if where.startswith("full_key:") else ""
        raise ConfigError(f"verl rejects the config: {' '.join(str(cause).split())}{where}") from err
    except TypeError as err:  # a value of the wrong type (`key=abc` for a number) fails verl's arithmetic
        raise ConfigError(f"verl rejects the config: a value has the wrong type ({err}); "
                          f"check the numbers given as overrides") from err


def strata_keys(config: DictConfig) -> Iterator[tuple[Level, str]]:
    if "strata" not in config:
        yield Level.OK, "no strata section (a plain verl config)"
        return
    check_strata(config)
    yield Level.OK, "StraTA keys valid"


def verl_validation(config: DictConfig) -> Iterator[tuple[Level, str]]:
    try:
        validate_like_verl(config)
    except (AssertionError, ValueError) as err:  # verl states its start-up rules as asserts and ValueErrors
        if isinstance(err, ConfigError):
            raise
        yield Level.ERROR, f"verl rejects the config: {err}"
        return
    yield Level.OK, "verl's start-up validation passed"


def task_lists(config: DictConfig) -> Iterator[tuple[Level, str]]:
    """Every task list the config names exists, reads (a StraTA run's as its task lists, `read_task_list`: columns,
    rows, game files; a plain verl config's as parquet) and holds at least one row."""
    counts = []
    for key in ("train_files", "val_files", "interim_val_files"):
        files = select(config, f"data.{key}")
        if not files and key == "interim_val_files":
            continue  # optional: the interim validations then play data.val_files
        if not files:
            yield Level.ERROR, (f"data.{key} is not set: build task lists with `strata prepare-data --out DIR` and "
                                f"pass DATA=DIR (the recipes' variable) or data.{key}=.")
            continue
        for path in [files] if isinstance(files, str) else list(files):
            if "://" in str(path):
                counts.append(f"{path} (remote, not read)")
            elif Path(path).exists():
                try:
                    rows = _rows(path, strata="strata" in config)
                except ValueError as error:
                    yield Level.ERROR, f"data.{key}: {error}"
                    continue
                if not rows:
                    yield Level.ERROR, (f"data.{key} names {path}, which holds no task; rebuild it with "
                                        "`strata prepare-data`")
                    continue
                counts.append(f"{rows} in {Path(path).name}")
            else:
                yield Level.ERROR, (
                    f"data.{key} names {path}, which does not exist. Build the task lists with `strata prepare-data "
                    f"--out DIR` (`--bundled` offline) and pass DATA=DIR (the recipes' variable), or fix data.{key}."
                )
    if counts:
        yield Level.OK, f"task lists read: {', '.join(counts)} task(s)"


def _rows(path: str, strata: bool) -> int:
    """The rows of a task list: read as StraTA's (`read_task_list`) or, for a plain verl config, as any parquet.

    Raises:
        ValueError: it cannot be read as one (a `TaskListError` naming the file, or pyarrow's complaint).
    """
    if strata:
        from strata.envs.errors import TaskListError
        from strata.envs.task_list import read_task_list

        try:
            return len(read_task_list(path))
        except TaskListError as error:
            raise ValueError(str(error)) from None
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path).metadata.num_rows
    except (OSError, pa.ArrowException) as error:
        raise ValueError(f"{path} is not a readable parquet file ({error})") from None


def resolve_resume(config: DictConfig) -> None:
    """Pick and check the checkpoint to resume from, before any worker starts.

    ``resume_mode=auto`` resumes from the newest *complete* ``global_step_N`` (verl would trust the
    pointer file even if a crash left it empty or pointing at a half-written step); the choice is
    written back as ``resume_mode=resume_path``. A checkpoint that cannot resume (no ``actor/``, another
    world size, changed dataloader settings) raises `ConfigError` saying what to do.
    """
    from strata.checkpoint import CheckpointError, check_resumable, find_latest_checkpoint

    trainer = config.trainer
    if trainer.resume_mode == "auto" and trainer.default_local_dir:
        latest = find_latest_checkpoint(trainer.default_local_dir) if Path(trainer.default_local_dir).is_dir() else None
        if latest is None:
            return
        with open_dict(trainer):
            trainer.resume_mode, trainer.resume_from_path = "resume_path", str(latest)
    if trainer.resume_mode != "resume_path":
        return
    try:
        check_resumable(
            trainer.resume_from_path,
            world_size=trainer.nnodes * trainer.n_gpus_per_node,
            dataloader_num_workers=config.data.dataloader_num_workers,
            load_contents=list(config.actor_rollout_ref.actor.checkpoint.load_contents),
        )
    except CheckpointError as err:
        raise ConfigError(str(err)) from err


def resume(config: DictConfig) -> Iterator[tuple[Level, str]]:
    resolve_resume(config)
    if config.trainer.resume_mode == "resume_path":
        yield Level.OK, f"resumes from {config.trainer.resume_from_path}"
    else:
        yield Level.OK, f"starts from scratch (trainer.resume_mode={config.trainer.resume_mode})"
