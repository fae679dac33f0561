# Two commands on a fresh machine (see README.md):
#   make demo   set up and run the main job (replay an example tool call stream)
#   make test   set up (Graphviz too, where apt-get can install it) and run the tests
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test check bench diagrams graphviz w3c clean

$(VENV)/.base: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.dev: $(VENV)/.base
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

demo: $(VENV)/.base
	$(BIN)/toolcalls replay examples/interleaved-calls.jsonl

test: $(VENV)/.dev graphviz
	$(BIN)/python -m pytest

check: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(VENV)/.dev
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_tracker.py
	$(BIN)/python benchmarks/bench_executor.py

diagrams: $(VENV)/.base graphviz
	$(BIN)/statecharts regenerate diagrams

# The W3C SCXML suite from python-statemachine's sdist (into .cache/), then its tests.
w3c: $(VENV)/.dev
	scripts/fetch-w3c-suite $(BIN)/python
	$(BIN)/python -m pytest tests/statecharts/test_w3c.py -q

graphviz:
	@scripts/install-graphviz --if-possible

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis .cache
