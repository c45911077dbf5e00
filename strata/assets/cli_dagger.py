"""`strata dagger-alfworld-agent`: a built ALFWorld agent trained further on the expert's labels of its own states."""

from __future__ import annotations

import argparse
import json
import logging
import sys

from strata.assets.alfworld_agent import MANIFEST
from strata.assets.dagger import AgentFolderError, dagger_alfworld_agent
from strata.checkpoint.inspect import CheckpointError
from strata.cli_output import add_force_argument, output_folder, without_progress_bars
from strata.cli_types import positive_int

EXAMPLE = ("strata dagger-alfworld-agent --agent outputs/alfworld-agent --out outputs/alfworld-agent-dagger1"
           "   # ~10-20 min on 2 cores")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", required=True, help="a folder strata build-alfworld-agent wrote (read only)")
    parser.add_argument("--out", required=True,
                        help="folder of the new agent (created if missing; refused if not empty); it uses the "
                             "--agent folder's games, so keep that folder where it is")
    parser.add_argument("--checkpoint",
                        help="start from this RL step (a global_step_N of a run from --agent) instead of the agent's "
                             "own model: label where the policy RL left goes wrong")
    parser.add_argument("--rounds", type=positive_int, default=1,
                        help="DAgger rounds: play the training games, label the states reached, train further")
    parser.add_argument("--steps", type=positive_int, default=500, help="optimizer steps per round")
    add_force_argument(parser, "an agent")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    without_progress_bars()
    try:
        root = dagger_alfworld_agent(args.agent, output_folder(args.out, args.force), args.rounds, args.steps,
                                     args.checkpoint)
    except (AgentFolderError, CheckpointError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    dagger = manifest["dagger"]
    labels = sum(kind["labels"] for counts in dagger["rounds"] for kind in counts.values())
    start = f" from {dagger['start']}" if "start" in dagger else ""
    print(f"agent written to {root / 'model'}{start}: {labels} labels of its own states in {args.rounds} round(s); "
          f"held-out success {manifest['held_out_success']:.0%}"
          + (f"; fixed RL games {dagger['before']['train_fixed_success']:.0%} -> "
             f"{manifest['train_fixed_success']:.0%}, paired {dagger['train_fixed_change']} points"
             if "train_fixed_change" in dagger else "")
          + f"; {dagger['seconds'] / 60:.1f} min")
    return 0
