"""The README stands alone: its links point into the repository, and every "spec §N" the code cites is a
section of docs/algorithm.md."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CITATION = re.compile(r"(?:spec|docs/algorithm\.md|STRATA_SPEC)'?s? §(\d+(?:\.\d+)?)", re.IGNORECASE)


def test_readme_links_only_files_in_the_repository() -> None:
    readme = (REPO / "README.md").read_text()
    targets = [t for t in re.findall(r"\]\(([^)\s]+)\)", readme) if not t.startswith(("http://", "https://", "#"))]
    assert "docs/algorithm.md" in targets
    for target in targets:
        path = (REPO / target.split("#")[0]).resolve()
        assert path.is_relative_to(REPO) and path.exists(), target
    assert "shared/design" not in readme and "STRATA_SPEC" not in readme


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
