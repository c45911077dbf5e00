"""Start-up checks that turn the commonest mistakes into one clear line before Ray starts.

Without them a wrong model path or a missing vLLM surfaces minutes later as a traceback from inside
a Ray worker. The checks themselves are `strata.trainer.checks.CHECKS`, the same list `strata doctor` runs.
"""

from __future__ import annotations

from omegaconf import DictConfig

from strata.trainer.checks import Finding, Level, run_checks
from strata.trainer.config import ConfigError


def preflight(config: DictConfig) -> list[Finding]:
    """Run every start-up check; raise `ConfigError` (one line per error) if any would fail the run.

    Returns the warnings, for the caller to print. May write the checkpoint to resume from into
    ``config.trainer`` (``resume_mode=auto`` becomes ``resume_path``) and the detected device.
    """
    findings = run_checks(config)
    errors = [f for f in findings if f.level is Level.ERROR]
    if errors:
        raise ConfigError("\n".join(f"{f.check}: {f.message}" for f in errors))
    return [f for f in findings if f.level is Level.WARNING]
