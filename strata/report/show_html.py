"""One self-contained HTML page for a whole step of trajectory dumps: every task, each collapsible.

The page is the terminal view's tree (`strata.report.show`) with a node that has children turned into a
``<details>`` element; it needs no script and no external file, so it opens from a copied folder.
All dump text is escaped. Above the tasks: the step summary (`strata.report.show.step_summary`) and a legend
of every number and mark the tree uses, for a reader who has not read docs/algorithm.md.
"""

from __future__ import annotations

import html
from typing import Any

from strata.report.show import Node, Span, step_summary, task_tree

# (mark as the tree shows it, its style, what it means): the page's legend, in the order a reader meets them
LEGEND: tuple[tuple[str, str, str], ...] = (
    ("won 3/8", "good", "episodes of the task that solved it, of all its episodes"),
    ("KEPT rank 0 / not kept", "good", "whether diverse selection kept the strategy candidate, and in which "
                                       "order it was picked"),
    ("nearest kept cos 0.31", "", "cosine similarity of the candidate's embedding to the most similar other kept "
                                  "strategy: near 1 a paraphrase, lower a different plan; - when nothing was "
                                  "embedded (diversity off, a malformed candidate, a single kept one)"),
    ("score 0.50", "", "a strategy's score S: the mean of its best max(1, floor(δ·M)) episode rewards"),
    ("A(z) +0.71", "good", "strategy-level advantage: S normalised over the task's N kept strategies, "
                           "(S - mean) / std; 0 when all scored alike"),
    ("strategy tokens +0.93", "good", "the advantage every token of the strategy reply is trained with: A(z) "
                                      "plus its shaping penalty (missing tag, length)"),
    ("A(tau) -0.88", "bad", "trajectory-level advantage: the episode's reward normalised over the M episodes "
                            "of the same strategy"),
    ("adv -0.35", "bad", "the advantage of one action reply's tokens: A(tau) plus its shaping penalty and -κ "
                         "when flagged; green above 0, red below, - when not trained (validation)"),
    ("= episode +0.50, step -0.25 (G 9.03, anchor 3f2a... shared by 5)", "dim",
     "GiGPO's terms of the step's advantage: its episode part, its step part (its discounted return G minus the "
     "mean G of the steps whose action was chosen on the same observation, the anchor, named by a digest; 0 when "
     "alone), weighted by ω, and its penalty"),
    ("FLAGGED", "flag", "the episode's self-judgment named this step as neither following the strategy nor "
                        "moving the task forward (penalty -κ)"),
    ("UNPARSED", "bad", "the judgment had no readable <judgment>[...]</judgment>: it flags no step"),
    ("MALFORMED", "bad", "a reply without its required tag (<strategy> or <action>): format penalty f; a "
                         "malformed action reply uses up its step without touching the game"),
    ("NOT ADMISSIBLE", "bad", "the command is not one the game accepts at that point (it answers "
                              "\"Nothing happens.\")"),
    ("DROPPED / not trained", "warn", "episodes the environment cut short (a crashed or hung game) train "
                                      "nothing; a strategy with only those is dropped"),
    ("truncated", "warn", "the reply hit the token limit L_max (full length penalty)"),
)

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font: 14px/1.45 ui-monospace, Menlo, Consolas, monospace; margin: 1.5em; color: #1d1d1f; background: #fff; }}
h1 {{ font-size: 1.3em; }}
details {{ margin: 0.15em 0 0.15em 1.2em; }}
details.task {{ margin-left: 0; border: 1px solid #ccd; border-radius: 4px; padding: 0.3em 0.6em; }}
summary {{ cursor: pointer; white-space: pre-wrap; }}
.line {{ margin-left: 1.2em; white-space: pre-wrap; }}
div.text {{ white-space: pre-wrap; margin-left: 1.2em; padding: 0.2em 0.5em; background: #f4f5f7; color: #333; }}
.head {{ font-weight: bold; }}
.good {{ color: #137a2f; }}
.bad {{ color: #c0182b; font-weight: bold; }}
.warn {{ color: #9a6700; }}
.flag {{ color: #fff; background: #a0249b; padding: 0 0.3em; border-radius: 3px; }}
.dim {{ color: #777; }}
section {{ border: 1px solid #ccd; border-radius: 4px; padding: 0.3em 0.8em; margin: 0.8em 0; background: #fafbfc; }}
section h2 {{ font-size: 1.05em; margin: 0.3em 0; }}
dl.legend {{ display: grid; grid-template-columns: max-content 1fr; gap: 0.2em 1em; margin: 0.3em 0; }}
dl.legend dt {{ white-space: nowrap; }}
dl.legend dd {{ margin: 0; color: #333; }}
</style></head>
<body>
<h1>{title}</h1>
<section class="summary" id="summary"><h2>Step summary</h2>
{summary}
</section>
<details class="legend" id="legend" open><summary class="head">Legend: what the numbers and marks mean</summary>
<dl class="legend">
{legend}
</dl></details>
<p>{count} task(s). Click a task to open it.</p>
{tasks}
</body></html>
"""


def step_page(records: list[dict[str, Any]], title: str, env: str | None = None) -> str:
    """The HTML page of a step's task records: summary, legend, then the tasks (the first starts open).
    ``env`` is the run's ``env.name``, for the task labels (`strata.report.show.task_label`)."""
    tasks = [_details(task_tree(record, env), "task", is_open=index == 0) for index, record in enumerate(records)]
    summary = "".join(_node(line) for line in step_summary(records).children)
    legend = "\n".join(f'<dt><span class="{style}">{html.escape(mark)}</span></dt><dd>{html.escape(meaning)}</dd>'
                       if style else f"<dt>{html.escape(mark)}</dt><dd>{html.escape(meaning)}</dd>"
                       for mark, style, meaning in LEGEND)
    return _PAGE.format(title=html.escape(title), count=len(records), tasks="\n".join(tasks), summary=summary,
                        legend=legend)


def _node(node: Node) -> str:
    if node.children:
        return _details(node, "", is_open=True)
    if [style for _, style in node.spans] == ["text"]:
        return f'<div class="text">{html.escape(node.spans[0][0])}</div>'
    return f'<div class="line">{_spans(node.spans)}</div>'


def _details(node: Node, css_class: str, is_open: bool) -> str:
    children = "".join(_node(child) for child in node.children)
    attributes = (f' class="{css_class}"' if css_class else "") + (" open" if is_open else "")
    return f"<details{attributes}><summary>{_spans(node.spans)}</summary>{children}</details>"


def _spans(spans: list[Span]) -> str:
    return "".join(f'<span class="{style}">{html.escape(text)}</span>' if style else html.escape(text)
                   for text, style in spans)
