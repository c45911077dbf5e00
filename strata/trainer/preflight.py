"""Start-up checks that turn the commonest mistakes into one clear line before Ray starts.

Without them a wrong model path or a missing vLLM surfaces minutes later as a traceback from inside
a Ray worker. The checks themselves are `strata.trainer.checks.CHECKS`, the same list `strata doctor` runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from omegaconf import DictConfig

from strata.trainer.checks import Finding, Level, run_checks
from strata.trainer.checks.nodes import NODE_CHECKS, joins_cluster
from strata.trainer.config import ConfigError

SKIP_VARIABLE = "STRATA_SKIP_CHECKS"
"""Checks whose errors do not stop the run (comma-separated names as `strata doctor` prints them, or ``all``): for a
driver that is not where the run computes, such as a CPU head node of a GPU cluster (KubeRay, a SLURM login node),
whose own GPUs, driver or packages the ``gpus``, ``driver`` or ``rollout`` checks would read. Their findings are
still printed, as warnings."""


def skipped_checks(environ: Mapping[str, str]) -> set[str]:
    """The check names ``STRATA_SKIP_CHECKS`` lists (``all``: every check)."""
    return {name.strip() for name in environ.get(SKIP_VARIABLE, "").split(",") if name.strip()}


def judged(findings: list[Finding], config: DictConfig, environ: Mapping[str, str]) -> list[Finding]:
    """The findings as they count for this run: an error of a check ``STRATA_SKIP_CHECKS`` names, or of one of the
    driver's own machine checks (`strata.trainer.checks.nodes.NODE_CHECKS`, without ``@node``) when the run joins a
    Ray cluster, whose nodes are checked instead (`enforce_node_checks`), becomes a warning that says why."""
    skipped = skipped_checks(environ)
    on_nodes = set(NODE_CHECKS) if joins_cluster(config, environ) else set()
    counted = []
    for finding in findings:
        name = finding.check.split("@")[0]
        if finding.level is Level.ERROR and (name in skipped or "all" in skipped):
            finding = Finding(finding.check, Level.WARNING, f"{finding.message} (not enforced: {SKIP_VARIABLE})")
        elif finding.level is Level.ERROR and "@" not in finding.check and name in on_nodes:
            finding = Finding(finding.check, Level.WARNING, f"{finding.message} (this driver's own: the run checks "
                                                            "every node of the cluster as it starts)")
        counted.append(finding)
    return counted


def _warnings_or_raise(findings: list[Finding]) -> list[Finding]:
    errors = [f for f in findings if f.level is Level.ERROR]
    if errors:
        raise ConfigError("\n".join(f"{f.check}: {f.message}" for f in errors))
    return [f for f in findings if f.level is Level.WARNING]


def preflight(config: DictConfig, environ: Mapping[str, str] = os.environ) -> list[Finding]:
    """Run every start-up check; raise `ConfigError` (one line per error) if any would fail the run, as `judged`
    counts them. Returns the warnings, for the caller to print.

    May write the checkpoint to resume from into ``config.trainer`` (``resume_mode=auto`` becomes ``resume_path``)
    and the detected device.
    """
    return _warnings_or_raise(judged(run_checks(config), config, environ))


def enforce_node_checks(config: DictConfig, environ: Mapping[str, str] = os.environ) -> list[Finding]:
    """In a process connected to the run's Ray cluster, when the run joined one: `NODE_CHECKS` on every node,
    raising `ConfigError` on errors (``STRATA_SKIP_CHECKS`` applies as on the driver). Returns the warnings."""
    if not joins_cluster(config, environ):
        return []
    from strata.trainer.checks.nodes import check_nodes

    return _warnings_or_raise(judged(check_nodes(config), config, environ))
