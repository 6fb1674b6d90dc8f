# kgpubench: the two quick-start commands are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
DEMO_STAMP := $(VENV)/.installed

.PHONY: demo test test-fast venv clean lint browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The demo needs the package alone; tests also need the dev extra, the features extra (the CUDA 12
# NVRTC and ptxas wheels, so the sm_70 compile checks run where the system nvcc is CUDA 13), the browser
# extra (Playwright, for the board site's browser test), the croissant extra (mlcroissant) and the ray
# extra (the Ray collection and board tests run on a small local Ray instance). README.md says what
# `make test` installs; tests/test_readme_make.py holds it to this file.
$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev,features,browser,croissant,ray]"
	touch $(STAMP) $(DEMO_STAMP)

venv: $(STAMP)

# The demo board starts from the committed results: each one whose task declaration, task rows, split and model file
# are those of this checkout is copied (--from), the others run; then one learned model of a small task is trained
# and scored again on every fold and compared with its result (verify; DEMO_VERIFY="--task npb-tpb" re-runs every
# model of the task, about 10 s more). A second `make demo` with nothing changed runs no model for the board.
DEMO_VERIFY ?= --task npb-tpb --only lgbm_ranker
demo: $(DEMO_STAMP)
	$(BIN)/kgpubench info
	$(BIN)/kgpubench leaderboard run --jobs 2 --reuse --from leaderboard/results --out build/demo/results
	$(BIN)/kgpubench leaderboard verify --results build/demo/results $(DEMO_VERIFY)
	@echo "board: build/demo/README.md and build/demo/index.html (the committed board is leaderboard/README.md)"

# The board site's browser test drives Debian's chromium package (headless) through Playwright. It is installed
# here when missing and this user may (root with apt-get); otherwise the browser test skips and says why (the
# structural test of every page still runs).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's chromium for the browser test"; \
	    { apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 || \
	      { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; } || \
	    echo "could not install chromium: the browser test will skip"; \
	  else echo "chromium is not installed (as root: apt-get install chromium): the browser test will skip"; fi; }

# Test tiers (tests/conftest.py, docs/DEVELOPING.md): `make test` runs every tier (gpu tests skip without a
# GPU) on TEST_WORKERS processes (pytest-xdist; a test file runs on one worker, its tests in order: tests/conftest.py);
# `make test-fast` runs the unit tests that are not slow, for the edit loop.
TEST_WORKERS ?= 2
PYTEST_PARALLEL = -n $(TEST_WORKERS) --dist loadfile

# CI calls `make test`: lint first, then the whole suite.
test: lint browser
	$(BIN)/python -m pytest -q $(PYTEST_PARALLEL)

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_PARALLEL) -m "unit and not slow"

# The one lint check (pyproject.toml [tool.ruff]); tests/test_dead_code.py runs vulture.
LINT_PATHS := kgpubench tests baselines benchmarks collectors scripts
lint: $(STAMP)
	$(BIN)/ruff check $(LINT_PATHS)

clean:
	rm -rf $(VENV) build dist *.egg-info
