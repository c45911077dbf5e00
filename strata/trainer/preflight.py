"""Start-up checks that turn the commonest mistakes into one clear line before Ray starts.

Without them a wrong model path or a missing vLLM surfaces minutes later as a traceback from inside
a Ray worker. The checks themselves are `strata.trainer.checks.CHECKS`, the same list `strata doctor` runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from omegaconf import DictConfig

from strata.trainer.checks import Finding, Level, run_checks
from strata.trainer.config import ConfigError

SKIP_VARIABLE = "STRATA_SKIP_CHECKS"
"""Checks whose errors do not stop the run (comma-separated names as `strata doctor` prints them, or ``all``): for a
driver that is not where the run computes, such as a CPU head node of a GPU cluster (KubeRay, a SLURM login node),
whose own GPUs, driver or packages the ``gpus``, ``driver`` or ``rollout`` checks would read. Their findings are
still printed, as warnings."""


def preflight(config: DictConfig, environ: Mapping[str, str] = os.environ) -> list[Finding]:
    """Run every start-up check; raise `ConfigError` (one line per error) if any would fail the run.

    Returns the warnings, for the caller to print, the errors of checks named in ``STRATA_SKIP_CHECKS`` among them.
    May write the checkpoint to resume from into ``config.trainer`` (``resume_mode=auto`` becomes ``resume_path``)
    and the detected device.
    """
    skipped = {name.strip() for name in environ.get(SKIP_VARIABLE, "").split(",") if name.strip()}
    findings = run_checks(config)
    errors, warnings = [], [f for f in findings if f.level is Level.WARNING]
    for finding in (f for f in findings if f.level is Level.ERROR):
        if finding.check in skipped or "all" in skipped:
            warnings.append(Finding(finding.check, Level.WARNING, f"{finding.message} (not enforced: {SKIP_VARIABLE})"))
        else:
            errors.append(finding)
    if errors:
        raise ConfigError("\n".join(f"{f.check}: {f.message}" for f in errors))
    return warnings
