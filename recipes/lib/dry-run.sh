# Sourced by the recipes that write before they train. DRY_RUN=1 (also `strata doctor` and `strata config-diff`)
# composes and checks the run's config and prints it, and nothing more: no folder, model, task list or log is
# made, nothing is removed and no process is left; what a real run would build first is reported as missing.

# True in a dry run.
dry_run() { [ -n "${DRY_RUN:-}" ]; }

# The absolute path of a folder (Ray's workers run elsewhere), made unless this is a dry run.
run_folder() {
  dry_run || mkdir -p "$1"
  realpath -m "$1"
}

# A step that writes (a model, task lists, a catalogue): skipped by a dry run.
unless_dry_run() { dry_run || "$@"; }

# Runs "$@" with its output also written to the log file $1; a dry run only prints it.
logged() {
  local log=$1
  shift
  if dry_run; then "$@"; else "$@" 2>&1 | tee "$log"; fi
}
