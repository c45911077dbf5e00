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

    folder = write_catalog(output_folder(args.out, args.force), args.products, args.seed)
    catalogs = [load_catalog(folder, goals=goals) for goals in ("synthetic", "human")]
    counts = "; ".join(f"{len(catalog.goals)} {catalog.goal_kind} goals ("
                       + ", ".join(f"{name} {len(catalog.split(name))}" for name in catalog.ranges) + ")"
                       for catalog in catalogs)
    print(f"wrote {len(catalogs[0].products)} products to {folder}: {counts}")
    return 0
