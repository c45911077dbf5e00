"""`strata show --html` opened in a real headless browser (Debian's chromium): the page parses, holds the
strategies and transcripts, and paints something (not a blank page)."""

from __future__ import annotations

import html
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from strata.cli import main
from tests.report.dump_fixture import (
    JUDGE_TEXT,
    MALFORMED_CANDIDATE,
    MALFORMED_RESPONSE,
    STRATEGY_A,
    STRATEGY_B,
    write_run,
)

FLAG_BACKGROUND = (0xA0, 0x24, 0x9B)  # `.flag` in strata/report/show_html.py


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    binary = shutil.which("chromium")
    if binary is None:
        pytest.fail("chromium is missing: `make install` installs Debian's chromium (this test opens the viewer)")
    return subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path}/profile",
                           *args], capture_output=True, text=True, timeout=120, check=True)


@pytest.fixture()
def page(tmp_path: Path) -> Path:
    path = tmp_path / "step3.html"
    assert main(["show", str(write_run(tmp_path)), "--step", "3", "--html", str(path)]) == 0
    return path


def test_page_shows_strategies_and_transcripts(page: Path, tmp_path: Path) -> None:
    dom = chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    assert dom.count('<details class="task"') == 3
    for text in (STRATEGY_A, STRATEGY_B, "raw: " + MALFORMED_CANDIDATE, "raw: " + MALFORMED_RESPONSE, JUDGE_TEXT,
                 "NEW VERSION of task 7", "trajectories (grpo: no strategy)", "> open cabinet 3",
                 "You open the cabinet 3. It is empty.", "DROPPED: every trajectory failed"):
        assert html.escape(text, quote=False) in dom, text
    # dump text stayed text: no element made of it
    assert "<strat" not in dom and "<flagged>" not in dom and "<action>" not in dom
    assert '<span class="flag">FLAGGED</span>' in dom and '<span class="bad">adv -0.35</span>' in dom


def test_page_paints(page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    chromium(tmp_path, "--window-size=1280,1600", "--hide-scrollbars", f"--screenshot={shot}", page.as_uri())
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 1600)
    colours = image.getcolors(maxcolors=1 << 20)
    assert len(colours) > 20  # text in several colours, not a blank page
    assert FLAG_BACKGROUND in {colour for _, colour in colours}  # the flagged step's badge, from the inline CSS
