"""`strata show --html` opened in a real headless browser (Debian's chromium): the page parses, holds the
strategies and transcripts, paints something (not a blank page), and shows a stranger the step summary and the
legend above the tasks, as laid out (read back with the browser's own ``innerText`` and element boxes)."""

from __future__ import annotations

import html
import json
import re
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
    simple_task,
    write_dump,
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


# Appended to a copy of the page: once it has loaded, what the browser laid out, as JSON in <pre id="seen"> for
# --dump-dom to return.
SEEN_SCRIPT = """<script>
window.addEventListener("load", () => {
const box = (selector) => document.querySelector(selector).getBoundingClientRect();
const legend = {};
for (const term of document.querySelectorAll("#legend dt")) {
  legend[term.innerText.trim()] = term.nextElementSibling.innerText.trim();
}
const seen = {
  summary: document.querySelector("#summary").innerText,
  legend: legend,
  legendOpen: document.querySelector("#legend").open,
  top: {summary: box("#summary").top, legend: box("#legend").top, firstTask: box("details.task").top},
  legendHeight: box("dl.legend").height,
  viewport: window.innerHeight,
  text: document.body.innerText,
};
const out = document.createElement("pre");
out.id = "seen";
out.textContent = JSON.stringify(seen);
document.body.appendChild(out);
});
</script>"""


def seen(page: Path, tmp_path: Path) -> dict:
    """What a visitor sees on ``page`` in a 1280x1000 window: texts as rendered, and element positions."""
    probe = tmp_path / f"seen-{page.name}"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", SEEN_SCRIPT + "</body>"), encoding="utf-8")
    dom = chromium(tmp_path, "--window-size=1280,1000", "--dump-dom", probe.as_uri()).stdout
    found = re.search(r'<pre id="seen">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    return json.loads(html.unescape(found.group(1)))


def lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def test_a_visitor_sees_the_step_summary_then_the_legend_then_the_tasks(page: Path, tmp_path: Path) -> None:
    view = seen(page, tmp_path)
    assert lines(view["summary"]) == [
        "Step summary",
        "success won 3 of 5 episodes (60.0%) in 3 task(s)",
        "malformed 2 of 11 replies (18.2%): 1 of 4 strategy candidates, 1 of 7 action replies",
        "flagged steps 1 of 5 judged steps (20.0%) in 2 judged episode(s); 0 judgment(s) UNPARSED",
        "zero-advantage groups strategy level 1 of 2 task(s) (every A(z) 0); trajectory level 0 of 3 group(s) "
        "(every A(tau) 0)",
        "game files relative to the data folder /data",
    ]
    legend = view["legend"]
    for mark in ("score 0.50", "A(z) +0.71", "strategy tokens +0.93", "A(tau) -0.88", "adv -0.35", "FLAGGED",
                 "UNPARSED", "MALFORMED", "nearest kept cos 0.31"):
        assert legend.get(mark), (mark, sorted(legend))
    assert "best max(1, floor(δ·M)) episode rewards" in legend["score 0.50"]
    assert "normalised over the task's N kept strategies" in legend["A(z) +0.71"]
    assert "every token of the strategy reply" in legend["strategy tokens +0.93"]
    assert "flags no step" in legend["UNPARSED"]
    assert "most similar other kept strategy" in legend["nearest kept cos 0.31"]
    # laid out in that order, the legend open, and both inside the first screen
    top = view["top"]
    assert view["legendOpen"] and view["legendHeight"] > 100
    assert top["summary"] < top["legend"] < top["firstTask"] and top["legend"] < view["viewport"]
    # game paths inside their data folder, not absolute
    assert "json_2.1.1/train/pick_heat_then_place_in_recep-Egg-None-GarbageCan-11" in view["text"]
    assert "/data/json_2.1.1" not in view["text"]


def test_a_magic_word_run_s_games_are_labelled_magic_word_games(tmp_path: Path) -> None:
    run = tmp_path / "magic"
    (run / "rollouts").mkdir(parents=True)
    (run / "config.yaml").write_text("env:\n  name: magic_word\n")
    games = "/root/.cache/strata/magic-word-assets/games"
    records = []
    for index in range(2):
        record = simple_task("valid", 0, index, "say the magic word")
        record["task"].update(game_file=f"{games}/valid_seen/{index}/game.json", task_type="pick_and_place_simple",
                              subtask="pick")
        records.append(record)
    write_dump(run / "rollouts" / "valid" / "step_000000-w0.jsonl.gz", records)
    page = tmp_path / "magic.html"
    assert main(["show", str(run), "--split", "valid", "--html", str(page)]) == 0
    view = seen(page, tmp_path)
    tasks = [line for line in lines(view["text"]) if line.startswith("task ")]
    assert tasks[0].startswith("task 0 magic-word game won 1/1 valid_seen/0/game.json"), tasks
    assert "pick_and_place_simple" not in view["text"] and games not in view["text"].replace(
        f"relative to the data folder {games}", "")
    assert f"game files relative to the data folder {games}" in lines(view["summary"])
