"""No two modules of strata import each other, directly or round a longer loop, at the top of a file or inside a
function: a cycle means neither module can be read (or moved) without the other (issue #38)."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def module_files(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module under ``package`` (a package is its ``__init__``)."""
    files = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def imported_modules(name: str, path: Path, known: Iterable[str]) -> set[str]:
    """The modules of ``known`` that the file imports anywhere in it (``from a import b`` counts ``a.b`` when that
    is a module, else ``a``)."""
    known = set(known)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in known}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.add(target if target in known else base)
    return (found & known) - {name}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for start in edges:
        if start in order:
            continue
        work = [(start, iter(sorted(edges[start])))]
        order[start] = low[start] = len(order)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in order:
                    order[child] = low[child] = len(order)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], order[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == order[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def import_graph(package: Path) -> dict[str, set[str]]:
    files = module_files(package)
    return {name: imported_modules(name, path, files) for name, path in files.items()}


def test_no_module_of_strata_imports_one_that_imports_it_back() -> None:
    graph = import_graph(REPO / "strata")
    assert len(graph) > 100  # the walk found the package
    assert cycles(graph) == []


def test_the_finder_sees_a_loop_through_a_function_level_import(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text("def late():\n    from ..c import value\n")
    (package / "c.py").write_text("import pkg.a\nvalue = 1\n")
    (package / "d.py").write_text("from pkg import a\n")  # into the loop, not part of it
    assert cycles(import_graph(package)) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
