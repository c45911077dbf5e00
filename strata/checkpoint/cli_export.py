"""`strata export`: write a checkpoint as a Hugging Face model folder (bf16 safetensors, tokenizer)."""

from __future__ import annotations

import argparse
import logging
import sys
import time

from strata.checkpoint.export import TRAINING_STATE_DIR, export_hf
from strata.checkpoint.inspect import CheckpointError

EXAMPLE = "strata export --checkpoint ckpt/global_step_150 --out release/strata-qwen2.5-1.5b --release"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--checkpoint", required=True, help="the global_step_N folder to export")
    parser.add_argument("--out", required=True, help="new (or empty) folder for the model")
    parser.add_argument("--release", action="store_true",
                        help="also copy the FSDP shards into OUT/training_state/ so the run can be resumed")
    parser.add_argument("--max-shard-size", default="5GB",
                        help="split model.safetensors above this size, as the Hub does (default 5GB)")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    started = time.perf_counter()
    try:
        out = export_hf(args.checkpoint, args.out, release=args.release, max_shard_size=args.max_shard_size)
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    state = f", with {TRAINING_STATE_DIR}/ to resume from" if args.release else ""
    print(f"exported {args.checkpoint} to {out}{state} in {time.perf_counter() - started:.1f} s")  # the one line
    return 0
