"""verl's ``verl.plugins`` entry point: importing it registers the project's verl plug-ins.

verl imports this module in every process it starts (driver, task runner, workers), so each
registration below is import-only and asks no accelerator anything.
"""

from strata.backends import cpu_platform, hf_rollout, vllm_rollout  # noqa: F401  (imported for registration)
