"""Several runs' evaluations side by side (StraTA, GRPO, GiGPO, ...): success per subtask, mean ± std over seeds,
pass@k, and the task list each was played on.

A comparison is only fair on the same games: every evaluation must record its task list's digest
(`strata.envs.task_list.task_list_digest`, written by ``strata eval-result --task-list``) and the digests must agree
across runs and seeds, on one split; otherwise nothing is compared.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from strata.report.eval_table import PERCENT, EvalReport
from strata.report.markdown import markdown_table
from strata.report.schema import ALL_SUBTASKS, OVERALL, EvalSchemaError


@dataclass(frozen=True)
class Comparison:
    """Named runs' reports (one `EvalReport` each, its seeds combined) on one split and one task list."""

    split: str
    task_list_sha256: str
    runs: dict[str, EvalReport]

    def subtasks(self) -> list[str]:
        present = {row.name for report in self.runs.values() for row in report.success}
        return [name for name in [*ALL_SUBTASKS, OVERALL] if name in present]

    def to_markdown(self) -> str:
        names = list(self.runs)
        header = ["subtask", *(f"{name} ({len(report.seeds)} seed{'s' * (len(report.seeds) > 1)})"
                               for name, report in self.runs.items())]
        rows = []
        for subtask in self.subtasks():
            cells = []
            for report in self.runs.values():
                row = next((r for r in report.success if r.name == subtask), None)
                cells.append("-" if row is None else PERCENT.mean_std(row))
            rows.append([subtask, *cells])
        lines = [f"# Success (%) on {self.split}, mean ± std over seeds",
                 f"Task list sha256 {self.task_list_sha256} (every run and seed).", "",
                 markdown_table(header, rows)]
        pass_rows = []
        for name in names:
            report = self.runs[name]
            overall = next((p for p in report.pass_at_k if p.name == OVERALL), None)
            if overall is not None:
                k = len(report.seeds)
                pass_rows.append([name, str(k), PERCENT(overall.avg), PERCENT(overall.passed)])
        if pass_rows:
            lines += ["", "## avg@k and pass@k (%), the seeds as k samples per task", "",
                      markdown_table(["run", "k", "avg@k", "pass@k"], pass_rows)]
        return "\n".join(lines)

    def to_json(self) -> str:
        data: dict[str, Any] = {"split": self.split, "task_list_sha256": self.task_list_sha256,
                                "runs": {name: report.to_dict() for name, report in self.runs.items()}}
        return json.dumps(data, indent=2)


def compare_reports(runs: Mapping[str, EvalReport]) -> Comparison:
    """Put ``runs`` side by side after checking that every evaluation played the same games on the same split.

    Raises:
        EvalSchemaError: fewer than two runs, several splits or horizons, or a task list that is missing or
            differs.
    """
    if len(runs) < 2:
        raise EvalSchemaError(f"compare needs at least two runs, got {len(runs)}")
    splits = {name: report.split for name, report in runs.items()}
    if len(set(splits.values())) > 1:
        raise EvalSchemaError(f"the runs evaluated different splits ({splits}); compare one split")
    horizons = {name: report.results[0].max_steps for name, report in runs.items()}
    if len({horizon for horizon in horizons.values() if horizon is not None}) > 1:
        raise EvalSchemaError(f"the runs' episodes had different horizons (env.max_steps: {horizons}); compare runs "
                              f"of one horizon")
    digests: dict[str, str] = {}
    for name, report in runs.items():
        for result in report.results:
            where = f"run {name!r} seed {result.seed}"
            if result.task_list_sha256 is None:
                raise EvalSchemaError(f"{where} does not record its task list; write it with `strata eval-result "
                                      f"--task-list LIST` so the comparison can check that the games are the same")
            digests[where] = result.task_list_sha256
    if len(set(digests.values())) > 1:
        listing = ", ".join(f"{where}: {digest[:12]}" for where, digest in digests.items())
        raise EvalSchemaError(f"the evaluations played different task lists ({listing}); compare the same games")
    return Comparison(split=next(iter(splits.values())), task_list_sha256=next(iter(digests.values())),
                      runs=dict(runs))
