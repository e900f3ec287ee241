"""Redis specifics: keys live under the prefix, prefixes isolate, given clients are used as they are."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ctxbudget.errors import InvalidPolicyError, SnapshotStoreError

redis = pytest.importorskip("redis")

from ctxbudget.stores import RedisSnapshotStore  # noqa: E402 - after the importorskip

pytestmark = pytest.mark.redis


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    connection = redis.Redis.from_url(redis_url)
    yield connection
    connection.close()


def test_every_key_is_under_the_prefix_and_one_hash_tag(client: redis.Redis, redis_prefix: str) -> None:
    store = RedisSnapshotStore(client, prefix=redis_prefix)
    store.save("s:1", "{}", expected_version=None)
    store.append("s:1", ['"r"'])

    keys = sorted(key.decode() for key in client.scan_iter(match=f"{redis_prefix}*"))

    assert keys == [f"{redis_prefix}{{s:1}}:log", f"{redis_prefix}{{s:1}}:seq", f"{redis_prefix}{{s:1}}:snap"]


def test_different_prefixes_never_see_each_other(client: redis.Redis, redis_prefix: str) -> None:
    one = RedisSnapshotStore(client, prefix=f"{redis_prefix}one:")
    two = RedisSnapshotStore(client, prefix=f"{redis_prefix}two:")
    one.save("s1", '"one"', expected_version=None)
    one.append("s1", ['"r"'])

    assert two.load("s1") is None
    assert two.log_head("s1") == 0
    assert two.save("s1", '"two"', expected_version=None) == 1


def test_a_decoding_client_works_and_is_left_open(redis_url: str, redis_prefix: str) -> None:
    decoding = redis.Redis.from_url(redis_url, decode_responses=True)
    store = RedisSnapshotStore(decoding, prefix=redis_prefix)
    store.save("s1", '"ünï"', expected_version=None)
    store.append("s1", ['"ä:b"'])

    assert store.read_log("s1") == [(1, '"ä:b"')]
    loaded = store.load("s1")
    assert loaded is not None
    assert loaded.data == '"ünï"'
    store.close()
    assert decoding.ping() is True
    decoding.close()


def test_scripts_survive_a_script_cache_flush(client: redis.Redis, redis_prefix: str) -> None:
    store = RedisSnapshotStore(client, prefix=redis_prefix)
    store.save("s1", "{}", expected_version=None)
    client.script_flush()

    assert store.save("s1", "{}", expected_version=1) == 2
    assert store.append("s1", ["1"]) == [1]


def test_a_key_of_the_wrong_type_is_a_store_error(client: redis.Redis, redis_prefix: str) -> None:
    client.set(f"{redis_prefix}{{s1}}:snap", "not a hash")
    store = RedisSnapshotStore(client, prefix=redis_prefix)

    with pytest.raises(SnapshotStoreError, match="WRONGTYPE") as caught:
        store.load("s1")

    assert isinstance(caught.value.__cause__, redis.ResponseError)


@pytest.mark.parametrize("prefix", ["", None])
def test_the_prefix_must_be_a_non_empty_string(client: redis.Redis, prefix: object) -> None:
    with pytest.raises(InvalidPolicyError, match="prefix") as caught:
        RedisSnapshotStore(client, prefix=prefix)  # type: ignore[arg-type]

    assert caught.value.field == "prefix"
