"""What a ``global_step_N`` checkpoint holds, whether it is complete, and whether a run can resume from it.

verl's resume fails late and cryptically: a missing rank file is a ``FileNotFoundError`` deep inside a
Ray worker, a changed dataloader worker count an ``AssertionError`` with no message, an interrupted save
leaves a pointer to a half-written step. These checks run on the files alone (no process group, no
model), before any worker starts, and say in one line what to do.

Completeness follows verl's save order: every rank writes its model, optimizer and extra-state shards,
rank 0 writes ``fsdp_config.json`` and ``huggingface/``, then the trainer writes ``data.pt`` and finally
the pointer. A step folder is complete when its shards are all present and whole (a truncated ``.pt``
zip archive has no end record), ``fsdp_config.json`` is readable and ``data.pt`` exists; and, when the
trainer recorded a manifest of the save (`strata.checkpoint.manifest`, written after verl's save), when every
file it lists has the recorded size and, if asked (``checksums=True``: resume, export, reshard), checksum.
A step without a manifest (an older run) is judged by the structural check alone.

Damage inside a step never raises from `find_latest_checkpoint`: the step counts as incomplete and the
next older complete one is chosen, with a warning naming the damaged file.
"""

from __future__ import annotations

import json
import logging
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from strata.checkpoint.layout import (
    ACTOR_DIR,
    DATALOADER_FILE,
    FSDP_CONFIG_FILE,
    HF_DIR,
    MANIFEST_FILE,
    POINTER_FILE,
    SHARD_KINDS,
    parse_shard_file,
    parse_step,
    shard_file_name,
    step_dir_name,
    step_dirs,
)
from strata.checkpoint.lora import LoraMeta, read_lora_meta
from strata.checkpoint.manifest import ManifestError, manifest_problems, read_manifest
from strata.checkpoint.pointer import read_latest_pointer

logger = logging.getLogger(__name__)

_HF_WEIGHT_SUFFIXES = (".safetensors", ".bin")


class CheckpointError(RuntimeError):
    """A checkpoint cannot be used as asked; the message says what to do instead."""


@dataclass(frozen=True)
class RoleInfo:
    """One model role of a step (``actor``, ``critic``): its FSDP layout and which shards exist.

    Args:
        name: the folder name under ``global_step_N``.
        world_size: ranks that wrote shards (``fsdp_config.json``, else the shard file names).
        fsdp_version: 1 or 2 as recorded by verl; None when ``fsdp_config.json`` is missing.
        has_model / has_optimizer / has_extra_state: every rank's shard of that kind is present and whole.
        has_hf_config: ``huggingface/config.json`` exists (verl writes it on every save).
        has_hf_weights: ``huggingface/`` also holds weights (``checkpoint.save_contents`` had ``hf_model``).
        lora: the adapter's rank and alpha when the run trained LoRA (``lora_train_meta.json``), else None.
        missing: relative paths a complete save would have written but that are absent or truncated.
    """

    name: str
    world_size: int | None
    fsdp_version: int | None
    has_model: bool
    has_optimizer: bool
    has_extra_state: bool
    has_hf_config: bool
    has_hf_weights: bool
    missing: tuple[str, ...]
    lora: LoraMeta | None = None


@dataclass(frozen=True)
class CheckpointInfo:
    """A ``global_step_N`` folder as found on disk.

    Args:
        path: the ``global_step_N`` folder.
        step: N.
        roles: one entry per role folder (``actor`` first).
        has_dataloader_state: ``data.pt`` exists (the last file verl writes before the pointer).
        files: every file under ``path``, relative, sorted.
        missing: what a complete save would have written but is absent, truncated, unreadable or differs
            from the manifest, relative to ``path``, each with the reason in parentheses where there is one.
        has_manifest: the trainer recorded the save in ``strata_manifest.json`` (readable or not).
        checksums_verified: every file the manifest lists was read and matched its checksum.
        damaged: the entries of ``missing`` found by the manifest (a file absent, of another size or
            checksum than the save wrote; or the manifest itself unreadable).
    """

    path: Path
    step: int
    roles: tuple[RoleInfo, ...]
    has_dataloader_state: bool
    files: tuple[str, ...]
    missing: tuple[str, ...]
    has_manifest: bool = False
    checksums_verified: bool = False
    damaged: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        """All shards of every rank are whole and ``data.pt`` was written: safe to resume from."""
        return not self.missing

    @property
    def weights_problem(self) -> str | None:
        """Why `strata export` cannot write this step's weights (a predicate: "is damaged: ...", "has no ..."),
        None when it can: the actor's model shards whole,
        its ``huggingface/config.json`` there, none of them damaged. The one rule `export` and `inspect-checkpoint`
        share; a step can pass it and still be incomplete for resume (no ``data.pt``, no optimizer)."""
        damaged = [item for item in self.damaged if item.startswith((f"{ACTOR_DIR}/", MANIFEST_FILE))]
        if damaged:
            return f"is damaged: {', '.join(damaged[:4])}{', ...' if len(damaged) > 4 else ''}"
        if self.actor is None or not self.actor.has_model or not self.actor.has_hf_config:
            return f"has no complete {ACTOR_DIR}/ model shards with {ACTOR_DIR}/{HF_DIR}/config.json"
        return None

    @property
    def actor(self) -> RoleInfo | None:
        return next((role for role in self.roles if role.name == ACTOR_DIR), None)

    @property
    def world_size(self) -> int | None:
        return self.actor.world_size if self.actor else None

    @property
    def has_optimizer(self) -> bool:
        return bool(self.actor and self.actor.has_optimizer)

    @property
    def has_hf_weights(self) -> bool:
        return bool(self.actor and self.actor.has_hf_weights)


def describe_checkpoint(path: str | Path, checksums: bool = False) -> CheckpointInfo:
    """Read what ``path`` (a ``global_step_N`` folder) holds, from file names, archive end records and sizes.

    With ``checksums`` every file the step's manifest lists is also read and compared with its SHA-256
    (seconds per GB): do it before loading the step. Raises `CheckpointError` only when ``path`` is not a
    step folder at all, or for a damaged LoRA record (whose absence would silently change the export).
    """
    path = Path(path)
    if not path.is_dir():
        raise CheckpointError(f"no checkpoint folder at {path}; pass an existing .../global_step_N folder")
    step = parse_step(path)
    if step is None:
        inside = sorted(step_dirs(path))
        hint = f"; it holds global_step_{inside[-1]}" if inside else ""
        raise CheckpointError(
            f"{path} is not a global_step_N folder (verl reads the step from that name){hint}"
        )
    role_dirs = sorted(
        (child for child in path.iterdir() if child.is_dir() and _looks_like_role(child)),
        key=lambda child: (child.name != ACTOR_DIR, child.name),
    )
    roles = tuple(_describe_role(role_dir) for role_dir in role_dirs)
    missing = [f"{role.name}/{item}" for role in roles for item in role.missing]
    if not any(role.name == ACTOR_DIR for role in roles):
        missing.insert(0, f"{ACTOR_DIR}/")
    has_data = (path / DATALOADER_FILE).is_file() and zipfile.is_zipfile(path / DATALOADER_FILE)
    if not has_data:
        missing.append(DATALOADER_FILE)
    has_manifest, verified, damaged = (path / MANIFEST_FILE).is_file(), False, []
    try:
        recorded = read_manifest(path)
    except ManifestError as error:
        damaged.append(f"{MANIFEST_FILE} ({error})")
        recorded = None
    if recorded is not None:
        damaged = manifest_problems(path, recorded, checksums)
        verified = checksums and not damaged
    named = {item.split(" (")[0] for item in missing}
    missing += [item for item in damaged if item.split(" (")[0] not in named]
    files = tuple(sorted(str(file.relative_to(path)) for file in path.rglob("*") if file.is_file()))
    return CheckpointInfo(
        path=path, step=step, roles=roles, has_dataloader_state=has_data, files=files, missing=tuple(missing),
        has_manifest=has_manifest, checksums_verified=verified, damaged=tuple(damaged),
    )


def find_latest_checkpoint(checkpoint_root: str | Path) -> Path | None:
    """The ``global_step_N`` folder to resume from under ``checkpoint_root``, or None to start afresh.

    The pointer's step wins when that folder is complete. When the pointer is missing, unreadable or
    names a step whose save was interrupted or whose files are damaged (unreadable ``fsdp_config.json``, a
    file that differs from the save's manifest), the newest complete step is returned with a warning, so
    a crash during a save or a damaged file costs one checkpoint interval, never the run. Never returns
    an incomplete step. The step returned had its checksums verified when it has a manifest.
    """
    root = Path(checkpoint_root)
    candidates = step_dirs(root)
    pointed = read_latest_pointer(root)
    if pointed is not None and pointed in candidates:
        info = _describe_for_resume(candidates[pointed])
        if info is not None and info.complete:
            return info.path
        if info is not None:
            logger.warning(
                "%s names step %d but that save is incomplete or damaged (%s); looking for an older complete step",
                root / POINTER_FILE, pointed, ", ".join(info.missing[:4]),
            )
    elif pointed is not None:
        logger.warning("%s names step %d but %s does not exist", root / POINTER_FILE, pointed,
                       root / step_dir_name(pointed))
    for step in sorted(candidates, reverse=True):
        if pointed is not None and step >= pointed:
            continue  # never resume past the last committed step (the pointer's own step was judged above)
        info = _describe_for_resume(candidates[step])
        if info is not None and info.complete:
            logger.warning("resuming from %s, the newest complete checkpoint", info.path)
            return info.path
        if info is not None:
            logger.warning("skipping %s: incomplete or damaged (%s)", info.path, ", ".join(info.missing[:4]))
    return None


def _describe_for_resume(step: Path) -> CheckpointInfo | None:
    """``describe_checkpoint`` with checksums; None (with a warning) when the step cannot even be described."""
    try:
        return describe_checkpoint(step, checksums=True)
    except CheckpointError as error:
        logger.warning("skipping %s: %s", step, error)
        return None


def check_resumable(
    path: str | Path,
    world_size: int,
    dataloader_num_workers: int | None = None,
    load_contents: Sequence[str] = ("model", "optimizer", "extra"),
) -> None:
    """Raise :class:`CheckpointError` with one actionable line if verl cannot resume from ``path``.

    Args:
        path: the ``global_step_N`` folder the run would pass as ``trainer.resume_from_path``.
        world_size: the resuming run's ``trainer.nnodes * trainer.n_gpus_per_node``.
        dataloader_num_workers: the resuming run's ``data.dataloader_num_workers``; None skips the check.
        load_contents: ``actor_rollout_ref.actor.checkpoint.load_contents`` of the resuming run.
    """
    path = Path(path)
    if (path / POINTER_FILE).is_file() or (path.is_dir() and parse_step(path) is None and step_dirs(path)):
        latest = find_latest_checkpoint(path)
        hint = f"(latest complete: {latest})" if latest else "(none is complete)"
        raise CheckpointError(
            f"{path} is a checkpoint root, not a step: pass one of its global_step_N folders {hint}, "
            f"or use trainer.resume_mode=auto with trainer.default_local_dir={path}"
        )
    info = describe_checkpoint(path, checksums=True)
    actor = info.actor
    if actor is None:
        raise CheckpointError(
            f"{path} has no {ACTOR_DIR}/ folder, so it is not a verl trainer checkpoint; "
            f"pass the global_step_N folder written by the trainer "
            f"(it holds {ACTOR_DIR}/ and {DATALOADER_FILE})"
        )
    if info.missing:
        older = _newest_complete_sibling(path)
        hint = f"; resume from {older} instead" if older else ""
        raise CheckpointError(
            f"{path} is incomplete (missing, truncated or damaged: {', '.join(info.missing[:4])}"
            f"{', ...' if len(info.missing) > 4 else ''}), probably an interrupted save{hint}"
        )
    if actor.world_size != world_size:
        raise CheckpointError(
            f"{path} was saved at world size {actor.world_size} but this run has world size {world_size} "
            f"(trainer.nnodes x trainer.n_gpus_per_node); convert it first: "
            f"strata reshard --checkpoint {path} --world-size {world_size} --out NEW_DIR, "
            f"then resume from NEW_DIR/{path.name}"
        )
    if "optimizer" in load_contents and not actor.has_optimizer:
        raise CheckpointError(
            f"{path} has no optimizer shards (saved without 'optimizer' in checkpoint.save_contents); "
            f"resume with actor_rollout_ref.actor.checkpoint.load_contents=[model,extra] "
            f"to start a fresh optimizer"
        )
    if "extra" in load_contents and not actor.has_extra_state:
        raise CheckpointError(
            f"{path} has no extra_state shards (lr scheduler, RNG); resume with "
            f"actor_rollout_ref.actor.checkpoint.load_contents=[model,optimizer]"
        )
    if dataloader_num_workers is not None:
        saved = saved_dataloader_num_workers(path / DATALOADER_FILE)
        if saved != dataloader_num_workers:
            raise CheckpointError(
                f"{path} was saved with data.dataloader_num_workers={saved} but this run uses "
                f"{dataloader_num_workers}; torchdata cannot restore a dataloader across worker counts, "
                f"so resume with data.dataloader_num_workers={saved}"
            )


def saved_dataloader_num_workers(data_file: str | Path) -> int:
    """The ``num_workers`` a ``StatefulDataLoader`` state dict was saved with.

    torchdata's single-process state has ``_num_yielded`` at the top; the multi-process state keeps the
    worker count in ``_snapshot._main_snapshot._num_workers``. Loading one into the other kind of loader
    fails with a bare ``AssertionError``, which is why the count is checked before resuming.
    """
    import torch

    try:
        state = torch.load(data_file, weights_only=True, map_location="cpu")
    except Exception as error:  # noqa: BLE001 - torch reports a damaged archive as RuntimeError, pickle errors...
        raise CheckpointError(f"cannot read {data_file}: {error_line(error)}; the file is damaged") from error
    if not isinstance(state, dict):
        raise CheckpointError(f"{data_file} holds a {type(state).__name__}, not a dataloader state dict")
    if "_num_yielded" in state:
        return 0
    try:
        return int(state["_snapshot"]["_main_snapshot"]["_num_workers"])
    except (KeyError, TypeError) as error:
        raise CheckpointError(
            f"{data_file} is not a torchdata StatefulDataLoader state (no worker count found: {error!r}); "
            f"was it written by verl's trainer?"
        ) from error


def _looks_like_role(folder: Path) -> bool:
    if folder.name == ACTOR_DIR or (folder / FSDP_CONFIG_FILE).is_file():
        return True
    return any(parse_shard_file(child.name) for child in folder.iterdir())


def _describe_role(folder: Path) -> RoleInfo:
    shards = [parsed for child in folder.iterdir() if (parsed := parse_shard_file(child.name))]
    missing: list[str] = []
    fsdp_version: int | None = None
    world_size: int | None = None
    config_file = folder / FSDP_CONFIG_FILE
    config, problem = _read_fsdp_config(config_file)
    if config is not None:
        fsdp_version, world_size = config.get("FSDP_version"), config.get("world_size")
    else:
        missing.append(FSDP_CONFIG_FILE if problem is None else f"{FSDP_CONFIG_FILE} ({problem})")
        sizes = sorted({size for kind, size, _ in shards if kind == "model"})
        world_size = sizes[-1] if sizes else None
    has = {}
    for kind in SHARD_KINDS:
        expected = set(range(world_size or 0))
        existing, whole = _shard_ranks(folder, kind, expected, world_size)
        missing += [f"{shard_file_name(kind, world_size, rank)} (truncated)" for rank in sorted(existing - whole)]
        # model shards are always saved; optimizer/extra state may be left out by checkpoint.save_contents,
        # but if any rank wrote one, every rank must have.
        if kind == "model" or existing:
            missing += [shard_file_name(kind, world_size, rank) for rank in sorted(expected - existing)]
        has[kind] = bool(expected) and whole == expected
    if world_size is None:
        missing.append("model_world_size_W_rank_R.pt (no model shard at all)")
    hf = folder / HF_DIR
    hf_files = list(hf.iterdir()) if hf.is_dir() else []
    return RoleInfo(
        name=folder.name,
        world_size=world_size,
        fsdp_version=fsdp_version,
        has_model=has.get("model", False),
        has_optimizer=has.get("optim", False),
        has_extra_state=has.get("extra_state", False),
        has_hf_config=(hf / "config.json").is_file(),
        has_hf_weights=any(file.name.endswith(_HF_WEIGHT_SUFFIXES) for file in hf_files),
        missing=tuple(missing),
        lora=_lora_meta(folder),
    )


def _read_fsdp_config(file: Path) -> tuple[dict | None, str | None]:
    """verl's ``{"FSDP_version": 2, "world_size": W}``, or None and why not (None: the file is absent)."""
    if not file.is_file():
        return None, None
    try:
        config = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        return None, f"unreadable: {error}"
    world_size = config.get("world_size") if isinstance(config, dict) else None
    if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
        return None, "unreadable: no positive integer world_size"
    return config, None


def error_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0] if lines else ''}".rstrip(": ")


def _lora_meta(folder: Path) -> LoraMeta | None:
    try:
        return read_lora_meta(folder)
    except ValueError as error:
        raise CheckpointError(f"{error}; verl writes it for a LoRA run, so the step is damaged") from error


def _shard_ranks(folder: Path, kind: str, expected: set[int], world_size: int | None) -> tuple[set[int], set[int]]:
    """Ranks whose ``kind`` shard exists, and those whose shard is whole: ``torch.save`` writes a zip
    archive whose end record comes last, so a file cut short by a crash fails ``zipfile.is_zipfile``."""
    existing, whole = set(), set()
    for rank in expected:
        file = folder / shard_file_name(kind, world_size, rank)
        if file.is_file():
            existing.add(rank)
            if zipfile.is_zipfile(file):
                whole.add(rank)
    return existing, whole


def _newest_complete_sibling(path: Path) -> Path | None:
    step = parse_step(path)
    for other_step, other in sorted(step_dirs(path.parent).items(), reverse=True):
        if other_step != step and (info := _describe_for_resume(other)) is not None and info.complete:
            return other
    return None
