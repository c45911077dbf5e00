"""`strata build-learning-check`: write the learning check's games, task lists, preset and warm-started model."""

from __future__ import annotations

import argparse
import logging

from strata.assets.learning_check import TRAIN_GAMES, VALID_GAMES, build_learning_check_assets
from strata.cli_output import without_progress_bars
from strata.cli_types import positive_int

EXAMPLE = "strata build-learning-check --out outputs/magic-word-assets"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="folder to write (created if missing; must not move later)")
    parser.add_argument("--train-games", type=positive_int, default=TRAIN_GAMES)
    parser.add_argument("--valid-games", type=positive_int, default=VALID_GAMES)
    parser.add_argument("--seed", type=int, default=0, help="game order, model initialisation and warm start")
    parser.add_argument("--without-model", action="store_true",
                        help="only the preset, games and task lists (what a recipe's dry run needs)")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    without_progress_bars()
    out = build_learning_check_assets(args.out, args.train_games, args.valid_games, args.seed,
                                      with_model=not args.without_model)
    print(f"learning-check assets written to {out}")
    return 0
