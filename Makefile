# The README's two commands (`make run`, `make test`), `make lint` and the benchmarks.
# Each target creates .venv and installs kubemu into it when needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: run test test-ray test-unit lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,lint]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/kubemu run scenarios/quickstart.yaml

test: $(STAMP)
	$(BIN)/python -m pytest -q

# Every shipped scenario on Ray through `kubemu run FILE`, one at a time (make test: one per folder).
test-ray: $(STAMP)
	KUBEMU_TEST_RAY_ALL=1 $(BIN)/python -m pytest -q tests/scenarios/test_every_scenario_on_ray.py

# ruff (lint and format), the layering contracts (import-linter), mypy (pyproject.toml).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

test-unit: $(STAMP)
	$(BIN)/python -m pytest -q tests/unit

bench: $(STAMP)
	$(BIN)/kubemu bench schedule --nodes 5000 --pods 10000
	$(BIN)/kubemu bench schedule --nodes 5000 --pods 10000 --workload mixed

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
