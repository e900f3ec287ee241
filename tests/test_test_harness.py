"""What ``make test`` prints: the Redis suite runs against a server or is one skip line; upstream noise is filtered.

* ``bash .ci/redis.sh run CMD`` (the Makefile's pytest line) uses ``CTXBUDGET_REDIS_URL`` when set (``.ci/run``
  sets it: no second server), else starts a private loopback redis-server for CMD and stops it after, else runs
  CMD saying why there is none.
* Without a server every ``redis`` test is skipped from one place, so ``-ra`` prints one line for the suite.
* The pytest config ignores only named upstream deprecations, by message and reporting module.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REDIS_SH = ROOT / ".ci" / "redis.sh"
BASH = shutil.which("bash") or "/bin/bash"


def _env(**overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CTXBUDGET_REDIS", "PYTEST_"))}
    return {**env, **overrides}


def _run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT, env=env, timeout=300)


def test_without_a_server_the_redis_suite_is_one_skip_line_saying_how_to_run_it() -> None:
    pytest_cmd = [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q"]
    done = _run(
        [*pytest_cmd, "tests/stores/test_redis_store.py"], _env(CTXBUDGET_REDIS_MISSING="redis-server is not installed")
    )

    assert done.returncode == 0, done.stdout + done.stderr
    skipped = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skipped) == 1, skipped
    assert re.match(
        r"SKIPPED \[\d\d+\] tests/conftest\.py:\d+: Redis suite: redis-server is not installed; ", skipped[0]
    )
    assert "`make test` starts a loopback redis-server" in skipped[0]
    assert "CTXBUDGET_REDIS_URL=redis://127.0.0.1:6390/0" in skipped[0]


def test_a_url_already_set_is_used_as_is_and_no_server_is_started() -> None:
    done = _run(
        [BASH, str(REDIS_SH), "run", BASH, "-c", 'echo "$CTXBUDGET_REDIS_URL"'],
        _env(CTXBUDGET_REDIS_URL="redis://x:1/0"),
    )
    assert (done.returncode, done.stdout) == (0, "redis://x:1/0\n")


def test_without_redis_server_the_command_runs_and_is_told_why(tmp_path: Path) -> None:
    command = 'echo "url=$CTXBUDGET_REDIS_URL missing=$CTXBUDGET_REDIS_MISSING"; exit 7'
    done = _run([BASH, str(REDIS_SH), "run", BASH, "-c", command], _env(PATH=str(tmp_path)))  # nothing on PATH
    assert (done.returncode, done.stdout) == (7, "url= missing=redis-server is not installed\n")


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server installed")
def test_with_redis_server_a_private_server_answers_for_the_command_and_is_stopped_after() -> None:
    command = 'echo "$CTXBUDGET_REDIS_URL"; redis-cli -u "$CTXBUDGET_REDIS_URL" ping; exit 5'
    done = _run([BASH, str(REDIS_SH), "run", BASH, "-c", command], _env())

    assert done.returncode == 5, done.stderr  # the command's status, after the server was stopped
    url, pong = done.stdout.split()
    port = int(url.removeprefix("redis://127.0.0.1:").removesuffix("/0"))
    assert pong == "PONG"
    assert port != 6390  # never the port .ci/run's server uses

    assert not Path(f"/tmp/ctxbudget-redis-{port}.pid").exists()
    after = _run(["redis-cli", "-u", url, "ping"], _env())
    assert "PONG" not in after.stdout


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server installed")
def test_the_private_server_port_is_below_the_ephemeral_range_where_outgoing_connections_take_theirs() -> None:
    # A port an outgoing connection holds as its local port refuses a probe, yet no server can bind it: under a busy
    # suite (many connections to the suite's own server) a port picked in that range made the start time out.
    ranges = Path("/proc/sys/net/ipv4/ip_local_port_range")
    low = int(ranges.read_text().split()[0]) if ranges.exists() else 32768
    for _ in range(3):
        done = _run([BASH, str(REDIS_SH), "run", BASH, "-c", 'echo "$CTXBUDGET_REDIS_URL"'], _env())
        assert done.returncode == 0, done.stderr
        port = int(done.stdout.strip().removeprefix("redis://127.0.0.1:").removesuffix("/0"))
        assert 20000 <= port < low


PYDANTIC_NOISE = "The `__fields__` attribute is deprecated, use the `model_fields` class property instead."
COMPUTED_NOISE = "Accessing the 'model_computed_fields' attribute on the instance is deprecated."
IS_RUNNING_NOISE = "is_running called from within a step; the workflow is always running inside a step."


@pytest.mark.parametrize(
    ("message", "module", "shown"),
    [
        (PYDANTIC_NOISE, "inspect", False),  # llama-index-workflows' getmembers over a pydantic agent
        (COMPUTED_NOISE, "inspect", False),
        (IS_RUNNING_NOISE, "llama_index.core.agent.workflow.react_agent", False),
        (PYDANTIC_NOISE, "ctxbudget.messages.message", True),  # the same deprecation from our code stays visible
        (IS_RUNNING_NOISE, "llamaindex_ctxbudget.memory", True),
        ("fit_messages(budget=) is deprecated", "langchain_ctxbudget.runnable", True),  # our own
        ("something else is deprecated", "llama_index.core.agent.workflow.react_agent", True),  # other upstream
    ],
    ids=["pydantic-fields", "pydantic-computed", "is-running", "ours-same-text", "ours-is-running", "ours", "other"],
)
def test_only_the_named_upstream_deprecations_are_filtered(
    message: str, module: str, shown: bool, request: pytest.FixtureRequest
) -> None:
    if request.config.getoption("pythonwarnings"):
        pytest.skip("-W on the command line takes precedence over the config's filters")
    with warnings.catch_warnings(record=True) as caught:  # the pytest config's filters, as every test has them
        warnings.warn_explicit(message, DeprecationWarning, f"{module.replace('.', '/')}.py", 1, module=module)
    assert [str(w.message) for w in caught] == ([message] if shown else [])
