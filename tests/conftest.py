"""Fixtures shared by every suite: a Redis server on loopback, when ``CTXBUDGET_REDIS_URL`` names one.

``.ci/run`` starts redis-server on 127.0.0.1:6390 and sets the variable; ``make test`` starts a private one when
redis-server is installed. Without the variable every test marked ``redis`` is skipped from one place, so ``-ra``
reports the whole Redis suite as one line saying how to run it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

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
