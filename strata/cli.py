"""The `strata` command: one tool per subcommand, each imported only when it runs.

Every entry of ``COMMANDS`` names a module that defines

    EXAMPLE: str                                  shown at the end of ``strata <tool> --help``
    add_arguments(parser: ArgumentParser) -> None
    run(args: Namespace) -> int                   the exit status

The one-line help lives here so that ``strata --help`` stays fast (no torch or verl import).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from strata.cli_output import OutputFolderError

# tool name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "build-tiny-model": (
        "strata.assets.cli",
        "Write a tiny random Qwen2 model with the real Qwen2.5 tokenizer (tests, CPU demo).",
    ),
    "build-learning-check": (
        "strata.assets.cli_learning_check",
        "Write the learning check's magic-word games, task lists, prompt preset and warm-started tiny model.",
    ),
    "build-alfworld-agent": (
        "strata.assets.cli_alfworld_agent",
        "Build a tiny ALFWorld agent offline: generated games, an exploring expert's traces, a warm start.",
    ),
    "dagger-alfworld-agent": (
        "strata.assets.cli_dagger",
        "Train a built ALFWorld agent further on the expert's labels of the states it reached itself (DAgger).",
    ),
    "doctor": (
        "strata.trainer.doctor",
        "Check this machine for a recipe (7-20 s): GPUs, vLLM, attention, model, data, wandb, disk.",
    ),
    "make-games": (
        "strata.envs.commands.make_games",
        "Generate verified ALFWorld games offline (all six task types, ALFRED rooms, seeded).",
    ),
    "make-webshop": (
        "strata.envs.commands.make_webshop",
        "Generate a WebShop catalogue offline in WebShop's own file layout (products, attributes, goals).",
    ),
    "prepare-data": (
        "strata.envs.commands.prepare_data",
        "Build the trainer's task lists (one parquet per split) from ALFWorld, ScienceWorld or WebShop data.",
    ),
    "play": (
        "strata.envs.commands.play",
        "Play a split with a scripted policy (walkthrough|gold|random) and print the per-subtask success table.",
    ),
    "inspect-checkpoint": (
        "strata.checkpoint.cli_inspect",
        "Show what a checkpoint holds, which step auto-resume picks, and whether a run can resume from it.",
    ),
    "reshard": (
        "strata.checkpoint.cli_reshard",
        "Convert a checkpoint's FSDP2 shards (model, optimizer, extra state) to another world size.",
    ),
    "export": (
        "strata.checkpoint.cli_export",
        "Export a checkpoint as a Hugging Face model (bf16 safetensors); --release adds training_state/.",
    ),
    "report-eval": (
        "strata.report.cli_eval",
        "Combine evaluation JSONs of several seeds into the per-subtask table, with avg@k and pass@k over the seeds.",
    ),
    "compare": (
        "strata.report.cli_compare",
        "Several runs' evaluations side by side (per subtask, mean ± std, pass@k), on one task list only.",
    ),
    "curve": (
        "strata.report.cli_curve",
        "Validation success rate per step from a run's logs, as a table and a PNG plot.",
    ),
    "config-diff": (
        "strata.report.cli_config_diff",
        "Resolve two recipes/configs and list the differing keys, infrastructure vs algorithm.",
    ),
    "model-card": (
        "strata.report.cli_model_card",
        "Write a release README.md from a run's own files: curve, evaluation, hyperparameters, deltas.",
    ),
    "eval-result": (
        "strata.report.cli_eval_result",
        "Write an evaluation run's per-seed JSON and table from its metrics log (evaluation recipes).",
    ),
    "show": (
        "strata.report.cli_show",
        "Read a run's trajectory dumps: one task's strategies and transcripts, or a step as an HTML page.",
    ),
}


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The full parser; only the ``selected`` tool's module is imported to fill in its arguments."""
    parser = argparse.ArgumentParser(prog="strata", description="StraTA tools on top of verl.")
    sub = parser.add_subparsers(dest="command", metavar="TOOL", required=True)
    for name, (module_name, summary) in COMMANDS.items():
        tool = sub.add_parser(name, help=summary, description=summary,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
        if name == selected:
            module = importlib.import_module(module_name)
            tool.epilog = "example:\n  " + module.EXAMPLE
            module.add_arguments(tool)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a tool. What the user can cause (a folder that must not be written, a file that cannot be read or
    written, Ctrl-C, a reader such as ``head`` that stops reading) ends in one line, never a traceback."""
    argv = sys.argv[1:] if argv is None else list(argv)
    selected = argv[0] if argv and argv[0] in COMMANDS else None
    args = build_parser(selected).parse_args(argv)
    try:
        return int(importlib.import_module(COMMANDS[args.command][0]).run(args))
    except OutputFolderError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`strata show RUN | head`): the rest of the output is not wanted. Python would
        # report the pipe again when it flushes stdout at exit, so stdout goes to /dev/null first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # what a shell reports for a writer stopped by SIGPIPE
    except KeyboardInterrupt:
        print(f"strata {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as error:
        where = f": {error.filename}" if error.filename else ""
        print(f"error: {error.strerror or error}{where}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
