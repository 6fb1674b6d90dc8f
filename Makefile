# kgpubench: the two quick-start commands are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
DEMO_STAMP := $(VENV)/.installed

.PHONY: demo test venv clean lint

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The demo needs the package alone; tests also need the dev extra, the features extra (the CUDA 12
# NVRTC and ptxas wheels, so the sm_70 compile checks run where the system nvcc is CUDA 13) and the ray
# extra (the Ray collection and board tests run on a small local Ray instance).
$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev,features,ray]"
	touch $(STAMP) $(DEMO_STAMP)

venv: $(STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/kgpubench info
	$(BIN)/kgpubench leaderboard run --jobs 2 --out build/demo/results
	@echo "board: build/demo/README.md and build/demo/index.html (the committed board is leaderboard/README.md)"

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check kgpubench collectors baselines tests benchmarks

clean:
	rm -rf $(VENV) build dist *.egg-info
