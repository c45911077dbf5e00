"""`strata build-tiny-model`: write a tiny random Qwen2 model folder for tests and the CPU demo."""

from __future__ import annotations

import argparse

from strata.assets.tiny_model import build_tiny_model
from strata.cli_output import add_force_argument, output_folder, without_progress_bars
from strata.cli_types import positive_int

EXAMPLE = "strata build-tiny-model --out outputs/tiny-qwen2.5 --seed 0"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="folder to write (created if missing; refused if not empty)")
    parser.add_argument("--seed", type=int, default=0, help="weight initialisation seed")
    parser.add_argument("--hidden-size", type=positive_int, default=64)
    parser.add_argument("--num-layers", type=positive_int, default=2)
    add_force_argument(parser, "a model")


def run(args: argparse.Namespace) -> int:
    without_progress_bars()
    out = build_tiny_model(output_folder(args.out, args.force), seed=args.seed, hidden_size=args.hidden_size,
                           num_hidden_layers=args.num_layers)
    print(f"tiny model written to {out}")
    return 0
