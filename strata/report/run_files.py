"""Find a training run's own files: its resolved config and its metric logs.

A run launched through Hydra (``python -m strata.trainer.main`` or verl's ``main_ppo``) leaves in its
output folder (``hydra.run.dir``):

    .hydra/config.yaml       the composed config (interpolations unresolved; resolved on reading)
    .hydra/overrides.yaml    the command-line overrides
    *.jsonl                  verl's file logger, when ``VERL_FILE_LOGGER_PATH`` points inside the folder
    *.log                    a saved console log

Anything found here can also be passed explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strata.report.logs import is_jsonl_log, parse_console_line

_CONFIG_CANDIDATES = (".hydra/config.yaml", "config.yaml", "config.json")


@dataclass(frozen=True)
class RunFiles:
    """The files of one run.

    Args:
        run_dir: the run's output folder.
        config: its resolved (or resolvable) config file.
        logs: metric logs, oldest first (a resumed run's parts in order).
    """

    run_dir: Path
    config: Path
    logs: tuple[Path, ...]


def discover_run(run_dir: str | Path, config: str | Path | None = None,
                 logs: tuple[str | Path, ...] = ()) -> RunFiles:
    """Locate the run's files; explicit arguments win over what is found in ``run_dir``."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"no run folder at {run_dir}; pass the run's hydra.run.dir")
    config_path = Path(config) if config else _find_config(run_dir)
    log_paths = tuple(Path(path) for path in logs) or find_logs(run_dir)
    return RunFiles(run_dir=run_dir, config=config_path, logs=log_paths)


def saved_setting(run_dir: str | Path, dotted: str) -> Any | None:
    """A setting (``env.max_steps``) of the resolved config the trainer saves as ``run_dir/config.yaml``
    (`strata.trainer.main.save_run_config`); None when the file or the setting is missing or unreadable."""
    import yaml

    try:
        value = yaml.safe_load((Path(run_dir) / "config.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _find_config(run_dir: Path) -> Path:
    for candidate in _CONFIG_CANDIDATES:
        if (run_dir / candidate).is_file():
            return run_dir / candidate
    nested = sorted(run_dir.rglob(".hydra/config.yaml"))
    if nested:
        return nested[-1]
    raise FileNotFoundError(f"no resolved config in {run_dir} (looked for {', '.join(_CONFIG_CANDIDATES)}); "
                            f"pass --config")


def find_logs(run_dir: str | Path) -> tuple[Path, ...]:
    """The run's metric logs, oldest first (verl's JSONL, else console logs with metric lines)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"no run folder at {run_dir}")
    logs = _find_logs(run_dir)
    if not logs:
        raise FileNotFoundError(f"no metric log in {run_dir}{_not_logs(run_dir)}: run with "
                                f"trainer.logger=[console,file] and VERL_FILE_LOGGER_PATH inside the run folder, "
                                f"or pass --log")
    return logs


def _find_logs(run_dir: Path) -> tuple[Path, ...]:
    by_age = sorted((path for path in run_dir.rglob("*.jsonl") if path.is_file() and is_jsonl_log(path)),
                    key=lambda path: path.stat().st_mtime)
    if by_age:
        return tuple(by_age)
    consoles = sorted((path for path in run_dir.rglob("*.log") if path.is_file()),
                      key=lambda path: path.stat().st_mtime)
    return tuple(path for path in consoles if _has_console_metrics(path))


def _not_logs(run_dir: Path) -> str:
    """`` (metrics.jsonl: no metrics lines)``: the files that look like logs but hold none, named, since an empty
    or damaged log is what the user must look at; empty when there is none."""
    names = sorted(str(path.relative_to(run_dir)) for pattern in ("*.jsonl", "*.log")
                   for path in run_dir.rglob(pattern))
    if not names:
        return ""
    listed = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
    return f" ({listed}: no metrics lines)"


def _has_console_metrics(path: Path) -> bool:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return any("step:" in line and parse_console_line(line) for line in handle)
