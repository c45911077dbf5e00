"""ALFWorld engine cost: load, reset and step with textworld's `PddlEnv` and with the project's `MemoizedPddlEnv`.

    .venv/bin/python benchmarks/bench_alfworld_engine.py                    # 12 bundled games, 30 steps each
    .venv/bin/python benchmarks/bench_alfworld_engine.py --games 24 --steps 15 --repeats 3

Both engines play the same games with the same seeded random commands (the admissible ones and one the room
refuses), in this process, one after the other, ``--repeats`` times in alternation; every observation and command
list must be equal (the run stops otherwise). Reported: milliseconds per load, reset and step (the best repeat:
least disturbed by other work on the machine). Not a test: the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time

from strata.envs.alfworld.bundled import bundled_data_path
from strata.envs.alfworld.discovery import load_split
from strata.envs.alfworld.engine import AlfworldEngine


def textworld_env():
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos
    from textworld.envs import PddlEnv

    infos = textworld.EnvInfos(won=True, admissible_commands=True, extras=["gamefile"])
    return AlfredInfos(AlfredDemangler(PddlEnv(infos), shuffle=False))


def play(env, games: list[str], steps: int) -> tuple[dict[str, float], list]:
    """Seconds spent loading, resetting and stepping, and everything the games showed."""
    spent = {"load": 0.0, "reset": 0.0, "step": 0.0}
    seen = []
    for seed, game in enumerate(games):
        rng = random.Random(seed)
        start = time.perf_counter()
        env.load(game)
        spent["load"] += time.perf_counter() - start
        start = time.perf_counter()
        state = env.reset()
        spent["reset"] += time.perf_counter() - start
        seen.append(state.feedback)
        for _ in range(steps):
            command = rng.choice([*state["admissible_commands"], "take the moon from the sky"])
            start = time.perf_counter()
            state, _, _ = env.step(command)
            spent["step"] += time.perf_counter() - start
            seen.append((state.feedback, state["won"], tuple(state["admissible_commands"])))
    return spent, seen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    data = bundled_data_path(cache_dir=tempfile.mkdtemp(prefix="bench-engine-"))
    games = [task.game_file for task in load_split(data, "train")[: args.games]]
    engines = {"textworld PddlEnv": textworld_env(), "MemoizedPddlEnv": AlfworldEngine()._env}
    best: dict[str, dict[str, float]] = {}
    shown = {}
    for _ in range(args.repeats):
        for name, env in engines.items():
            spent, shown[name] = play(env, games, args.steps)
            best[name] = {k: min(v, best.get(name, spent)[k]) for k, v in spent.items()}
    if len(set(map(repr, shown.values()))) != 1:
        print("error: the two engines showed different games", file=sys.stderr)
        return 1
    print(f"{len(games)} bundled train games, {args.steps} random steps each, best of {args.repeats}; "
          "every observation and command list equal")
    print(f"{'engine':<20} {'load ms':>8} {'reset ms':>9} {'step ms':>8}")
    for name, spent in best.items():
        print(f"{name:<20} {1000 * spent['load'] / len(games):>8.1f} {1000 * spent['reset'] / len(games):>9.1f} "
              f"{1000 * spent['step'] / (len(games) * args.steps):>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
