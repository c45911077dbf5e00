"""`strata config-diff`: the keys two configs disagree on, infrastructure vs algorithm/optimisation."""

from __future__ import annotations

import argparse
import json
import sys

from strata.report.config_diff import diff_configs
from strata.report.config_resolve import ConfigSource, resolve_config

EXAMPLE = ("strata config-diff recipes/train-strata-alfworld-text-qwen2.5-1.5b.sh "
           "recipes/train-strata-alfworld-text-qwen2.5-7b.sh\n"
           "  strata config-diff strata_trainer strata_trainer --overrides-b trainer.n_gpus_per_node=8\n"
           "  strata config-diff outputs/run/config.yaml strata_trainer --overrides-b ...")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", help="a recipe script (resolved as DRY_RUN=1 does, with PY defaulting to this "
                                  "Python), a resolved config (.yaml/.json) or a config name in configs/")
    parser.add_argument("b", help="the same for the other side")
    parser.add_argument("--overrides-a", nargs="*", default=[], metavar="KEY=VALUE",
                        help="Hydra overrides for A (a config name), or A's extra arguments (a recipe)")
    parser.add_argument("--overrides-b", nargs="*", default=[], metavar="KEY=VALUE", help="the same for B")
    parser.add_argument("--config-dir", help="Hydra config folder (default: the project's configs/)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")


def run(args: argparse.Namespace) -> int:
    sources = (ConfigSource(args.a, tuple(args.overrides_a), args.config_dir),
               ConfigSource(args.b, tuple(args.overrides_b), args.config_dir))
    try:
        resolved = [resolve_config(source) for source in sources]
    except (ValueError, FileNotFoundError) as error:  # one line: a Hydra message may span several
        print(f"error: {' '.join(str(error).split())}", file=sys.stderr)
        return 2
    diff = diff_configs(*resolved, label_a=sources[0].label, label_b=sources[1].label)
    print(json.dumps(diff.to_dict(), indent=2, default=str) if args.json else diff.to_markdown())
    return 0
