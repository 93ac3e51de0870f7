# tocsin — the newcomer's commands. `make run` and `make test` are all you need.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUNTIME_STAMP := $(VENV)/.installed-runtime
PG_URL ?= postgresql://postgres@127.0.0.1:5432/test
# `make test` runs the suite on this many pytest-xdist workers (every test has its own database:
# a SQLite file or a PostgreSQL schema); 2 matches the CI machine's cores. worksteal: a worker
# that runs out of tests takes queued ones from the other, so the last minutes are not one
# worker finishing a long queue (the suite's tests run from milliseconds to over 20 s each)
TEST_WORKERS ?= 2
TEST_DIST ?= worksteal

.PHONY: install run test lint fmt bench clean

# runtime dependencies only: what `make run` needs (a lighter first run)
$(RUNTIME_STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip >/dev/null
	$(BIN)/pip install -e .
	touch $(RUNTIME_STAMP)

# runtime + dev tools (pytest, ruff, mypy, playwright, …): test, lint, fmt, bench
$(STAMP): $(RUNTIME_STAMP)
	$(BIN)/pip install -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# a fresh demo database (./tocsin-demo.db), seeded, served with a 5 s tick; `make run PORT=8001`
PORT ?= 8000
run: $(RUNTIME_STAMP)
	$(BIN)/tocsin demo --port $(PORT)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

fmt: $(STAMP)
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

# The PostgreSQL leg runs when the server answers; under CI=true a missing server fails the run.
test: lint
	@if $(BIN)/python -c "import psycopg,sys; psycopg.connect('$(PG_URL)', connect_timeout=3).close()" 2>/dev/null; then \
		echo "PostgreSQL leg: $(PG_URL)"; \
		TOCSIN_TEST_PG_URL=$${TOCSIN_TEST_PG_URL:-$(PG_URL)} $(BIN)/pytest -n $(TEST_WORKERS) --dist $(TEST_DIST); \
	else \
		if [ "$$CI" = "true" ]; then echo "CI=true but PostgreSQL at $(PG_URL) does not answer"; exit 1; fi; \
		echo "PostgreSQL not reachable: its tests will skip (they are required under CI=true)"; \
		$(BIN)/pytest -n $(TEST_WORKERS) --dist $(TEST_DIST); \
	fi

bench: $(STAMP)
	$(BIN)/python bench/cron_bench.py
	$(BIN)/python bench/worker_bench.py
	$(BIN)/python bench/tick_bench.py
	$(BIN)/python bench/workflow_bench.py
	$(BIN)/python bench/template_bench.py
	$(BIN)/python bench/compound_bench.py
	$(BIN)/python bench/studio_bench.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache tocsin.db*
