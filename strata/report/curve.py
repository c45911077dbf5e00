"""The training curve: validation success rate per step, overall and per subtask, as a table and a plot.

The overall key is ``val/average/metrics/success_rate`` (docs/algorithm.md §3); the per-subtask keys replace
``average`` by the subtask name (``val/pick/metrics/success_rate``). Any other ``.../average/...`` key
(``val/average/metrics/format_rate``) or a plain key works the same way; a key without ``/average/``
has no per-subtask lines.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from strata.report.logs import Metrics
from strata.report.markdown import markdown_table
from strata.report.schema import ALL_SUBTASKS

SUCCESS_KEY = "val/average/metrics/success_rate"
_AVERAGE = "/average/"


@dataclass(frozen=True)
class Curve:
    """Values of ``key`` at the steps where it was logged, with the per-subtask values at those steps.

    Args:
        key: the overall metric key.
        steps: steps where ``key`` was logged, ascending.
        values: its values at those steps.
        per_subtask: subtask -> values aligned with ``steps`` (None where not logged); only subtasks
            logged at least once.
    """

    key: str
    steps: tuple[int, ...]
    values: tuple[float, ...]
    per_subtask: dict[str, tuple[float | None, ...]]

    @property
    def final(self) -> tuple[int, float]:
        """The last logged step and its value."""
        return self.steps[-1], self.values[-1]

    @property
    def best(self) -> tuple[int, float]:
        """The step with the highest value (the earliest such step on ties)."""
        index = max(range(len(self.values)), key=lambda i: (self.values[i], -i))
        return self.steps[index], self.values[index]

    def to_dict(self) -> dict:
        return {"key": self.key, "steps": list(self.steps), "values": list(self.values),
                "per_subtask": {name: list(values) for name, values in self.per_subtask.items()}}

    def to_markdown(self, as_percent: bool = True) -> str:
        """One row per logged step; success rates in percent with two decimals."""
        def fmt(value: float | None) -> str:
            if value is None or math.isnan(value):
                return "–"
            return f"{100 * value:.2f}" if as_percent else f"{value:.4g}"

        names = list(self.per_subtask)
        header = ["step", "all" if names else self.key, *names]
        rows = [[str(step), fmt(value), *(fmt(self.per_subtask[name][i]) for name in names)]
                for i, (step, value) in enumerate(zip(self.steps, self.values, strict=True))]
        return markdown_table(header, rows)


def extract_curve(metrics: Metrics, key: str = SUCCESS_KEY) -> Curve:
    """The curve of ``key`` from :func:`strata.report.logs.read_metrics` output."""
    steps = tuple(step for step, data in metrics.items() if key in data)
    if not steps:
        known = sorted({name for data in metrics.values() for name in data if name.startswith("val")})
        hint = f"; validation keys in the log: {', '.join(known[:8])}" if known else (
            "; the log has no validation metrics (set trainer.test_freq > 0 or trainer.val_before_train=true)")
        raise KeyError(f"{key!r} is never logged{hint}")
    per_subtask = {}
    if _AVERAGE in key:
        for name in ALL_SUBTASKS:
            sub_key = key.replace(_AVERAGE, f"/{name}/", 1)
            values = tuple(metrics[step].get(sub_key) for step in steps)
            if any(value is not None for value in values):
                per_subtask[name] = values
    return Curve(key=key, steps=steps, values=tuple(metrics[step][key] for step in steps),
                 per_subtask=per_subtask)


def plot_curve(curve: Curve, path: str | Path, title: str | None = None, as_percent: bool = True) -> Path:
    """A PNG: the overall curve bold, each subtask thin; written without a display (Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scale = 100.0 if as_percent else 1.0
    figure, axes = plt.subplots(figsize=(7, 4.2), dpi=120)
    try:
        # The overall line is wide, pale and underneath: a subtask equal to it (a one-subtask split) stays visible.
        axes.plot(curve.steps, [scale * v for v in curve.values], marker="o", linewidth=5, color="black", alpha=0.3,
                  zorder=1, label="all" if curve.per_subtask else curve.key)
        for name, values in curve.per_subtask.items():
            points = [(s, scale * v) for s, v in zip(curve.steps, values, strict=True) if v is not None]
            axes.plot(*zip(*points, strict=True), marker=".", linewidth=1.2, zorder=2, label=name)
        axes.set_xlabel("training step")
        axes.set_ylabel(f"{curve.key} (%)" if as_percent else curve.key)
        if as_percent:
            axes.set_ylim(-2, 102)
        axes.grid(alpha=0.3)
        axes.legend(fontsize=8, ncol=2 if len(curve.per_subtask) > 3 else 1)
        axes.set_title(title or "validation success rate")
        figure.tight_layout()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path)
    finally:
        plt.close(figure)
    return path


def write_curve(curve: Curve, out_dir: str | Path, as_percent: bool = True) -> dict[str, Path]:
    """``curve.md``, ``curve.json`` and ``curve.png`` in ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {"markdown": out_dir / "curve.md", "json": out_dir / "curve.json", "png": out_dir / "curve.png"}
    files["markdown"].write_text(curve.to_markdown(as_percent) + "\n")
    files["json"].write_text(json.dumps(curve.to_dict(), indent=2) + "\n")
    plot_curve(curve, files["png"], as_percent=as_percent)
    return files
