# The README's two commands: `make demo` and `make test`. Both install into .venv, each only what it runs:
# `make demo` the core and the extras the demo imports (DEMO_EXTRAS), `make test` the dev extra on top (tests,
# linters, notebooks). Each install is a stamp file, redone when pyproject.toml changes, so `make test` after
# `make demo` adds the dev extra to the same .venv, and `make demo` after `make test` installs nothing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_EXTRAS := langchain,cli
DEMO_STAMP := $(VENV)/.installed-demo
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest stress bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# `ctxbudget demo` drives a LangChain create_agent graph (langchain) and prints with rich (cli); nothing else.
$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[$(DEMO_EXTRAS)]"
	touch $(DEMO_STAMP)

# The dev extra includes every user extra, so it satisfies the demo's stamp too.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP) $(DEMO_STAMP)

demo: $(DEMO_STAMP)
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

# The property tests under CPU load (two busy loops per core): fails on any failure, health check or deadline.
stress: $(STAMP)
	bash .ci/stress

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
