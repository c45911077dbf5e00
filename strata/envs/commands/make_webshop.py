"""`strata make-webshop`: write a generated WebShop catalogue in WebShop's file layout (offline, from a seed)."""

from __future__ import annotations

import argparse

from strata.cli_output import add_force_argument, output_folder
from strata.cli_types import positive_int

EXAMPLE = "strata make-webshop --out outputs/webshop-gen --products 1000 --seed 0"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True,
                        help="data folder (WebShop's data/ file names; refused if not empty)")
    parser.add_argument("--products", type=positive_int, default=1000, help="products (two human goals each)")
    parser.add_argument("--seed", type=int, default=0)
    add_force_argument(parser, "a catalogue (WebShop's own items_*.json included)")


def run(args: argparse.Namespace) -> int:
    from strata.envs.webshop.catalog import load_catalog
    from strata.envs.webshop.generate import write_catalog
    from strata.envs.webshop.tasks import GOAL_RANGES

    folder = write_catalog(output_folder(args.out, args.force), args.products, args.seed)
    human, synthetic = load_catalog(folder), load_catalog(folder, goals="synthetic")
    sizes = ", ".join(f"{name} {len(human.split(name))}" for name in GOAL_RANGES)
    print(f"wrote {len(human.products)} products to {folder}: {len(human.goals)} human goals ({sizes}), "
          f"{len(synthetic.goals)} synthetic goals")
    return 0
