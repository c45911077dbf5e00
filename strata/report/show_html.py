"""One self-contained HTML page for a whole step of trajectory dumps: every task, each collapsible.

The page is the terminal view's tree (`strata.report.show`) with a node that has children turned into a
``<details>`` element; it needs no script and no external file, so it opens from a copied folder.
All dump text is escaped.
"""

from __future__ import annotations

import html
from typing import Any

from strata.report.show import Node, Span, task_tree

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
</style></head>
<body>
<h1>{title}</h1>
<p>{count} task(s). Click a task to open it.</p>
{tasks}
</body></html>
"""


def step_page(records: list[dict[str, Any]], title: str) -> str:
    """The HTML page of a step's task records; the first task starts open."""
    tasks = [_details(task_tree(record), "task", is_open=index == 0) for index, record in enumerate(records)]
    return _PAGE.format(title=html.escape(title), count=len(records), tasks="\n".join(tasks))


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
