"""The paper's ablations (docs/algorithm.md §4) as one-line overrides of the 1.5B training recipe.

Each row is resolved through the recipe as ``DRY_RUN=1`` runs it. It must set the intended StraTA values
(read back through `StrataConfig`, as the trainer reads them) and change nothing else in the resolved config:
a mistyped key (``+strata.judge.kapa=1`` is accepted by Hydra), an override of the wrong key, or one that
drags other keys along fails here. The ablation table of docs/gpu-training.md (between
``<!-- ablations:start -->`` and ``<!-- ablations:end -->``) must list the same rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import pytest

from strata.core.config import StrataConfig
from strata.report.config_resolve import flatten
from tests.recipes.resolved import REPO, resolve

RECIPE = "train-strata-alfworld-text-qwen2.5-1.5b.sh"
TABLE_PAGE = "docs/gpu-training.md"  # the page that holds the ablation table


@dataclass(frozen=True)
class Ablation:
    """One row of the paper's ablation table.

    Args:
        name: the row as the paper names it.
        paper: ALFWorld success (%) the paper reports for it (3B model, docs/algorithm.md §4).
        overrides: what to append to the recipe's command line.
        expect: `StrataConfig` attributes (dotted) and the values the overrides must give them.
    """

    name: str
    paper: float
    overrides: tuple[str, ...]
    expect: dict[str, Any] = field(default_factory=dict)


# The full method keeps the paper's values: N=4, M=8, σ=8, δ=0.5, κ=0.1, selection and judge on.
ABLATIONS: tuple[Ablation, ...] = (
    Ablation("hierarchy only", 79.0, ("strata.diversity.enable=false", "strata.judge.enable=false"),
             {"diversity.enable": False, "judge.enable": False}),
    Ablation("+ diversity", 87.9, ("strata.judge.enable=false",), {"judge.enable": False}),
    Ablation("+ judgment", 81.9, ("strata.diversity.enable=false",), {"diversity.enable": False}),
    Ablation("full StraTA", 88.6, (),
             {"diversity.enable": True, "judge.enable": True, "num_cands_per_stra": 8, "delta_coef": 0.5,
              "judge.kappa": 0.1, "num_stras_per_run": 4, "num_trajs_per_stra": 8}),
    Ablation("δ = 0.1", 71.0, ("strata.delta_coef=0.1",), {"delta_coef": 0.1}),
    Ablation("δ = 1.0", 85.0, ("strata.delta_coef=1.0",), {"delta_coef": 1.0}),
    Ablation("κ = 0.01", 84.5, ("strata.judge.kappa=0.01",), {"judge.kappa": 0.01}),
    Ablation("κ = 1.0", 87.1, ("strata.judge.kappa=1.0",), {"judge.kappa": 1.0}),
    Ablation("σ = 1", 81.9, ("strata.num_cands_per_stra=1",), {"num_cands_per_stra": 1}),
    Ablation("σ = 2", 83.1, ("strata.num_cands_per_stra=2",), {"num_cands_per_stra": 2}),
    Ablation("σ = 4", 83.1, ("strata.num_cands_per_stra=4",), {"num_cands_per_stra": 4}),
)
MISSING = object()


@pytest.fixture(scope="module")
def resolved() -> Iterator[dict[tuple[str, ...], Future]]:
    """Every row's config (and the recipe's own), resolved two at a time in the background."""
    rows = {(), *(row.overrides for row in ABLATIONS)}
    with ThreadPoolExecutor(max_workers=2) as executor:
        yield {overrides: executor.submit(resolve, RECIPE, *overrides) for overrides in rows}


@pytest.mark.parametrize("row", ABLATIONS, ids=lambda row: row.name)
def test_ablation_sets_its_values_and_nothing_else(row: Ablation, resolved) -> None:
    config = resolved[row.overrides].result()
    strata = StrataConfig.from_dict(config["strata"])
    for path, value in row.expect.items():
        got = attrgetter(path)(strata)
        assert got == value and type(got) is type(value), f"strata.{path}: {got!r}, expected {value!r}"

    base, flat = flatten(resolved[()].result()), flatten(config)
    changed = {key for key in base.keys() | flat.keys() if base.get(key, MISSING) != flat.get(key, MISSING)}
    overridden = {override.split("=", 1)[0].lstrip("+") for override in row.overrides}
    assert changed == overridden, f"changed {sorted(changed)}, overridden {sorted(overridden)}"
    assert overridden <= {f"strata.{path}" for path in row.expect}, "an override whose value the row does not check"


def table_rows(text: str) -> list[tuple[str, float, tuple[str, ...]]]:
    """(name, paper success, overrides) of each row of the ablation table in ``text`` (`TABLE_PAGE`)."""
    block = re.search(r"<!-- ablations:start -->(.*?)<!-- ablations:end -->", text, re.DOTALL)
    assert block, f"{TABLE_PAGE} has no ablation table between <!-- ablations:start --> and <!-- ablations:end -->"
    rows = []
    for line in block.group(1).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or set(cells[1]) <= set(":- ") or not re.fullmatch(r"[\d.]+", cells[1]):
            continue  # not a table row, the header or the separator
        overrides = tuple(word for span in re.findall(r"`([^`]*)`", cells[2]) for word in span.split())
        rows.append((cells[0], float(cells[1]), overrides))
    return rows


def test_the_documented_table_lists_these_rows() -> None:
    assert table_rows((REPO / TABLE_PAGE).read_text()) == [(row.name, row.paper, row.overrides) for row in ABLATIONS]
