"""`strata build-alfworld-agent`: a tiny model that plays generated ALFWorld pick games, built offline."""

from __future__ import annotations

import argparse
import json
import logging

from strata.assets.alfworld_agent import MANIFEST, AgentRecipe, build_alfworld_agent
from strata.cli_output import without_progress_bars
from strata.cli_types import non_negative_int, positive_float, positive_int, probability
from strata.envs.alfworld.explorer import SEARCH_ORDERS

EXAMPLE = "strata build-alfworld-agent --out outputs/alfworld-agent   # ~15 min on 2 cores"
DEFAULTS = AgentRecipe()
MODEL_WIDTHS = (64, 128, 192, 256)  # 2 heads of 32, 64, 96 or 128: head sizes vLLM's CPU attention takes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="folder to write (created if missing; must not move later)")
    parser.add_argument("--train-games", type=positive_int, default=DEFAULTS.train_games,
                        help="generated training games the expert plays (split train)")
    parser.add_argument("--valid-games", type=positive_int, default=DEFAULTS.valid_games,
                        help="held-out games the agent is evaluated on (split valid_seen)")
    parser.add_argument("--rl-games", type=non_negative_int, default=DEFAULTS.rl_games,
                        help="games for RL that the warm start never sees (rl_train.parquet, seed game-seed + 1)")
    parser.add_argument("--rl-eval-games", type=non_negative_int, default=DEFAULTS.rl_eval_games,
                        help="first RL games played once after the warm start (training-side success, loops)")
    parser.add_argument("--orders-per-game", type=positive_int, default=DEFAULTS.orders_per_game,
                        help="expert episodes per training game, each with its own search order")
    parser.add_argument("--search-order", choices=SEARCH_ORDERS, default=DEFAULTS.search_order,
                        help="the expert's search order: random per episode, or the game's listing and its reverse")
    parser.add_argument("--misplaced-take-rate", type=probability, default=DEFAULTS.misplaced_take_rate,
                        help="chance that the expert first tries to take the object at a receptacle that lacks it "
                             "(a slip: shows the search going on after \"Nothing happens.\")")
    parser.add_argument("--history-window", type=positive_int, default=DEFAULTS.history_window,
                        help="past steps each action prompt shows (the RL recipe reads it from agent.json)")
    parser.add_argument("--hidden-size", type=int, choices=MODEL_WIDTHS, default=DEFAULTS.hidden_size,
                        help="the model's width (2 attention heads; vLLM's CPU kernels need heads of >= 32)")
    parser.add_argument("--num-layers", type=positive_int, default=DEFAULTS.num_layers, help="the model's depth")
    parser.add_argument("--steps", type=positive_int, default=DEFAULTS.steps, help="warm-start optimizer steps")
    parser.add_argument("--action-shares", type=positive_int, nargs=2, metavar=("STRATA", "FLAT"),
                        default=list(DEFAULTS.action_shares),
                        help="action examples a warm-start batch of 32 holds with StraTA's prompts and with the flat "
                             "baselines' (GRPO, GiGPO); equal shares give both the same start")
    parser.add_argument("--lr", type=positive_float, default=DEFAULTS.lr, help="warm-start learning rate")
    parser.add_argument("--game-seed", type=int, default=DEFAULTS.game_seed,
                        help="seed of the warm-start and held-out games (the RL games: seed + 1)")
    parser.add_argument("--seed", type=int, default=DEFAULTS.seed,
                        help="search orders, model initialisation, warm start")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("strata.envs.alfworld.gen.generate").setLevel(logging.WARNING)
    without_progress_bars()
    try:
        recipe = AgentRecipe(train_games=args.train_games, valid_games=args.valid_games, rl_games=args.rl_games,
                             rl_eval_games=args.rl_eval_games,
                             orders_per_game=args.orders_per_game, search_order=args.search_order,
                             misplaced_take_rate=args.misplaced_take_rate, history_window=args.history_window,
                             hidden_size=args.hidden_size, num_layers=args.num_layers, steps=args.steps, lr=args.lr,
                             game_seed=args.game_seed, seed=args.seed, action_shares=tuple(args.action_shares))
    except ValueError as error:
        raise SystemExit(f"error: {error}".replace("action_shares", "--action-shares", 1)) from None
    root = build_alfworld_agent(args.out, recipe)
    manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    print(f"agent written to {root / 'model'}: held-out success {manifest['held_out_success']:.0%} on "
          f"{recipe.valid_games} valid_seen games (T=0.7, as the trainer validates); "
          + (f"{manifest['train_fixed_success']:.0%} on the first {min(recipe.rl_eval_games, recipe.rl_games)} RL "
             f"games; " if "train_fixed_success" in manifest else "") +
          f"expert won {manifest['expert']['won']}/"
          f"{manifest['expert']['traces']} training traces; {sum(manifest['seconds'].values()) / 60:.1f} min")
    return 0
