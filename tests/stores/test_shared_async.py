"""The async API of a shared session, inside asyncio, on every backend (redis.asyncio for Redis, a thread for SQLite).

Eight tasks append concurrently while a task compacts: nothing lost or duplicated, each task's order kept, the
request valid. The async methods see what the sync ones see, and raise the same typed errors.
"""

from __future__ import annotations

import asyncio

import pytest
from ctxbudget.errors import InvalidMessageError, UsageError
from ctxbudget.messages import Message
from ctxbudget.shared_session import SharedSession
from ctxbudget.stores import SnapshotStore
from ctxbudget.testing import StrictProvider

from .conftest import StoreFactory
from .test_shared_archive import COUNTER, WINDOW, template

TASKS = 8
APPENDS = 40


async def test_concurrent_async_appends_and_compactions_lose_nothing(store_factory: StoreFactory) -> None:
    shared = await asyncio.to_thread(SharedSession.create, store_factory(), template(), counter=COUNTER)
    done = asyncio.Event()

    async def append(task: int) -> None:
        handle = SharedSession(store_factory(), "s1", counter=COUNTER)
        for index in range(APPENDS):
            await handle.aadd(Message(role="user", content=f"task {task} note {index} " * 4, id=f"t{task}-{index}"))

    async def compact() -> int:
        handle = SharedSession(store_factory(), "s1", counter=COUNTER, max_attempts=50)
        while not done.is_set():
            await handle.acompact()
            await asyncio.sleep(0)
        return handle.stats.compactions_saved

    compactor = asyncio.create_task(compact())
    await asyncio.gather(*(append(task) for task in range(TASKS)))
    done.set()
    assert await compactor >= 1

    ids = [message.id for message in await shared.aoriginals()]
    assert sorted(ids) == sorted(f"t{t}-{i}" for t in range(TASKS) for i in range(APPENDS))
    for task in range(TASKS):
        mine = [i for i in ids if i.startswith(f"t{task}-")]
        assert mine == [f"t{task}-{i}" for i in range(APPENDS)]
    request = await shared.abuild_request()
    assert StrictProvider(max_tokens=WINDOW, counter=COUNTER).complete(request.messages, request.tools) <= WINDOW


async def test_the_async_view_is_the_sync_view(store: SnapshotStore) -> None:
    shared = SharedSession.create(store, template(), counter=COUNTER)
    for index in range(60):
        await shared.aadd_user(f"note {index} " * 10)
    await shared.acompact()
    await shared.aadd_user("after the compaction")

    loaded, synced = await shared.aload(), shared.load()

    assert loaded.version == synced.version == 2
    assert loaded.replayed == synced.replayed == 1
    assert [m.id for m in loaded.session.history] == [m.id for m in synced.session.history]
    assert [m.id for m in await shared.aoriginals()] == [m.id for m in shared.originals()]
    await store.aclose()  # type: ignore[attr-defined]


async def test_async_errors_are_the_typed_errors(store: SnapshotStore) -> None:
    missing = SharedSession(store, "never-created", counter=COUNTER)
    with pytest.raises(UsageError, match="has no snapshot") as caught:
        await missing.aload()
    assert caught.value.field == "session_id"
    shared = SharedSession.create(store, template(), counter=COUNTER)
    with pytest.raises(InvalidMessageError, match="appears twice"):
        await shared.aadd(Message(role="user", content="a", id="x"), Message(role="user", content="b", id="x"))
    assert store.log_head("s1") == 0


@pytest.mark.redis
async def test_a_redis_store_from_a_url_uses_redis_asyncio(redis_url: str, redis_prefix: str) -> None:
    from ctxbudget.stores import RedisSnapshotStore

    store = RedisSnapshotStore(redis_url, prefix=redis_prefix)
    shared = SharedSession.create(store, template(), counter=COUNTER)
    await shared.aadd_user("over redis.asyncio")

    assert asyncio.get_running_loop() in store._aclients
    assert [m.text for m in (await shared.aload()).session.history] == ["over redis.asyncio"]
    await store.aclose()
    assert asyncio.get_running_loop() not in store._aclients
    store.close()
