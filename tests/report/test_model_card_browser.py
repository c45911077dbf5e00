"""`strata model-card` as a visitor sees it: the README rendered as the Hub renders one (the YAML front matter
as metadata, the Markdown body with tables), opened in headless chromium, and read back from the laid-out page
(``innerText``, which leaves out what is not shown) rather than from the Markdown source."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import yaml
from markdown_it import MarkdownIt

from strata.cli import main
from tests.report.test_model_card import SEED0, magic_word_run, make_run
from tests.report.test_show_browser import chromium

# Appended to the rendered page: once it has loaded (images too), what the browser shows, as JSON in
# <pre id="seen"> for --dump-dom to return.
SEEN_SCRIPT = """<script>
window.addEventListener("load", () => {
const metadata = {};
for (const row of document.querySelectorAll("#front-matter tr")) {
  metadata[row.cells[0].innerText.trim()] = row.cells[1].innerText.trim();
}
const image = document.querySelector("img");
const seen = {
  metadata: metadata,
  title: document.querySelector("h1").innerText,
  headings: [...document.querySelectorAll("h2")].map((h) => h.innerText),
  code: [...document.querySelectorAll("pre code")].map((c) => c.innerText),
  curveWidth: image ? image.naturalWidth : 0,
  text: document.body.innerText,
};
const out = document.createElement("pre");
out.id = "seen";
out.textContent = JSON.stringify(seen);
document.body.appendChild(out);
});
</script>"""


def rendered(card: Path, tmp_path: Path) -> dict:
    """The card rendered next to itself (so its curve image resolves) and read back from chromium."""
    text = card.read_text(encoding="utf-8")
    _, front, body = text.split("---\n", 2)
    rows = "".join(f"<tr><td>{html.escape(str(key))}</td><td>{html.escape(str(value))}</td></tr>"
                   for key, value in yaml.safe_load(front).items())  # YAML comments are not metadata
    page = card.with_name("card.html")
    page.write_text(f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><table id="front-matter">{rows}'
                    f"</table>{MarkdownIt('commonmark').enable('table').render(body)}{SEEN_SCRIPT}</body></html>",
                    encoding="utf-8")
    dom = chromium(tmp_path, "--window-size=1280,1000", "--dump-dom", page.as_uri()).stdout
    found = re.search(r'<pre id="seen">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    return json.loads(html.unescape(found.group(1)))


def test_a_card_beside_exported_weights_shows_the_hub_metadata_and_how_to_load_it(tmp_path: Path, make_evaluation,
                                                                                  capsys) -> None:
    run = make_run(tmp_path / "run", ["actor_rollout_ref.model.path=Qwen/Qwen2.5-1.5B-Instruct",
                                      "trainer.experiment_name=strata-alfworld-qwen2.5-1.5b"])
    release = tmp_path / "release" / "strata-qwen2.5-1.5b"
    release.mkdir(parents=True)
    (release / "config.json").write_text("{}")  # what `strata export` writes: config and weights
    (release / "model.safetensors").write_bytes(b"\0" * 4096)
    evaluation = make_evaluation(0, SEED0).save(tmp_path / "seed0.json")
    assert main(["model-card", "--run-dir", str(run), "--eval", str(evaluation), "--out",
                 str(release / "README.md")]) == 0
    view = rendered(release / "README.md", tmp_path)
    metadata = view["metadata"]
    assert metadata["license"] == "apache-2.0" and metadata["base_model"] == "Qwen/Qwen2.5-1.5B-Instruct"
    assert metadata["library_name"] == "transformers" and "strata" in metadata["tags"]
    assert view["title"] == "strata-alfworld-qwen2.5-1.5b: StraTA on ALFWorld"
    [snippet] = [code for code in view["code"] if "from_pretrained" in code]
    assert f'path = "{release}"' in snippet and "strata/core/prompts/alfworld.yaml" in snippet
    assert "Usage" in view["headings"] and "Weights" not in view["headings"]
    assert view["curveWidth"] > 0  # the training curve image loads from beside the card


def test_a_card_without_weights_offers_no_loading_snippet(tmp_path: Path, tiny_model_dir: Path,
                                                           make_evaluation) -> None:
    run = magic_word_run(tmp_path, tiny_model_dir, tmp_path / "assets" / "prompts.yaml")
    evaluation = make_evaluation(0, SEED0).save(tmp_path / "seed0.json")
    assert main(["model-card", "--run-dir", str(run), "--eval", str(evaluation)]) == 0
    view = rendered(run / "model-card" / "README.md", tmp_path)
    assert view["metadata"]["license"] == "apache-2.0" and "base_model" not in view["metadata"]  # a local model
    assert view["title"] == "strata-magic-word-tiny-cpu: StraTA on the magic-word game"
    assert not any("from_pretrained" in code for code in view["code"]) and "Usage" not in view["headings"]
    assert "Weights" in view["headings"]
    assert "This folder holds the card and its curve only, not the model's weights" in view["text"]
    assert "CPU (verl's cpu platform, no GPU)" in view["text"] and "prompts//" not in view["text"]
    assert view["curveWidth"] > 0
