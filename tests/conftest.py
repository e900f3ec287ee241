"""Fixtures shared by every suite: a Redis server on loopback, when ``CTXBUDGET_REDIS_URL`` names one.

``.ci/run`` starts redis-server on 127.0.0.1:6390 and sets the variable; without it the Redis tests are skipped,
saying how to run them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

REDIS_URL_ENV = "CTXBUDGET_REDIS_URL"
REDIS_SKIP = (
    f"{REDIS_URL_ENV} is not set: run `bash .ci/redis.sh start` and "
    f"`export {REDIS_URL_ENV}=redis://127.0.0.1:6390/0` (.ci/run does both)"
)


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
