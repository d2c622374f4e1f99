# Every target sets up what it needs: a fresh machine has Python 3.11, pip, Node 20 and npm.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-fast lint typecheck pytest bench bench-tasks corpus prism load golden clean

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

pytest: $(STAMP)
	$(BIN)/pytest -q

test: lint typecheck pytest

# The inner loop: unit and in-memory tests (no subprocess servers, npm packages or corpus); `make test` is the gate.
test-fast: $(STAMP)
	$(BIN)/pytest -q -x -n 2 -m "not corpus and not node" --ignore=tests/e2e

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

load: $(BENCH_STAMP)
	$(BIN)/python -m bench.load_test

prism: $(BENCH_STAMP)
	$(BIN)/python -m bench.prism --set all

corpus: $(BENCH_STAMP)
	$(BIN)/python -m bench.corpus

clean:
	rm -rf $(VENV) node_modules .mypy_cache .ruff_cache
