#!/usr/bin/env bash
# Mutation testing (mutmut) over strata/core, the workflow's rows/group/episode/dump and the checkpoint
# pointer/inspect code, against their fast unit tests (scripts/mutation.cfg says which). Not part of
# `make test`: run it now and then, and keep benchmarks/RESULTS_mutation.md's survivor list current.
#
#   bash scripts/mutation.sh              # all mutants; prints the per-file table and every survivor
#   MUTATION_KEEP=1 bash scripts/mutation.sh NAME...
#                                         # re-check these mutants (names as the list prints them) against
#                                         # the current tests, keeping the last run's other results
#   bash scripts/mutation.sh --generate   # only write the mutants/ folder (for scripts/mutation_check.py)
#
# On a busy machine, scripts/mutation_check.py re-checks one file's mutants (from the mutants/ folder this
# leaves) against chosen tests only, without mutmut's runner; see its docstring.
#
# MUTATION_JOBS (default: the CPU count) mutants run at once, under nice 19. The run happens in a scratch
# copy of the working tree (MUTATION_DIR, default outputs/mutation), so no source you work on is touched.
set -euo pipefail

MUTMUT_VERSION=3.8.1
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
WORK="${MUTATION_DIR:-$ROOT/outputs/mutation}"
JOBS="${MUTATION_JOBS:-$(nproc)}"

# The pinned tool, installed into the project's virtualenv when missing.
"$VENV/bin/python" -m pip show mutmut 2>/dev/null | grep -qx "Version: $MUTMUT_VERSION" \
  || "$VENV/bin/python" -m pip install -q "mutmut==$MUTMUT_VERSION"

# A scratch copy of the tracked and new (not ignored) files; mutmut writes its mutants/ there. tar keeps
# the files' times, so with MUTATION_KEEP=1 mutmut regenerates only the mutants of sources that changed.
[[ "${MUTATION_KEEP:-0}" == 1 ]] || rm -rf "$WORK"
mkdir -p "$WORK"
git -C "$ROOT" ls-files -z --cached --others --exclude-standard \
  | tar -C "$ROOT" --null --ignore-failed-read -T - -cf - | tar -C "$WORK" -xf -
cp "$ROOT/scripts/mutation.cfg" "$WORK/setup.cfg"

# The tests' tokenizer, tiny model, games and MiniLM are built once and shared by every mutant's session.
export STRATA_TEST_ASSET_CACHE="$WORK/.assets"
cd "$WORK"
if [[ "${1:-}" == --generate ]]; then
  # mutmut 3.8.1's own generation steps (the start of its `run`), without its stats and test passes.
  "$VENV/bin/python" - "$JOBS" <<'PY'
import os, sys
import mutmut.__main__ as m
m.set_mutant_under_test("mutant_generation")
os.makedirs("mutants", exist_ok=True)
m.copy_src_dir()
m.copy_also_copy_files()
m.setup_source_paths()
m.store_lines_covered_by_tests()
print(m.create_mutants(int(sys.argv[1])))
PY
  exit 0
fi
start=$(date +%s)
# mutmut redraws a progress line with carriage returns: the log keeps it, the terminal gets the outcome.
if ! nice -n 19 "$VENV/bin/mutmut" run --max-children "$JOBS" "$@" >"$WORK/mutmut-run.log" 2>&1; then
  tr '\r' '\n' <"$WORK/mutmut-run.log" | tail -n 40
  exit 1
fi
echo "mutmut run: $(( $(date +%s) - start )) s wall"
"$VENV/bin/python" "$ROOT/scripts/mutation_summary.py" mutants
