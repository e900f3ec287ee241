"""Shared by every suite: the Hypothesis profile, and a Redis server on loopback when ``CTXBUDGET_REDIS_URL`` names one.

``.ci/run`` starts redis-server on 127.0.0.1:6390 and sets the variable; ``make test`` starts a private one when
redis-server is installed. Without the variable every test marked ``redis`` is skipped from one place, so ``-ra``
reports the whole Redis suite as one line saying how to run it.

Hypothesis runs under the ``ci`` profile, loaded here before any test module is imported (so every ``settings(...)``
in a test inherits what it does not set): no deadline and no ``too_slow`` / ``data_too_large`` health checks, the
checks that fail when the machine is busy rather than when the code is wrong, and ``derandomize``, so every run
draws the same examples and a failure is the code's, never the seed's or the load's. ``pytest
--hypothesis-profile=explore`` searches afresh (random seeds; 500 examples where a test does not set its own count).
``tests/test_hypothesis_profile.py`` fails when a test sets a deadline or turns a timing health check back on.
Timings live in ``benchmarks/``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

HEAVY_INPUT_HEALTH_CHECKS = (HealthCheck.too_slow, HealthCheck.data_too_large)
"""``too_slow`` times input generation, so it fails when the machine is busy; ``data_too_large`` fails on what a
heavy strategy happens to draw. Neither says anything about the code under test."""
settings.register_profile(
    "ci",
    deadline=None,
    suppress_health_check=HEAVY_INPUT_HEALTH_CHECKS,
    derandomize=True,
    database=None,
    print_blob=True,
)
settings.register_profile(
    "explore",
    settings.get_profile("ci"),
    derandomize=False,
    database=DirectoryBasedExampleDatabase(".hypothesis/examples"),
    max_examples=500,
)
settings.load_profile("ci")

REDIS_URL_ENV = "CTXBUDGET_REDIS_URL"
REDIS_MISSING_ENV = "CTXBUDGET_REDIS_MISSING"
"""Set by ``make test`` (``.ci/redis.sh run``) when it could not start a server: why not."""
REDIS_SKIP = (
    f"Redis suite: {os.environ.get(REDIS_MISSING_ENV) or f'{REDIS_URL_ENV} is not set'}; `make test` starts a "
    f"loopback redis-server itself when one is installed (e.g. apt-get install redis-server), or run "
    f"`bash .ci/redis.sh start` and `export {REDIS_URL_ENV}=redis://127.0.0.1:6390/0` (.ci/run does both)"
)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a ``redis`` test without a server here, before its fixtures: one skip location, one summary line."""
    if item.get_closest_marker("redis") is not None and not os.environ.get(REDIS_URL_ENV):
        pytest.skip(REDIS_SKIP)


@pytest.fixture
def redis_url() -> str:
    """The Redis server's URL; skips the test when none is configured."""
    url = os.environ.get(REDIS_URL_ENV)
    if not url:
        pytest.skip(REDIS_SKIP)
    return url


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix unique to this test; its keys are deleted afterwards."""
    import redis

    prefix = f"ctxbudget-test:{uuid.uuid4().hex}:"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()
