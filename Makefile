# Two commands on a fresh machine (see README.md):
#   make demo   set up and run the main job (replay a recorded OpenAI stream, running its tools)
#   make test   set up (Graphviz too, where apt-get can install it) and run the tests
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test check bench bench-ray ray diagrams graphviz node mutation soak w3c clean

$(VENV)/.base: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.dev: $(VENV)/.base
	$(BIN)/python -m pip install --quiet -e '.[dev,providers]'
	touch $@

# The Ray tests' extra (ray, redis client) and Debian's redis-server; without them `make test`
# skips tests/ray with one line.
$(VENV)/.ray: $(VENV)/.dev
	$(BIN)/python -m pip install --quiet -e '.[dev,providers,ray]'
	touch $@

ray: $(VENV)/.ray
	scripts/install-redis

demo: $(VENV)/.base
	$(BIN)/toolcalls replay examples/openai-chat.jsonl --format openai-chat --tools examples/tools.py:TOOLS

test: $(VENV)/.dev graphviz node
	$(BIN)/python -m pytest

# The soak test (left out of `make test`): TOOLCALLS_SOAK_CALLS calls, 100,000 by default.
soak: $(VENV)/.dev
	$(BIN)/python -m pytest -m soak -q -s tests/toolcalls/test_session_soak.py

check: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(VENV)/.dev
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_tracker.py
	$(BIN)/python benchmarks/bench_executor.py
	$(BIN)/python benchmarks/bench_session.py
	$(BIN)/python benchmarks/bench_adapters.py

bench-ray: $(VENV)/.ray
	$(BIN)/python benchmarks/bench_ray.py

diagrams: $(VENV)/.base graphviz
	$(BIN)/statecharts regenerate diagrams

# The W3C SCXML suite from python-statemachine's sdist (into .cache/), then its tests.
w3c: $(VENV)/.dev
	scripts/fetch-w3c-suite $(BIN)/python
	$(BIN)/python -m pytest tests/statecharts/test_w3c.py -q

graphviz:
	@scripts/install-graphviz --if-possible

# Node.js for the JavaScript conformance example, and the AI SDK peer's locked packages.
node: examples/ai-sdk/node_modules/.package-lock.json

examples/ai-sdk/node_modules/.package-lock.json: examples/ai-sdk/package-lock.json
	@scripts/install-node --if-possible

mutation: $(VENV)/.dev
	$(BIN)/python tools/mutation_score.py derived

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis .cache examples/ai-sdk/node_modules
