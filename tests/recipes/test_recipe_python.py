"""Every script in recipes/ that runs Python finds the project's `.venv` on its own: with PY unset it uses
`.venv/bin/python` when that exists (the recipes cd to the repository root first), else `python`; a PY
given by the caller wins. Checked by running each script's own PY line with bash in a scratch folder."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = sorted([*(REPO / "recipes").glob("*.sh"), *(REPO / "recipes/lib").glob("*.sh")])
PY_LINE = re.compile(r"^PY=.*$", re.MULTILINE)


def resolved_python(py_line: str, folder: Path, given: str | None = None) -> str:
    env = {"PATH": "/usr/bin:/bin", **({"PY": given} if given else {})}
    result = subprocess.run(["bash", "-c", f'set -eu; {py_line}\necho "$PY"'], cwd=folder, env=env,
                            capture_output=True, text=True, check=True, timeout=30)
    return result.stdout.strip()


def test_every_script_that_runs_python_sets_py() -> None:
    for script in SCRIPTS:
        text = script.read_text()
        if "$PY " in text or '"$PY"' in text:
            assert PY_LINE.search(text), f"{script.name} uses $PY without setting it"


@pytest.mark.parametrize("script", [s for s in SCRIPTS if PY_LINE.search(s.read_text())], ids=lambda s: s.name)
def test_py_falls_back_to_the_project_venv(script: Path, tmp_path: Path) -> None:
    (py_line,) = PY_LINE.findall(script.read_text())
    assert resolved_python(py_line, tmp_path) == "python"
    venv_python = tmp_path / ".venv/bin/python"
    venv_python.parent.mkdir(parents=True)
    venv_python.write_text("#!/bin/sh\n")
    venv_python.chmod(0o755)
    assert resolved_python(py_line, tmp_path) == ".venv/bin/python"
    assert resolved_python(py_line, tmp_path, given="/opt/py/bin/python") == "/opt/py/bin/python"
