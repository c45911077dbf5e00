"""`strata make-games`: write verified ALFWorld games for one split (offline, from a seed)."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections import Counter
from pathlib import Path

from strata.cli_output import add_force_argument, output_folder
from strata.cli_types import non_negative_int, positive_int
from strata.envs.alfworld.discovery import DATA_VERSION_DIR
from strata.envs.alfworld.gen.grammar import DEFAULT_GRAMMAR_VERSION, GRAMMAR_VERSIONS
from strata.envs.alfworld.tasks import SPLITS, SUBTASKS, subtask_of
from strata.envs.errors import EnvError
from strata.staging import staged

EXAMPLE = "strata make-games --out outputs/games --split train --count 60 --seed 0 --task-types pick,clean"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="data folder; games go to OUT/json_2.1.1/SPLIT/")
    parser.add_argument("--split", choices=SPLITS, default="train")
    parser.add_argument("--count", type=positive_int, required=True, help="number of games (task types in turn)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--task-types", default="", help=f"comma-separated subtasks or task types ({','.join(SUBTASKS)})"
    )
    parser.add_argument(
        "--grammar-version",
        choices=GRAMMAR_VERSIONS,
        default=DEFAULT_GRAMMAR_VERSION,
        help="2.1.2: 'move X to Y' (alfworld 0.4.2's grammar); 2.1.1: 'put X in/on Y'",
    )
    parser.add_argument("--max-receptacles", type=non_negative_int, default=8,
                        help="room size cap (0: whole floor plan)")
    parser.add_argument("--max-object-classes", type=non_negative_int, default=5, help="object classes cap (0: all)")
    add_force_argument(parser, "the split's games (they are removed first)")


def run(args: argparse.Namespace) -> int:
    from strata.envs.alfworld.gen.generate import generate_split

    output_folder(args.out, force=True)  # never a file
    split_dir = output_folder(Path(args.out) / DATA_VERSION_DIR / args.split, args.force, option="--out's split")
    if args.force and split_dir.is_dir():
        shutil.rmtree(split_dir)  # replaced, not mixed: a split holds one generation's games
    try:
        with staged(split_dir) as staging:  # the split appears whole or not at all (Ctrl-C, an error)
            games = generate_split(
                args.out,
                args.split,
                args.count,
                seed=args.seed,
                task_types=[t for t in args.task_types.split(",") if t],
                grammar_version=args.grammar_version,
                max_receptacles=args.max_receptacles or None,
                max_object_classes=args.max_object_classes or None,
                folder=staging,
            )
    except EnvError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    counts = Counter(subtask_of(g.task_type) for g in games)
    print(
        f"wrote {len(games)} verified games to {args.out}/json_2.1.1/{args.split}: "
        + ", ".join(f"{sub} {counts[sub]}" for sub in SUBTASKS)
    )
    return 0
