"""Every `strata` tool that reads a file or folder, given a damaged one, ends in one line (issue #36 §3).

For each argument that names an input, the table below puts a damaged one in its place: an empty file, a valid
file of that kind cut in half, a file of another kind, a missing path, a folder where a file belongs and a file
where a folder belongs. Each run must exit 2 with exactly one line on stderr, ``error: ...``, naming the damaged
file or folder (its path or its name), no traceback anywhere, and write nothing: the temporary folder is the same
afterwards (names, sizes, mtimes) and the command's own output does not exist.

The tools run in this process (`strata.cli.main`), so what a real run would print to stderr besides the error
line is counted too: log records (`model-card`, `export` and `reshard` log at INFO to stderr) and Python
warnings.

Not here: `build-learning-check` and `build-alfworld-agent` read no user file (they only write ``--out``).
`eval-result --dumps` is left out: a run without readable dumps is a warning there by design (the table is
written, without pass@k). `doctor --config-name` with a damaged override path is left out: it runs the trainer's
checks (seconds), whose own messages are tested in tests/trainer.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from strata.assets.alfworld_agent import AgentRecipe
from strata.cli import main

EMPTY, TRUNCATED, WRONG_TYPE, MISSING, FOLDER, FILE = (
    "empty", "truncated", "wrong-type", "missing", "folder-for-file", "file-for-folder")
FILE_DAMAGE = (EMPTY, TRUNCATED, WRONG_TYPE, MISSING, FOLDER)
INSIDE_DAMAGE = (EMPTY, TRUNCATED, WRONG_TYPE, FOLDER)  # a file inside a folder argument; missing: see each slot
FOLDER_DAMAGE = (MISSING, FILE)
TEXT = b"these are notes, not data\n"
# One validation step, as strata's trainer logs it: a log of one record has nothing left when cut in half (a log
# cut after complete records is a run's log read up to the cut: test_a_log_cut_short_is_read_up_to_the_cut).
VALIDATION = {"val/average/metrics/success_rate": 0.5, "val/average/metrics/num_tasks": 2,
              "val/average/metrics/format_rate": 1.0, "val/average/metrics/episode_length": 12.0}
HF_CONFIG = json.dumps({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 64,
                        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                        "intermediate_size": 128, "vocab_size": 256, "tie_word_embeddings": True}).encode()


# --- valid inputs, built once --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Assets:
    """One valid input of each kind; a case copies what it needs into its own folder and damages it there."""

    task_list: bytes  # a parquet task list of two bundled games
    evaluation: bytes  # a per-seed evaluation JSON
    metrics: bytes  # verl's file logger JSONL: one validation step
    dump: bytes  # a gzip JSONL trajectory dump
    game: Path  # one bundled ALFWorld trial folder (traj_data.json, game.tw-pddl)
    webshop: Path  # a generated WebShop catalogue
    step: Path  # a checkpoint's global_step_1 (torch.save shards, fsdp_config.json, data.pt)
    run: Path  # a run folder as model-card reads it (.hydra/config.yaml, metrics.jsonl, eval/eval_seed0.json)


@pytest.fixture(scope="module")
def assets(tmp_path_factory: pytest.TempPathFactory) -> Assets:
    from omegaconf import OmegaConf

    from strata.envs.alfworld.bundled import bundled_data_path
    from strata.envs.alfworld.discovery import load_split
    from strata.envs.task_list import write_task_list
    from strata.envs.webshop.generate import write_catalog
    from strata.trainer.config import load_config
    from tests.checkpoint.conftest import _make_step
    from tests.report.conftest import COUNTS, evaluation
    from tests.report.dump_fixture import write_run

    root = tmp_path_factory.mktemp("valid")
    tasks = load_split(bundled_data_path(), "valid_seen")[:2]
    task_list = write_task_list(tasks, root / "tasks.parquet").read_bytes()
    wins = {name: count // 2 for name, count in COUNTS.items()}
    result = evaluation(0, wins, step=20)
    metrics = (json.dumps({"step": 20, "data": VALIDATION}) + "\n").encode()
    dump = (write_run(root / "dumps") / "rollouts" / "train" / "step_000001-w0.jsonl.gz").read_bytes()
    run = root / "run"
    (run / ".hydra").mkdir(parents=True)
    OmegaConf.save(load_config("strata_trainer", []), run / ".hydra" / "config.yaml")
    (run / "metrics.jsonl").write_bytes(metrics)
    result.save(run / "eval" / "eval_seed0.json")
    return Assets(task_list=task_list, evaluation=result.to_json().encode(), metrics=metrics, dump=dump,
                  game=Path(tasks[0].game_file).parent, webshop=write_catalog(root / "webshop", 4, 0),
                  step=_make_step(root / "ckpt", 1), run=run)


# --- the table -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Slot:
    """An input argument of a tool.

    ``setup(tmp, assets)`` lays out everything around it in ``tmp`` and returns the argv, the path to damage
    (given or found by the tool) and the tool's would-be output; ``good(assets)`` is a valid file's bytes (what
    TRUNCATED cuts in half), ``wrong`` a file of another kind.
    """

    name: str
    damages: tuple[str, ...]
    setup: Callable[[Path, Assets], tuple[list[str], Path, Path | None]]
    good: Callable[[Assets], bytes] | None = None
    wrong: bytes = TEXT


def _game_data(tmp: Path, assets: Assets) -> Path:
    """``tmp/data`` holding one ALFWorld game in json_2.1.1/valid_seen; returns its trial folder."""
    trial = tmp / "data" / "json_2.1.1" / "valid_seen" / assets.game.parent.name / assets.game.name
    shutil.copytree(assets.game, trial)
    return trial


def _catalogue(tmp: Path, assets: Assets) -> Path:
    return Path(shutil.copytree(assets.webshop, tmp / "catalogue"))


def _step(tmp: Path, assets: Assets) -> Path:
    return Path(shutil.copytree(assets.step, tmp / "ckpt" / assets.step.name))


def _run(tmp: Path, assets: Assets) -> Path:
    return Path(shutil.copytree(assets.run, tmp / "run"))


def _agent(tmp: Path) -> Path:
    """``tmp/agent``: a built agent's manifest, all `strata dagger-alfworld-agent` reads before a --checkpoint."""
    (tmp / "agent").mkdir()
    (tmp / "agent" / "agent.json").write_text(json.dumps({"recipe": dataclasses.asdict(AgentRecipe())}))
    return tmp / "agent"


def _show_run(tmp: Path, assets: Assets) -> Path:
    dump = tmp / "run" / "rollouts" / "train" / "step_000001-w0.jsonl.gz"
    dump.parent.mkdir(parents=True)
    dump.write_bytes(assets.dump)
    return tmp / "run"


def _checkpoint_slots(tool: str, extra: Callable[[Path], list[str]], output: Callable[[Path], Path | None],
                      inside_files: tuple[str, ...]) -> list[Slot]:
    """A checkpoint tool's --checkpoint/PATH argument, and the files inside the step it reads."""
    def argv(tmp: Path, step: Path) -> list[str]:
        return [tool, *(["--checkpoint"] if tool != "inspect-checkpoint" else []), str(step), *extra(tmp)]

    def inside(relative: str, good: Callable[[Assets], bytes]) -> Slot:
        def setup(tmp: Path, assets: Assets) -> tuple[list[str], Path, Path | None]:
            step = _step(tmp, assets)
            return argv(tmp, step), step / relative, output(tmp)

        return Slot(f"{tool} step's {relative}", INSIDE_DAMAGE, setup, good)

    good = {"actor/huggingface/config.json": lambda a: HF_CONFIG}
    return [
        Slot(f"{tool} step folder", FOLDER_DAMAGE, lambda tmp, a: (argv(tmp, tmp / "global_step_1"),
                                                                    tmp / "global_step_1", output(tmp))),
        *(inside(name, good.get(name, lambda a, name=name: (a.step / name).read_bytes())) for name in inside_files),
    ]


STEP_FILES = ("actor/fsdp_config.json", "actor/model_world_size_1_rank_0.pt", "data.pt")
# What an export reads: a step that cannot resume (fsdp_config.json or data.pt damaged) still has its weights.
EXPORT_FILES = ("actor/model_world_size_1_rank_0.pt", "actor/huggingface/config.json")


def _slots() -> list[Slot]:
    play = ["play", "--policy", "walkthrough"]
    slots = [
        # play: a task list, an ALFWorld data folder, a WebShop catalogue
        Slot("play --task-list", FILE_DAMAGE,
             lambda tmp, a: ([*play, "--task-list", str(tmp / "tasks.parquet"), "--out", str(tmp / "out/r.json")],
                             tmp / "tasks.parquet", tmp / "out"),
             good=lambda a: a.task_list, wrong=b'{"data_source": "alfworld"}\n'),
        Slot("play --data-path", FOLDER_DAMAGE,
             lambda tmp, a: ([*play, "--data-path", str(tmp / "data"), "--out", str(tmp / "out/r.json")],
                             tmp / "data", tmp / "out")),
    ]
    for name in ("traj_data.json", "game.tw-pddl"):
        slots += [
            Slot(f"play --data-path's {name}", INSIDE_DAMAGE,
                 lambda tmp, a, name=name: ([*play, "--data-path", str(tmp / "data"), "--out", str(tmp / "out/r.json")],
                                            _game_data(tmp, a) / name, tmp / "out"),
                 good=lambda a, name=name: (a.game / name).read_bytes()),
            Slot(f"prepare-data --data-path's {name}", INSIDE_DAMAGE,
                 lambda tmp, a, name=name: (["prepare-data", "--data-path", str(tmp / "data"), "--splits",
                                             "valid_seen", "--out", str(tmp / "out")],
                                            _game_data(tmp, a) / name, tmp / "out"),
                 good=lambda a, name=name: (a.game / name).read_bytes()),
        ]
    for name in ("items_shuffle_1000.json", "items_ins_v2_1000.json", "items_human_ins.json"):
        # human goals: they read all three files (synthetic ones, the default, read the first two)
        slots += [
            Slot(f"play --env webshop --data-path's {name}", (*INSIDE_DAMAGE, MISSING),
                 lambda tmp, a, name=name: ([*play[:2], "gold", "--env", "webshop", "--goals", "human", "--data-path",
                                             str(tmp / "catalogue"), "--out", str(tmp / "out/r.json")],
                                            _catalogue(tmp, a) / name, tmp / "out"),
                 good=lambda a, name=name: (a.webshop / name).read_bytes()),
            Slot(f"prepare-data --env webshop --data-path's {name}", (*INSIDE_DAMAGE, MISSING),
                 lambda tmp, a, name=name: (["prepare-data", "--env", "webshop", "--goals", "human", "--data-path",
                                             str(tmp / "catalogue"), "--out", str(tmp / "out")],
                                            _catalogue(tmp, a) / name, tmp / "out"),
                 good=lambda a, name=name: (a.webshop / name).read_bytes()),
        ]
    slots += [
        # prepare-data: the data folder, and an --out below a file
        Slot("prepare-data --data-path", FOLDER_DAMAGE,
             lambda tmp, a: (["prepare-data", "--data-path", str(tmp / "data"), "--out", str(tmp / "out")],
                             tmp / "data", tmp / "out")),
        Slot("prepare-data --out below", (FILE,),
             lambda tmp, a: (["prepare-data", "--bundled", "--out", str(tmp / "lists" / "alfworld")],
                             tmp / "lists", None)),
        # the generators read nothing but write --out: a file in its place, or on its path
        Slot("make-games --out", (FILE,),
             lambda tmp, a: (["make-games", "--out", str(tmp / "games"), "--count", "1"], tmp / "games", None)),
        Slot("make-games --out's json_2.1.1", (FILE,),
             lambda tmp, a: (["make-games", "--out", str(tmp), "--count", "1"], tmp / "json_2.1.1", None)),
        Slot("make-webshop --out", (FILE,),
             lambda tmp, a: (["make-webshop", "--out", str(tmp / "shop"), "--products", "2"], tmp / "shop", None)),
        Slot("make-webshop --out below", (FILE,),
             lambda tmp, a: (["make-webshop", "--out", str(tmp / "shop" / "data"), "--products", "2"],
                             tmp / "shop", None)),
        Slot("build-tiny-model --out", (FILE,),
             lambda tmp, a: (["build-tiny-model", "--out", str(tmp / "model")], tmp / "model", None)),
        Slot("build-tiny-model --out below", (FILE,),
             lambda tmp, a: (["build-tiny-model", "--out", str(tmp / "models" / "tiny")], tmp / "models", None)),
        # show: the run folder and a dump file in it
        Slot("show RUN", FOLDER_DAMAGE,
             lambda tmp, a: (["show", str(tmp / "run"), "--html", str(tmp / "out/page.html")], tmp / "run",
                             tmp / "out")),
        Slot("show RUN's dump", INSIDE_DAMAGE,
             lambda tmp, a: (["show", str(tmp / "run"), "--html", str(tmp / "out/page.html")],
                             _show_run(tmp, a) / "rollouts/train/step_000001-w0.jsonl.gz", tmp / "out"),
             good=lambda a: a.dump),
        # curve: a log, a run folder, the log found in it
        Slot("curve --log", FILE_DAMAGE,
             lambda tmp, a: (["curve", "--log", str(tmp / "metrics.jsonl"), "--out", str(tmp / "out")],
                             tmp / "metrics.jsonl", tmp / "out"),
             good=lambda a: a.metrics, wrong=b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
        Slot("curve --run-dir", FOLDER_DAMAGE,
             lambda tmp, a: (["curve", "--run-dir", str(tmp / "run"), "--out", str(tmp / "out")], tmp / "run",
                             tmp / "out")),
        Slot("curve --run-dir's log", (EMPTY, TRUNCATED, WRONG_TYPE),
             lambda tmp, a: (["curve", "--run-dir", str(tmp / "run")], _run(tmp, a) / "metrics.jsonl",
                             tmp / "run" / "curve"),
             good=lambda a: a.metrics),
        # the evaluation readers
        Slot("report-eval EVALUATION", FILE_DAMAGE,
             lambda tmp, a: (["report-eval", str(tmp / "seed0.json"), "--out", str(tmp / "out/report")],
                             tmp / "seed0.json", tmp / "out"),
             good=lambda a: a.evaluation),
        Slot("compare --run NAME EVALUATION", FILE_DAMAGE,
             lambda tmp, a: (["compare", "--run", "strata", str(tmp / "seed0.json"), "--out",
                              str(tmp / "out/compare")], tmp / "seed0.json", tmp / "out"),
             good=lambda a: a.evaluation),
        # model-card: the run folder, an evaluation, the config, a log
        Slot("model-card --run-dir", FOLDER_DAMAGE,
             lambda tmp, a: (["model-card", "--run-dir", str(tmp / "run"), "--out", str(tmp / "out/README.md")],
                             tmp / "run", tmp / "out")),
        Slot("model-card --eval", FILE_DAMAGE,
             lambda tmp, a: (["model-card", "--run-dir", str(_run(tmp, a)), "--eval", str(tmp / "seed0.json"),
                              "--out", str(tmp / "out/README.md")], tmp / "seed0.json", tmp / "out"),
             good=lambda a: a.evaluation),
        Slot("model-card --run-dir's evaluation", (EMPTY, TRUNCATED, WRONG_TYPE, FOLDER),
             lambda tmp, a: (["model-card", "--run-dir", str(tmp / "run")],
                             _run(tmp, a) / "eval/eval_seed0.json", tmp / "run" / "model-card"),
             good=lambda a: a.evaluation),
        Slot("model-card --config", FILE_DAMAGE,
             lambda tmp, a: (["model-card", "--run-dir", str(_run(tmp, a)), "--config", str(tmp / "config.yaml"),
                              "--out", str(tmp / "out/README.md")], tmp / "config.yaml", tmp / "out"),
             good=lambda a: (a.run / ".hydra/config.yaml").read_bytes(), wrong=b"\x80\x81 not text\n"),
        Slot("model-card --run-dir's config", (EMPTY, TRUNCATED, WRONG_TYPE, FOLDER),
             lambda tmp, a: (["model-card", "--run-dir", str(tmp / "run"), "--out", str(tmp / "out/README.md")],
                             _run(tmp, a) / ".hydra/config.yaml", tmp / "out"),
             good=lambda a: (a.run / ".hydra/config.yaml").read_bytes()),
        Slot("model-card --log", FILE_DAMAGE,
             lambda tmp, a: (["model-card", "--run-dir", str(_run(tmp, a)), "--log", str(tmp / "metrics.jsonl"),
                              "--out", str(tmp / "out/README.md")], tmp / "metrics.jsonl", tmp / "out"),
             good=lambda a: a.metrics),
        # config-diff: a resolved config file on either side
        Slot("config-diff A (YAML)", FILE_DAMAGE,
             lambda tmp, a: (["config-diff", str(tmp / "a.yaml"), str(_run(tmp, a) / ".hydra/config.yaml")],
                             tmp / "a.yaml", None),
             good=lambda a: (a.run / ".hydra/config.yaml").read_bytes(), wrong=b"\x80\x81 not text\n"),
        Slot("config-diff B (JSON)", FILE_DAMAGE,
             lambda tmp, a: (["config-diff", str(_run(tmp, a) / ".hydra/config.yaml"), str(tmp / "b.json")],
                             tmp / "b.json", None),
             good=lambda a: b'{"trainer": {"total_epochs": 1, "n_gpus_per_node": 2}, "data": {"train_batch_size": 8}}'),
        # the checkpoint tools
        *_checkpoint_slots("inspect-checkpoint", lambda tmp: ["--world-size", "1"], lambda tmp: None, STEP_FILES),
        *_checkpoint_slots("reshard", lambda tmp: ["--world-size", "2", "--out", str(tmp / "out")],
                           lambda tmp: tmp / "out", STEP_FILES),
        # export: the weights (EXPORT_FILES)
        *_checkpoint_slots("export", lambda tmp: ["--out", str(tmp / "out")], lambda tmp: tmp / "out",
                           EXPORT_FILES),
        # dagger-alfworld-agent: the built agent's folder and the manifest in it
        Slot("dagger-alfworld-agent --agent", FOLDER_DAMAGE,
             lambda tmp, a: (["dagger-alfworld-agent", "--agent", str(tmp / "agent"), "--out", str(tmp / "out")],
                             tmp / "agent", tmp / "out")),
        Slot("dagger-alfworld-agent --agent's agent.json", (*INSIDE_DAMAGE, MISSING),
             lambda tmp, a: (["dagger-alfworld-agent", "--agent", str(tmp / "agent"), "--out", str(tmp / "out")],
                             tmp / "agent" / "agent.json", tmp / "out"),
             good=lambda a: json.dumps({"recipe": dataclasses.asdict(AgentRecipe())}).encode(), wrong=b"[1, 2]\n"),
        # ... and the RL step it starts from instead of the agent's model: the files the export reads
        *_checkpoint_slots("dagger-alfworld-agent",
                           lambda tmp: ["--agent", str(_agent(tmp)), "--out", str(tmp / "out")],
                           lambda tmp: tmp / "out", EXPORT_FILES),
        # doctor: the recipe script (cut in half, a recipe is still a script bash runs: not a damage doctor can see)
        Slot("doctor RECIPE", (EMPTY, WRONG_TYPE, MISSING, FOLDER),
             lambda tmp, a: (["doctor", str(tmp / "train-x.sh")], tmp / "train-x.sh", None)),
        # eval-result: the metrics log, the task list
        Slot("eval-result --metrics", FILE_DAMAGE,
             lambda tmp, a: (["eval-result", "--metrics", str(tmp / "metrics.jsonl"), "--seed", "0", "--out",
                              str(tmp / "out")], tmp / "metrics.jsonl", tmp / "out"),
             good=lambda a: a.metrics),
        Slot("eval-result --task-list", FILE_DAMAGE,
             lambda tmp, a: (["eval-result", "--metrics", str(_run(tmp, a) / "metrics.jsonl"), "--seed", "0",
                              "--task-list", str(tmp / "tasks.parquet"), "--out", str(tmp / "out")],
                             tmp / "tasks.parquet", tmp / "out"),
             good=lambda a: a.task_list, wrong=b'{"data_source": "alfworld"}\n'),
    ]
    return slots


def _damage(path: Path, damage: str, slot: Slot, assets: Assets) -> None:
    if path.exists():
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if damage == EMPTY:
        path.write_bytes(b"")
    elif damage == TRUNCATED:
        good = slot.good(assets)
        path.write_bytes(good[: len(good) // 2])
    elif damage == WRONG_TYPE:
        path.write_bytes(slot.wrong)
    elif damage == FOLDER:
        path.mkdir()
    elif damage == FILE:
        path.write_bytes(TEXT)


CASES = [pytest.param(slot, damage, id=f"{slot.name}: {damage}") for slot in _slots() for damage in slot.damages]


def tree(folder: Path) -> dict[str, tuple[bool, int, int]]:
    """Every entry under ``folder``: is it a folder, its size, its mtime (ns)."""
    return {str(path.relative_to(folder)): (path.is_dir(), path.lstat().st_size, path.lstat().st_mtime_ns)
            for path in sorted(folder.rglob("*"))}


@pytest.mark.parametrize(("slot", "damage"), CASES)
def test_a_damaged_input_is_one_error_line_naming_it_and_nothing_is_written(
        slot: Slot, damage: str, assets: Assets, tmp_path: Path, capsys, caplog) -> None:
    argv, damaged, output = slot.setup(tmp_path, assets)
    _damage(damaged, damage, slot, assets)
    before = tree(tmp_path)
    caplog.set_level(logging.INFO)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status = main(argv)
    captured = capsys.readouterr()
    shown = [*captured.err.splitlines(), *(f"{r.levelname}: {r.getMessage()}" for r in caplog.records),
             *(f"{w.category.__name__}: {w.message}" for w in caught
               if not issubclass(w.category, DeprecationWarning | PendingDeprecationWarning | ResourceWarning))]
    report = f"strata {' '.join(argv)}\nexit {status}\nstdout:\n{captured.out}\nstderr and logs:\n" + "\n".join(shown)
    assert "Traceback" not in captured.out + captured.err, report
    assert status == 2, report
    assert len(shown) == 1 and shown[0].startswith("error: "), report
    assert str(damaged) in shown[0] or damaged.name in shown[0], report
    assert tree(tmp_path) == before, report
    assert output is None or not output.exists(), report


def test_a_log_cut_short_is_read_up_to_the_cut(tmp_path: Path, capsys, caplog) -> None:
    """A run killed mid-write (or still running) leaves its log's last line cut short: the complete records are
    its curve, and the cut line is one warning naming it, not an error."""
    log = tmp_path / "metrics.jsonl"
    lines = [json.dumps({"step": step, "data": {**VALIDATION, "val/average/metrics/success_rate": step / 100}})
             for step in (0, 10, 20)]
    text = "\n".join(lines) + "\n"
    log.write_text(text[: len(text) - len(lines[-1]) // 2])
    caplog.set_level(logging.INFO)
    assert main(["curve", "--log", str(log), "--out", str(tmp_path / "curve")]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and [r.getMessage() for r in caplog.records] == [f"{log}:3 is not JSON; skipping it"]
    assert json.loads((tmp_path / "curve" / "curve.json").read_text())["steps"] == [0, 10]


def test_a_log_without_an_evaluation_s_metrics_is_one_line_naming_them(tmp_path: Path, capsys) -> None:
    """A validation step that logged a success rate but not the rest (another trainer's log) was a KeyError's
    traceback in `strata eval-result`."""
    log = tmp_path / "metrics.jsonl"
    log.write_text(json.dumps({"step": 3, "data": {"val/average/metrics/success_rate": 0.5}}) + "\n")
    assert main(["eval-result", "--metrics", str(log), "--seed", "0", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (f"error: {log}, step 3: the validation metrics lack "
                                       "val/average/metrics/num_tasks, val/average/metrics/format_rate, "
                                       "val/average/metrics/episode_length\n")
    assert not (tmp_path / "out").exists()
