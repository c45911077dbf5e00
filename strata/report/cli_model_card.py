"""`strata model-card`: write a release README.md from the run's own logs, config and evaluation."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from strata.checkpoint.inspect import CheckpointError
from strata.report.config_resolve import ConfigSource
from strata.report.curve import SUCCESS_KEY
from strata.report.model_card import DEFAULT_LICENSE, write_model_card
from strata.report.schema import EvalSchemaError

EXAMPLE = ("strata model-card --run-dir outputs/demo/learning\n"
           "  strata model-card --run-dir outputs/run --eval eval/report.json --out release/README.md "
           "--recipe strata_trainer --recipe-overrides trainer.n_gpus_per_node=2 ...")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run-dir", required=True, help="the run's output folder (hydra.run.dir)")
    parser.add_argument("--eval", nargs="+",
                        help="a report JSON from `strata report-eval`, or per-seed evaluation JSONs (default: the "
                             "run folder's eval/eval_seed*.json, as the tiny recipes write them)")
    parser.add_argument("--out", help="README.md to write, normally inside the release folder that `strata export` "
                                      "wrote (default: RUN/model-card/README.md, the card and curve alone)")
    parser.add_argument("--name", help="model name for the title (default: the run's trainer.experiment_name)")
    parser.add_argument("--license", help="the card's `license:` for the Hub, a Hub license id (default: the base "
                                          "model's, read from its local folder's README.md when there is one, "
                                          f"else {DEFAULT_LICENSE}, the license of Qwen2.5-1.5B/7B-Instruct that "
                                          "the recipes start from)")
    parser.add_argument("--base-model", metavar="ORG/NAME",
                        help="the card's `base_model:` Hub id (default: the run's model path when it is a Hub id "
                             "or a Hub cache folder; a local model of its own gets none)")
    parser.add_argument("--recipe", help="the recipe's config name (or resolved .yaml) to list differences from")
    parser.add_argument("--recipe-overrides", nargs="*", default=[], metavar="KEY=VALUE",
                        help="the recipe's Hydra overrides")
    parser.add_argument("--log", action="append", default=[], help="metric log(s) if not found in --run-dir")
    parser.add_argument("--config", help="the run's resolved config if not found in --run-dir")
    parser.add_argument("--metric", default=SUCCESS_KEY, help=f"curve metric (default {SUCCESS_KEY})")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    recipe = ConfigSource(args.recipe, tuple(args.recipe_overrides)) if args.recipe else None
    if not Path(args.run_dir).is_dir():  # said first: without it, its missing eval/ folder would be the error
        print(f"error: no run folder at {args.run_dir}; pass the run's hydra.run.dir", file=sys.stderr)
        return 2
    evaluations = args.eval or sorted(str(p) for p in Path(args.run_dir).glob("eval/eval_seed*.json"))
    if not evaluations:
        print(f"error: no evaluation in {args.run_dir}/eval (eval_seed*.json); pass --eval", file=sys.stderr)
        return 2
    out = args.out or Path(args.run_dir) / "model-card" / "README.md"
    try:
        out = write_model_card(args.run_dir, evaluations, out, recipe=recipe, name=args.name,
                               metric=args.metric, logs=args.log, config=args.config, license_id=args.license,
                               base_model=args.base_model)
    except (EvalSchemaError, CheckpointError, KeyError, ValueError, FileNotFoundError) as error:
        print(f"error: {error.args[0] if error.args else error}", file=sys.stderr)
        return 2
    print(f"model card written to {out}")
    return 0
