"""The README and the pages under docs/ stand alone: their links point into the repository, every `strata` tool,
`make` target and repository path they name exists, and every "spec §N" the code cites is a section of
docs/algorithm.md."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from strata.cli import build_parser

REPO = Path(__file__).resolve().parents[1]
CITATION = re.compile(r"(?:spec|docs/algorithm\.md|STRATA_SPEC)'?s? §(\d+(?:\.\d+)?)", re.IGNORECASE)
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCED = re.compile(r"^ *```[^\n]*\n(.*?)^ *```", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
# A command where a shell reads one: at the start of a line or span, after `|`, `;`, `&&`, `(`, `$(`, `do` or
# `then`, behind environment assignments (`WORD=value`); not an argument (`--run strata outputs/...`).
COMMAND_START = r"(?:^|[|;&(]|\bdo|\bthen)\s*(?:[A-Z_][A-Z0-9_]*=\S*\s+)*"
STRATA_TOOL = re.compile(COMMAND_START + r"strata +([a-z][a-z0-9-]*)", re.MULTILINE)
MAKE_TARGET = re.compile(COMMAND_START + r"make((?: +-[\w-]+)*) +([a-z][\w-]*)", re.MULTILINE)
PATH_ROOTS = ("recipes/", "strata/", "configs/", "benchmarks/", "docs/", "scripts/", "tests/")
PLACEHOLDERS = ("*", "<", "{", "$", "...")
# Metric names live under `strata/` too (`strata/num_trained_rows`): a word there is a path when it names a file
# (an extension) or a folder (a trailing `/`).
FILE_OR_FOLDER = re.compile(r"(?:/|\.\w+)$")


def page_ids(path: Path) -> str:
    return str(path.relative_to(REPO))


def code_spans(text: str) -> list[str]:
    """The fenced code blocks of a Markdown text, then the inline code spans of the rest."""
    blocks = FENCED.findall(text)
    return blocks + INLINE.findall(FENCED.sub("", text))


def named_paths(text: str) -> set[str]:
    """Repository paths named in code (`recipes/x.sh`, `strata/core/seeding.py:12`), without placeholders."""
    paths = set()
    for span in code_spans(text):
        for word in re.split(r"[\s=]+", span):
            word = word.strip("'\"()[],;")
            if not word.startswith(PATH_ROOTS) or any(mark in word for mark in PLACEHOLDERS):
                continue
            path = word.split("#")[0].split(":")[0].rstrip(".,;")
            if path.startswith("strata/") and not FILE_OR_FOLDER.search(path):
                continue
            paths.add(path)
    return paths


def test_readme_links_only_files_in_the_repository() -> None:
    readme = (REPO / "README.md").read_text()
    targets = [t for t in re.findall(r"\]\(([^)\s]+)\)", readme) if not t.startswith(("http://", "https://", "#"))]
    assert "docs/algorithm.md" in targets
    for target in targets:
        path = (REPO / target.split("#")[0]).resolve()
        assert path.is_relative_to(REPO) and path.exists(), target
    assert "shared/design" not in readme and "STRATA_SPEC" not in readme


@pytest.mark.parametrize("page", PAGES, ids=page_ids)
def test_every_relative_link_points_to_a_file_in_the_repository(page: Path) -> None:
    targets = [t for t in LINK.findall(page.read_text()) if not t.startswith(("http://", "https://", "mailto:", "#"))]
    broken = []
    for target in targets:
        path = (page.parent / target.split("#")[0]).resolve()
        if not (path.is_relative_to(REPO) and path.exists()):
            broken.append(target)
    assert not broken


def strata_tools() -> set[str]:
    """The subcommands `strata --help` lists, read from the CLI's own parser."""
    actions = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(actions) == 1
    return set(actions[0].choices)


@pytest.mark.parametrize("page", PAGES, ids=page_ids)
def test_every_strata_tool_named_in_code_exists(page: Path) -> None:
    tools = strata_tools()
    assert {"doctor", "show", "export"} <= tools, "the parser's subcommands were not found"
    named = {tool for span in code_spans(page.read_text()) for tool in STRATA_TOOL.findall(span)}
    assert named <= tools, f"not a strata tool: {sorted(named - tools)}"


def makefile_targets() -> set[str]:
    return set(re.findall(r"^([\w.-]+) *:(?!=)", (REPO / "Makefile").read_text(), flags=re.MULTILINE)) - {".PHONY"}


@pytest.mark.parametrize("page", PAGES, ids=page_ids)
def test_every_make_target_named_in_code_exists(page: Path) -> None:
    targets = makefile_targets()
    assert {"test", "demo", "install-gpu"} <= targets, "the Makefile's targets were not found"
    named = {target for span in code_spans(page.read_text()) for _, target in MAKE_TARGET.findall(span)}
    assert named <= targets, f"not a make target: {sorted(named - targets)}"


@pytest.mark.parametrize("page", PAGES, ids=page_ids)
def test_every_repository_path_named_in_code_exists(page: Path) -> None:
    missing = sorted(path for path in named_paths(page.read_text()) if not (REPO / path).exists())
    assert not missing


def test_the_code_readers_see_commands_and_paths() -> None:
    text = ("Run `strata doctor RECIPE.sh`, then `make -n install-gpu`; see `strata/core/seeding.py:12`,\n"
            "`tests/x.py::test_y`, `recipes/train-*.sh` and `benchmarks/runs/<name>/`.\n"
            "`strata/num_trained_rows` and `strata compare --run strata outputs/a.json`.\n"
            "```bash\nstrata show RUN   # python -m strata.cli, strata/report/\nA=1 make test | strata curve\n"
            "for s in a b; do strata play --split $s; done\n```\n")
    spans = code_spans(text)
    assert {t for s in spans for t in STRATA_TOOL.findall(s)} == {"doctor", "show", "curve", "play", "compare"}
    assert {t for s in spans for _, t in MAKE_TARGET.findall(s)} == {"install-gpu", "test"}
    assert named_paths(text) == {"strata/core/seeding.py", "tests/x.py", "strata/report/"}


def test_every_cited_spec_section_is_a_heading_of_the_algorithm_page() -> None:
    page = (REPO / "docs/algorithm.md").read_text()
    sections = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", page, flags=re.MULTILINE))
    assert {"1", "1.1", "1.2", "1.3", "1.4", "1.5", "2", "2.1", "3", "4", "5"} <= sections
    cited: dict[str, set[str]] = {}
    for folder in ("strata", "configs", "recipes", "tests", "benchmarks"):
        for path in (REPO / folder).rglob("*"):
            if path.suffix in {".py", ".sh", ".yaml", ".md"} and path.is_file():
                for section in CITATION.findall(path.read_text(errors="replace")):
                    cited.setdefault(section, set()).add(str(path.relative_to(REPO)))
    assert cited, "no spec citation found: the pattern is wrong"
    missing = {section: sorted(paths) for section, paths in cited.items() if section not in sections}
    assert not missing


def test_the_horizons_the_algorithm_page_states_are_the_configs() -> None:
    """docs/algorithm.md §3 names each environment's episode cap; the environment configs set them."""
    import yaml

    text = " ".join((REPO / "docs" / "algorithm.md").read_text(encoding="utf-8").split())
    caps = {name: yaml.safe_load((REPO / "configs" / "environment" / f"{name}.yaml").read_text())["env"]["max_steps"]
            for name in ("sciworld", "webshop")}
    assert f"{caps['sciworld']} on ALFWorld and ScienceWorld" in text and f"{caps['webshop']} on WebShop" in text


def test_the_sciworld_results_count_the_long_gold_paths_they_list() -> None:
    """The sentence on gold paths longer than H = 50 states the count of its own per-task-type list."""
    text = " ".join((REPO / "benchmarks" / "RESULTS_sciworld.md").read_text(encoding="utf-8").split())
    listing = text.split("Longest gold path per task type", 1)[1].split("Reading the numbers", 1)[0]
    lengths = dict(re.findall(r"([a-z][a-z0-9-]+) (\d+)[,.]", listing.split("):", 1)[1]))
    assert len(lengths) == 30
    longer = sum(int(steps) > 50 for steps in lengths.values())
    assert f"{longer} of the 30 task types have variations whose gold path is longer" in text


def test_the_readme_s_webshop_and_sciworld_settings_are_the_code_s() -> None:
    """The README's table of what each WebShop and ScienceWorld number was measured on states the defaults the
    code has: goal set and test goals, horizons, and AgentGym's task types."""
    import yaml

    from strata.envs.sciworld.tasks import AGENTGYM_EXCLUDED, TASK_SETS, TASK_TYPES
    from strata.envs.webshop.tasks import DEFAULT_GOALS, SMALL_CATALOGUE_RANGES, describe_ranges

    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    section = text.split("## WebShop and ScienceWorld", 1)[1].split("## ", 1)[0]
    caps = {name: yaml.safe_load((REPO / "configs" / "environment" / f"{name}.yaml").read_text())["env"]
            .get("max_steps") for name in ("sciworld", "sciworld_agentgym", "webshop")}
    start, stop = SMALL_CATALOGUE_RANGES["test"]
    assert f"the *{DEFAULT_GOALS}* goals of the 1,000-product files, test = goals {start}-{stop - 1}" in section
    assert f"plays the {stop - start} test goals" in section
    assert f"Tasks: WebShop {DEFAULT_GOALS} goals {start}-{stop - 1} ({stop - start}), split test, of the " \
           f"1,000-product files ({describe_ranges(SMALL_CATALOGUE_RANGES)})." in section
    assert section.count(f"H = {caps['webshop']}") == 2
    assert f"the recipes' H = {caps['sciworld']}" in section and f"Episodes of at most {caps['sciworld']} steps" \
        in section
    assert f"AgentGym caps at {caps['sciworld_agentgym']}, which `env.max_steps={caps['sciworld_agentgym']}`" in section
    assert len(TASK_SETS["agentgym"]) == len(TASK_TYPES) - len(AGENTGYM_EXCLUDED)
    assert f"AgentGym's {len(TASK_SETS['agentgym'])} task types (the default task set)" in section
