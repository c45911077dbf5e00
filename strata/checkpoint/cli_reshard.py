"""`strata reshard`: convert a checkpoint's FSDP shards to another world size so verl can resume it."""

from __future__ import annotations

import argparse
import logging
import sys

from strata.checkpoint.inspect import CheckpointError
from strata.checkpoint.reshard import reshard_checkpoint
from strata.cli_types import positive_int

EXAMPLE = ("strata reshard --checkpoint ckpt/global_step_100 --world-size 8 --out ckpt-8gpu\n"
           "  # then: trainer.resume_mode=auto trainer.default_local_dir=ckpt-8gpu trainer.n_gpus_per_node=8")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--checkpoint", required=True, help="the global_step_N folder to convert")
    parser.add_argument("--world-size", type=positive_int, required=True,
                        help="ranks of the run that will resume (trainer.nnodes x trainer.n_gpus_per_node)")
    parser.add_argument("--out", required=True,
                        help="checkpoint root to write global_step_N and its pointer into (a new folder)")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        destination = reshard_checkpoint(args.checkpoint, args.world_size, args.out)
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"resharded to world size {args.world_size}: {destination}")
    return 0
