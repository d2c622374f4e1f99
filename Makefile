# Every target sets up what it needs: a fresh machine has Python 3.11, pip, Node 20 and npm.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup services demo test test-fast test-loaded lint typecheck pytest bench bench-tasks corpus prism load golden clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m bridge.cli.demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# Debian's nginx and redis-server for the scale-out tests and `make load` (apt-get when missing; root on CI).
services: $(STAMP)
	$(BIN)/python -m tests.services.install

pytest: $(STAMP) services
	$(BIN)/pytest -q

test: lint typecheck pytest

# The inner loop: unit and in-memory tests (no subprocess servers, npm packages or corpus); `make test` is the gate.
# MCP_BRIDGE_NO_SERVERS makes a test that starts a server anyway fail (tests/conftest.py SERVER_PLACES).
test-fast: $(STAMP)
	MCP_BRIDGE_NO_SERVERS=1 $(BIN)/pytest -q -x -n 2 -m "not corpus and not node and not server"

# The gate on a busy machine: the whole of `make test` beside two CPU-spinning processes (tests/services/hogs.py).
test-loaded: $(STAMP) services
	$(BIN)/python -m tests.services.hogs --hogs 2 -- $(MAKE) test

golden: $(STAMP)
	$(BIN)/python -m tests.regen_golden

BENCH_STAMP := $(VENV)/.installed-bench

$(BENCH_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e ".[dev,bench]"
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python -m bench.run_all
	$(BIN)/python -m bench.tokens
	$(BIN)/python -m bench.corpus
	$(BIN)/python -m bench.search_bench
	$(BIN)/python -m bench.auth_bench
	$(BIN)/python -m bench.trim_bench
	$(BIN)/python -m bench.validation_bench
	$(BIN)/python -m bench.codemode_bench
	$(BIN)/python -m bench.redact_bench
	$(BIN)/python -m bench.generate_scaling
	$(BIN)/python -m bench.footprint
	$(BIN)/python -m bench.mode_tokens
	$(BIN)/python -m bench.tasks

# The task suite alone (bench/TASKS.md): 10 tasks in every mode, FastMCP 4.2.3's code mode beside them.
bench-tasks: $(BENCH_STAMP)
	$(BIN)/python -m bench.tasks

# The in-process limits test, then nginx in front of 1, 2 and 3 workers (bench/LOAD.md, bench/SCALE.md).
load: $(BENCH_STAMP) services
	$(BIN)/python -m bench.load_test
	$(BIN)/python -m bench.scale_bench

prism: $(BENCH_STAMP)
	$(BIN)/python -m bench.prism --set all

corpus: $(BENCH_STAMP)
	$(BIN)/python -m bench.corpus

clean:
	rm -rf $(VENV) node_modules .mypy_cache .ruff_cache
