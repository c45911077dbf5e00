"""How FSDP2 lays a tensor out across ranks, and how to move it to another world size.

verl 0.9.1 saves ``model.state_dict()`` and ``optimizer.state_dict()`` of a ``fully_shard``-ed model
per rank. Every parameter, and every AdamW ``exp_avg`` / ``exp_avg_sq``, is a ``DTensor`` on a 1-D
device mesh (``fsdp``) with placement ``Shard(0)``: rank r holds rows ``[r*c, min((r+1)*c, n))`` of
dim 0, with ``c = ceil(n / W)`` (``torch.chunk``), trailing ranks possibly empty. The saved local
tensors carry no padding (FSDP2 pads only its internal all-gather buffer). Scalars such as AdamW's
``step`` are plain tensors, equal on every rank.

Tied weights (``lm_head`` and ``embed_tokens`` with ``tie_word_embeddings``) are two DTensors sharing
one local storage; :func:`reshard_tree` keeps them shared so files do not double in size.

Everything here works on loaded objects, without a process group: the device mesh of a new shard is
built the way ``init_device_mesh`` records it in the files (same device type, dim names and process
group name), so verl's loader on W' ranks finds the group it expects.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor, Shard
from torch.distributed.tensor._dtensor_spec import DTensorSpec, TensorMeta  # DTensor's spec: see _reshard_dtensor

from strata.checkpoint.inspect import CheckpointError, error_line

_MESH_LOGGER = "torch.distributed.device_mesh"


def shard_rows(num_rows: int, world_size: int, rank: int) -> tuple[int, int]:
    """Rows ``[start, stop)`` of dim 0 that FSDP2 gives ``rank`` of ``world_size`` (``torch.chunk`` split)."""
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is outside world size {world_size}")
    chunk = -(-num_rows // world_size)
    start = min(rank * chunk, num_rows)
    return start, min(start + chunk, num_rows)


@contextlib.contextmanager
def quiet_mesh_unpickling() -> Iterator[None]:
    """Silence torch's warning that a pickled DeviceMesh has no live process group (expected offline)."""
    mesh_logger = logging.getLogger(_MESH_LOGGER)
    level = mesh_logger.level
    mesh_logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        mesh_logger.setLevel(level)


def load_shard(path: Any) -> Any:
    """``torch.load`` a verl shard file memory-mapped: tensors are read from disk only when sliced.

    The files hold pickled DTensors and device meshes, so ``weights_only`` cannot be used; load only
    checkpoints you trust, exactly as verl itself does. A file torch cannot read (a damaged archive: torch
    says ``Expected hasRecord("version")``) raises :class:`CheckpointError` naming it.
    """
    try:
        with quiet_mesh_unpickling():
            return torch.load(path, map_location="cpu", mmap=True, weights_only=False)
    except Exception as error:  # noqa: BLE001 - torch reports damage as RuntimeError, pickle errors, EOFError...
        raise CheckpointError(f"cannot load {path}: {error_line(error)}; the shard is damaged, "
                              f"use another step (strata inspect-checkpoint lists them)") from error


def full_tensor(shards: Sequence[DTensor], where: str = "tensor") -> torch.Tensor:
    """The whole tensor a list of per-rank ``Shard(0)`` DTensors describes (rank order)."""
    _check_layout(shards, where)
    return torch.cat([shard._local_tensor for shard in shards], dim=0)


def reshard_tree(sources: Sequence[Any], world_size: int, rank: int) -> Any:
    """Rank ``rank``'s share, at ``world_size``, of a state tree saved by every rank of another world size.

    ``sources[r]`` is what rank r saved (a model or optimizer state dict). Dicts, lists and tuples are
    walked in parallel; DTensors are re-split on dim 0; any other value must be the same on every rank
    (step counters, hyperparameters) and is copied. Tensors that shared storage in the sources share it
    in the result.
    """
    resharded: dict[tuple, DTensor] = {}
    mesh: DeviceMesh | None = None

    def walk(values: Sequence[Any], where: str) -> Any:
        nonlocal mesh
        first = values[0]
        if isinstance(first, DTensor):
            _check_layout(values, where)
            key = _storage_key(values)
            if key not in resharded:
                if mesh is None:
                    mesh = build_mesh(first.device_mesh, world_size, rank)
                resharded[key] = _reshard_dtensor(values, mesh, world_size, rank)
            return resharded[key]
        if isinstance(first, dict):
            keys = list(first)
            if any(not isinstance(other, dict) or list(other) != keys for other in values[1:]):
                raise CheckpointError(f"ranks saved different keys at {where or 'the top level'}; "
                                      f"the shards do not belong to one checkpoint")
            # same mapping type as saved (verl's model state dict is an OrderedDict)
            return type(first)((key, walk([value[key] for value in values], f"{where}.{key}" if where else str(key)))
                               for key in keys)
        if isinstance(first, list | tuple):
            if any(len(other) != len(first) for other in values[1:]):
                raise CheckpointError(f"ranks saved lists of different lengths at {where}")
            items = [walk([value[i] for value in values], f"{where}[{i}]") for i in range(len(first))]
            return tuple(items) if isinstance(first, tuple) else items
        if isinstance(first, torch.Tensor):
            if any(not torch.equal(first, other) for other in values[1:]):
                raise CheckpointError(f"{where} is a plain tensor that differs between ranks, so it is "
                                      f"rank-local state that cannot be resharded")
            return first.clone()
        if any(other != first for other in values[1:]):
            raise CheckpointError(f"{where} differs between ranks ({first!r} vs others); cannot reshard it")
        return first

    return walk(list(sources), "")


def build_mesh(template: DeviceMesh, world_size: int, rank: int) -> DeviceMesh:
    """The 1-D device mesh rank ``rank`` of ``world_size`` records when verl saves, built without a group.

    ``init_device_mesh`` on the live run names its process group; the name is stored with the mesh and
    resolved again when verl's loader unpickles it, so it is copied from the source mesh.
    """
    mesh = DeviceMesh(
        template.device_type,
        torch.arange(world_size),
        mesh_dim_names=template.mesh_dim_names,
        _init_backend=False,
        _rank=rank,
    )
    group_names = getattr(template, "_dim_group_names", None)
    if group_names is not None:
        mesh._dim_group_names = list(group_names)
    return mesh


def _storage_key(shards: Sequence[DTensor]) -> tuple:
    """Identifies a tensor by where its shards live, so tied weights map to one resharded tensor."""
    return (tuple(shards[0].shape), tuple(
        (shard._local_tensor.untyped_storage().data_ptr(), shard._local_tensor.storage_offset(),
         tuple(shard._local_tensor.shape)) for shard in shards))


def _reshard_dtensor(sources: Sequence[DTensor], mesh: DeviceMesh, world_size: int, rank: int) -> DTensor:
    first = sources[0]
    start, stop = shard_rows(first.shape[0], world_size, rank)
    pieces = []
    offset = 0
    for shard in sources:
        local = shard._local_tensor
        lo, hi = max(start, offset), min(stop, offset + local.shape[0])
        if lo < hi:
            pieces.append(local[lo - offset:hi - offset])
        offset += local.shape[0]
    # cat copies, so the new shard owns exactly its rows (a saved view would drag its whole storage along).
    local = torch.cat(pieces, dim=0) if pieces else first._local_tensor.new_empty((0, *first.shape[1:]))
    # Built from its spec, not with DTensor.from_local: that moves the local tensor to the mesh's device type, and a
    # checkpoint saved on GPUs records "cuda" (on a CPU host: "Torch not compiled with CUDA enabled"; on a GPU host
    # every shard lands on one GPU). The shard stays where it was loaded (the CPU), as verl's own checkpoints with
    # offloaded parameters keep it.
    spec = DTensorSpec(mesh, (Shard(0),), tensor_meta=TensorMeta(first.shape, first.stride(), local.dtype))
    return DTensor(local.contiguous(), spec, requires_grad=False)


def _check_layout(shards: Sequence[DTensor], where: str) -> None:
    """Refuse anything but the 1-D ``Shard(0)`` layout described above (HSDP, TP, or a changed verl)."""
    world_size = len(shards)
    for rank, shard in enumerate(shards):
        if not isinstance(shard, DTensor):
            raise CheckpointError(f"{where} is a DTensor on some ranks but not on rank {rank}")
        if shard.device_mesh.ndim != 1 or tuple(shard.placements) != (Shard(0),):
            raise CheckpointError(
                f"{where} is sharded as {shard.placements} on a {shard.device_mesh.ndim}-D mesh; only "
                f"FSDP2 with one Shard(0) mesh dimension (actor.fsdp_config.fsdp_size=-1) can be resharded"
            )
        if shard.device_mesh.size() != world_size:
            raise CheckpointError(f"{where}: rank {rank}'s mesh has {shard.device_mesh.size()} ranks, "
                                  f"but {world_size} shard files were given")
        start, stop = shard_rows(shard.shape[0], world_size, rank)
        if shard._local_tensor.shape[0] != stop - start or shard.shape != shards[0].shape:
            raise CheckpointError(
                f"{where}: rank {rank} holds {tuple(shard._local_tensor.shape)} of {tuple(shard.shape)}, not "
                f"rows {start}:{stop} as FSDP2's even Shard(0) split gives; this layout cannot be resharded"
            )
