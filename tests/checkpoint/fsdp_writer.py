"""Write (and read back) real verl FSDP2 checkpoints on CPU, one gloo process per rank.

Run as a script by the tests (never imported by pytest): it spawns ``--world-size`` processes that each
wrap the model with verl's own ``apply_fsdp2`` (the call verl's FSDP engine makes), build AdamW with
verl's ``build_optimizer``, and save and load through verl's ``FSDPCheckpointManager`` — so the files are
exactly what a verl 0.9.1 trainer writes and the loader is exactly the one a resume runs.

    python tests/checkpoint/fsdp_writer.py --model M --world-size 2 --out ROOT/global_step_1 [--steps 1]
        [--load OTHER/global_step_1] [--dump full.pt] [--dataloader-workers 0]

``--load`` restores a checkpoint first (at this world size); ``--dump`` then writes, from rank 0, the full
parameters and optimizer state as verl loaded them (gathered across ranks), before any training step.
"""

from __future__ import annotations

import argparse
import os
import warnings
from pathlib import Path

import torch
import torch.multiprocessing as mp


def _worker(rank: int, args: argparse.Namespace, port: int) -> None:
    os.environ.update(
        RANK=str(rank), WORLD_SIZE=str(args.world_size), LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port), VERL_PLATFORM="cpu", VERL_ENGINE_DEVICE="cuda", OMP_NUM_THREADS="1",
    )
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from verl.trainer.config import CheckpointConfig
    from verl.utils.checkpoint.fsdp_checkpoint_manager import FSDPCheckpointManager
    from verl.utils.fsdp_utils import apply_fsdp2
    from verl.utils.torch_functional import get_constant_schedule_with_warmup
    from verl.workers.config import FSDPOptimizerConfig
    from verl.workers.config.optimizer import build_optimizer

    import strata.backends.verl_plugin  # noqa: F401  (registers the cpu platform verl asks for)

    torch.distributed.init_process_group("gloo", rank=rank, world_size=args.world_size)
    mesh = init_device_mesh("cpu", mesh_shape=(args.world_size,), mesh_dim_names=["fsdp"])
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32, attn_implementation="sdpa")
    policy = MixedPrecisionPolicy(param_dtype=torch.float32, reduce_dtype=torch.float32, cast_forward_inputs=True)
    apply_fsdp2(model, {"mesh": mesh, "mp_policy": policy, "reshard_after_forward": True}, {})
    optimizer = build_optimizer(model.parameters(), FSDPOptimizerConfig(lr=1e-3, weight_decay=0.01))
    scheduler = get_constant_schedule_with_warmup(optimizer=optimizer, num_warmup_steps=0)
    manager = FSDPCheckpointManager(
        model, optimizer, scheduler, processing_class=AutoTokenizer.from_pretrained(args.model),
        checkpoint_config=CheckpointConfig(),
    )
    if args.load:
        manager.load_checkpoint(str(Path(args.load) / "actor"))
    if args.dump:
        _dump_full_state(model, optimizer, scheduler, rank, Path(args.dump))
    generator = torch.Generator().manual_seed(args.seed * 1000 + rank)
    for _ in range(args.steps):
        tokens = torch.randint(0, 1000, (2, 12), generator=generator)
        loss = model(input_ids=tokens, labels=tokens).loss
        loss.backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
    if args.out:
        out = Path(args.out)
        manager.save_checkpoint(str(out / "actor"), global_step=int(out.name.rsplit("_", 1)[-1]))
        if rank == 0:
            _save_dataloader_state(out / "data.pt", args.dataloader_workers)
            from strata.checkpoint.pointer import write_latest_pointer

            write_latest_pointer(out.parent, int(out.name.rsplit("_", 1)[-1]))
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()


def _dump_full_state(model, optimizer, scheduler, rank: int, path: Path) -> None:
    """Gather what verl loaded into full tensors (a collective: every rank calls it)."""
    from torch.distributed.tensor import DTensor

    def full(value):
        return value.full_tensor() if isinstance(value, DTensor) else value

    params = {name: full(param.detach()) for name, param in model.named_parameters()}
    optim = optimizer.state_dict()
    state = {index: {key: full(value) for key, value in entry.items()} for index, entry in optim["state"].items()}
    if rank == 0:
        torch.save({"params": params, "optim_state": state, "param_groups": optim["param_groups"],
                    "lr_scheduler": scheduler.state_dict()}, path)


def _save_dataloader_state(path: Path, num_workers: int) -> None:
    """The dataloader state as verl's trainer writes it (torchdata StatefulDataLoader, one batch consumed)."""
    from torchdata.stateful_dataloader import StatefulDataLoader

    loader = StatefulDataLoader(list(range(8)), batch_size=2, num_workers=num_workers)
    iterator = iter(loader)
    next(iterator)
    torch.save(loader.state_dict(), path)
    del iterator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--world-size", type=int, required=True)
    parser.add_argument("--out", help="global_step_N folder to save to")
    parser.add_argument("--load", help="global_step_N folder to resume from first")
    parser.add_argument("--dump", help="write the loaded full state here (rank 0)")
    parser.add_argument("--steps", type=int, default=1, help="AdamW steps before saving")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dataloader-workers", type=int, default=0)
    parser.add_argument("--port", type=int, default=29650)
    args = parser.parse_args()
    mp.spawn(_worker, args=(args, args.port), nprocs=args.world_size, join=True)


if __name__ == "__main__":
    main()
