"""Redis specifics: keys live under the prefix, prefixes isolate, given clients are used as they are."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ctxbudget.errors import InvalidPolicyError, SnapshotStoreError, UsageError
from hypothesis import given, settings
from hypothesis import strategies as st

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


# --- nested prefixes: no (prefix, session id) pair reaches another store's keys -----------------------------------

_EVERY_OPERATION = [
    lambda store, sid: store.load(sid),
    lambda store, sid: store.save(sid, "{}", expected_version=None),
    lambda store, sid: store.delete(sid, expected_version=1),
    lambda store, sid: store.append(sid, ["{}"]),
    lambda store, sid: store.append(sid, []),
    lambda store, sid: store.read_log(sid),
    lambda store, sid: store.log_head(sid),
    lambda store, sid: store.trim_log(sid, upto=0),
]


def test_a_session_id_cannot_reach_into_a_store_with_a_nested_prefix(client: redis.Redis, redis_prefix: str) -> None:
    outer = RedisSnapshotStore(client, prefix=redis_prefix)
    tenant = RedisSnapshotStore(client, prefix=f"{redis_prefix}{{tenant}}:")
    tenant.save("s1", '"tenant secret"', expected_version=None)
    tenant.append("s1", ['"tenant record"'])

    for operation in _EVERY_OPERATION:
        with pytest.raises(UsageError, match=r"session_id: .* may not contain '\{' or '\}'") as caught:
            operation(outer, "tenant}:{s1")
        assert caught.value.field == "session_id"
    loaded = tenant.load("s1")
    assert loaded is not None
    assert (loaded.version, loaded.data) == (1, '"tenant secret"')


@pytest.mark.parametrize("session_id", ["{s1}", "a{b", "a}b", "}"])
def test_session_ids_with_braces_are_refused(client: redis.Redis, redis_prefix: str, session_id: str) -> None:
    store = RedisSnapshotStore(client, prefix=redis_prefix)
    for operation in _EVERY_OPERATION:
        with pytest.raises(UsageError) as caught:
            operation(store, session_id)
        assert caught.value.field == "session_id"
    assert list(client.scan_iter(match=f"{redis_prefix}*")) == []


def test_a_prefix_may_hold_its_own_hash_tag_and_stays_isolated(client: redis.Redis, redis_prefix: str) -> None:
    plain = RedisSnapshotStore(client, prefix=redis_prefix)
    tagged = RedisSnapshotStore(client, prefix=f"{redis_prefix}{{t}}:")
    tagged.save("s1", '"tagged"', expected_version=None)

    assert plain.load("s1") is None
    assert plain.save("s1", '"plain"', expected_version=None) == 1
    loaded = tagged.load("s1")
    assert loaded is not None
    assert loaded.data == '"tagged"'


_PREFIX_TEXT = st.text(alphabet="ab:{}%", min_size=1, max_size=6)
_ID_TEXT = st.text(alphabet="ab:%", min_size=1, max_size=6)  # session ids never hold braces


@settings(max_examples=500, deadline=None)
@given(_PREFIX_TEXT, _ID_TEXT, _PREFIX_TEXT, _ID_TEXT)
def test_no_two_prefix_and_session_pairs_share_a_key(prefix_a: str, id_a: str, prefix_b: str, id_b: str) -> None:
    # No server needed: building the keys never connects.
    a = RedisSnapshotStore("redis://127.0.0.1:1/0", prefix=prefix_a)
    b = RedisSnapshotStore("redis://127.0.0.1:1/0", prefix=prefix_b)
    if (prefix_a, id_a) != (prefix_b, id_b):
        assert not set(a._keys(id_a)) & set(b._keys(id_b))
