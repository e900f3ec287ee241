# The README's two commands: `make demo` and `make test`. Both create .venv and install into it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/ctxbudget demo

lint: $(STAMP)
	$(BIN)/ruff check shared/ctxbudget langchain_ctxbudget llamaindex_ctxbudget tests benchmarks
	$(BIN)/ruff format --check shared/ctxbudget langchain_ctxbudget llamaindex_ctxbudget tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

# The Redis store suite runs against CTXBUDGET_REDIS_URL when it is set (.ci/run starts its own server and sets
# it), else against a private loopback redis-server started for this run and stopped after it, when one is
# installed; else it is reported as skipped in one line saying how to run it (.ci/redis.sh run).
pytest: $(STAMP)
	bash .ci/redis.sh run $(BIN)/pytest -n 2 -q

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python -m benchmarks.run

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache

# A loopback redis-server on 127.0.0.1:6390 for running the Redis store tests by hand, with
# CTXBUDGET_REDIS_URL=redis://127.0.0.1:6390/0 (`make test` and .ci/run start one themselves).
.PHONY: redis-up redis-down
redis-up:
	bash .ci/redis.sh start

redis-down:
	bash .ci/redis.sh stop
