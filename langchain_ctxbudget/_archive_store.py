"""Where a thread's archived originals live: a store beside the agent state, reached through a reference in it.

The state's ``ctxbudget_archive`` holds an :class:`ArchiveRef`: the archive's *space* (one per thread), the key of
its newest *batch* and the number of entries, a few dozen bytes whatever the length of the conversation. Two kinds of
record live in the store, both written once and never changed:

* **entries**, content-addressed: the key is the SHA-256 of the entry's JSON (``sha256-<hex>``), so writing one twice
  is harmless and a reader checks what it got against the key it asked for;
* **batches**: the entries one state update archived (handle, entry key, message id), the key of the batch before
  (``parent``) and how many batches back the last *segment* is. Every :data:`SEGMENT` batches, the batch written is a
  segment: it repeats the entries of the batches since the previous segment and points at it, so reading a chain
  takes at most :data:`SEGMENT` + (number of segments) reads.

A state's archive is exactly the chain from its head: a branch forked from a checkpoint, or a second agent on the same
thread id, has its own head and sees only its own entries, even in the same space.

Two backends: LangGraph's ``BaseStore`` (the agent's ``store=``; namespace ``("ctxbudget", "archive", <space>)``,
values ``{"data": <json>}``), described by a Protocol so nothing of LangGraph is imported here, and ctxbudget's
:class:`~ctxbudget.stores.SnapshotStore` (the space is the session id; records go through ``put_archive`` /
``get_archive``). Both have async twins.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ctxbudget.archive import HANDLE_PREFIX, ArchiveEntry
from ctxbudget.errors import SnapshotFormatError, SnapshotIntegrityError
from ctxbudget.stores.base import ArchiveRecord, SnapshotStore

__all__ = [
    "REF_KEY",
    "SEGMENT",
    "ArchiveBackend",
    "ArchiveRef",
    "Batch",
    "GraphStore",
    "GraphStoreBackend",
    "SnapshotStoreBackend",
    "decode_entry",
    "encode_entry",
    "is_ref",
    "legacy_entries",
    "space_for",
]

REF_KEY = "ctxbudget.archive"
"""Key of the format version in a state's archive reference (a legacy archive's keys are handles, never this)."""
REF_VERSION = 2
SEGMENT = 64
"""Every this many batches one is a segment: a chain is read in at most this many reads plus one per segment."""
_BATCH_SCHEMA = "ctxbudget.langchain.archive-batch.v1"
_SAFE_SPACE = re.compile(r"[A-Za-z0-9_\-:]{1,120}")


def space_for(key: str) -> str:
    """The archive space of a thread (or run) key: readable when it can be, else a digest of it."""
    name = f"lc-{key}"
    if _SAFE_SPACE.fullmatch(name):
        return name
    return "lc-h-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:40]


@dataclass(frozen=True, slots=True)
class ArchiveRef:
    """What the agent state holds of its archive: the space, the newest batch, the entry count."""

    space: str
    head: str | None
    count: int

    def to_state(self) -> dict[str, Any]:
        """The state value (JSON-serializable, as any checkpointer needs)."""
        return {REF_KEY: REF_VERSION, "space": self.space, "head": self.head, "count": self.count}

    @classmethod
    def from_state(cls, value: Mapping[str, Any]) -> ArchiveRef:
        """Read a state value written by :meth:`to_state`.

        Raises:
            SnapshotFormatError: the value is not a reference this version can read (naming the field).
        """
        version, space, head, count = value.get(REF_KEY), value.get("space"), value.get("head"), value.get("count")
        if version != REF_VERSION:
            raise SnapshotFormatError(f"ctxbudget_archive.{REF_KEY}: expected {REF_VERSION}, got {version!r}")
        if not isinstance(space, str) or not space:
            raise SnapshotFormatError(f"ctxbudget_archive.space: expected a non-empty str, got {space!r}")
        if head is not None and not isinstance(head, str):
            raise SnapshotFormatError(f"ctxbudget_archive.head: expected a str or None, got {head!r}")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise SnapshotFormatError(f"ctxbudget_archive.count: expected an int >= 0, got {count!r}")
        return cls(space=space, head=head, count=count)


def is_ref(value: object) -> bool:
    """Whether a state's ``ctxbudget_archive`` value is (or includes) a reference to a store."""
    return isinstance(value, Mapping) and REF_KEY in value


def legacy_entries(value: object) -> dict[str, Any]:
    """The archive entries a state written by an earlier version holds inline (handle -> entry JSON)."""
    if not isinstance(value, Mapping):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and k.startswith(HANDLE_PREFIX)}


# -- records -----------------------------------------------------------------------------------------------------
def encode_entry(entry: ArchiveEntry) -> tuple[str, str]:
    """``(key, data)`` of an entry record: its JSON and the SHA-256 of it."""
    data = entry.model_dump_json()
    return "sha256-" + hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest(), data


def decode_entry(key: str, data: str, space: str) -> ArchiveEntry:
    """Check an entry record against its key and decode it.

    Raises:
        SnapshotIntegrityError: the data is not what the key names (edited or corrupted in the store).
        SnapshotFormatError: the data is not an archive entry.
    """
    actual = "sha256-" + hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()
    where = f"archive entry {key!r} of space {space!r}"
    if actual != key:
        raise SnapshotIntegrityError(
            f"{where}: its content hashes to {actual}: the entry was edited or corrupted in the store; refusing it",
            where=where,
            expected=key,
            actual=actual,
        )
    try:
        return ArchiveEntry.model_validate_json(data)
    except ValueError as exc:
        raise SnapshotFormatError(f"{where}: not an archive entry ({exc})", field="entry") from None


Item = tuple[str, str, str | None]
"""One archived entry as a batch lists it: (handle, entry key, message id)."""


@dataclass(frozen=True, slots=True)
class Batch:
    """One batch record: the entries of one state update, its parent, and whether it is a segment."""

    key: str
    parent: str | None
    items: tuple[Item, ...]
    depth: int
    """Batches since the last segment, this one included (0: this is a segment)."""

    def encode(self) -> str:
        """The record's JSON."""
        body = {"schema": _BATCH_SCHEMA, "parent": self.parent, "depth": self.depth, "items": list(self.items)}
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def decode(cls, key: str, data: str, space: str) -> Batch:
        """Read a batch record.

        Raises:
            SnapshotFormatError: the record is not a batch (naming the key and what is wrong).
        """
        where = f"archive batch {key!r} of space {space!r}"
        try:
            body = json.loads(data)
        except (json.JSONDecodeError, RecursionError):
            raise SnapshotFormatError(f"{where}: not valid JSON", field="batch") from None
        if not isinstance(body, dict) or body.get("schema") != _BATCH_SCHEMA:
            raise SnapshotFormatError(f"{where}: expected schema {_BATCH_SCHEMA!r}", field="batch")
        parent, depth, raw = body.get("parent"), body.get("depth"), body.get("items")
        ok_items = isinstance(raw, list) and all(_is_item(item) for item in raw)
        if not (parent is None or isinstance(parent, str)) or not isinstance(depth, int) or not ok_items:
            raise SnapshotFormatError(f"{where}: parent, depth or items is malformed", field="batch")
        items = tuple((item[0], item[1], item[2]) for item in raw)  # type: ignore[union-attr]  # checked above
        return cls(key=key, parent=parent, items=items, depth=depth)


def _is_item(item: object) -> bool:
    return (
        isinstance(item, list)
        and len(item) == 3
        and isinstance(item[0], str)
        and isinstance(item[1], str)
        and (item[2] is None or isinstance(item[2], str))
    )


def new_batch_key() -> str:
    """A fresh batch key (random: two writers never share one)."""
    return f"batch-{uuid.uuid4().hex}"


# -- backends ----------------------------------------------------------------------------------------------------
@runtime_checkable
class GraphStore(Protocol):
    """The part of LangGraph's ``BaseStore`` the archive uses (``get``/``put`` and their async twins)."""

    def get(self, namespace: tuple[str, ...], key: str) -> Any:
        """The item under ``key`` (with a ``value`` dict), or ``None``."""
        ...

    def put(self, namespace: tuple[str, ...], key: str, value: dict[str, Any]) -> None:
        """Store ``value`` under ``key``."""
        ...

    async def aget(self, namespace: tuple[str, ...], key: str) -> Any:
        """Async :meth:`get`."""
        ...

    async def aput(self, namespace: tuple[str, ...], key: str, value: dict[str, Any]) -> None:
        """Async :meth:`put`."""
        ...


class ArchiveBackend(Protocol):
    """Reads and writes records of a space (immutable, so any cache of them stays valid)."""

    def read(self, space: str, keys: Sequence[str]) -> dict[str, str]:
        """``{key: data}`` for the keys the store holds."""
        ...

    def write(self, space: str, records: Mapping[str, str]) -> None:
        """Write records (a key already stored keeps its record)."""
        ...

    async def aread(self, space: str, keys: Sequence[str]) -> dict[str, str]:
        """Async :meth:`read`."""
        ...

    async def awrite(self, space: str, records: Mapping[str, str]) -> None:
        """Async :meth:`write`."""
        ...


class SnapshotStoreBackend:
    """Records in a ctxbudget :class:`~ctxbudget.stores.SnapshotStore`'s archive, one store session per space."""

    def __init__(self, store: SnapshotStore) -> None:
        self.store = store

    def read(self, space: str, keys: Sequence[str]) -> dict[str, str]:
        """``{key: data}`` for the stored keys."""
        return self.store.get_archive(space, list(keys)) if keys else {}

    def write(self, space: str, records: Mapping[str, str]) -> None:
        """Write the records (existing keys are kept)."""
        if records:
            self.store.put_archive(space, [ArchiveRecord(handle=k, data=v) for k, v in records.items()])

    async def aread(self, space: str, keys: Sequence[str]) -> dict[str, str]:
        """Async :meth:`read`."""
        aget = getattr(self.store, "aget_archive", None)
        if aget is None or not keys:
            return self.read(space, keys)
        found: dict[str, str] = await aget(space, list(keys))
        return found

    async def awrite(self, space: str, records: Mapping[str, str]) -> None:
        """Async :meth:`write`."""
        aput = getattr(self.store, "aput_archive", None)
        if aput is None:
            self.write(space, records)
        elif records:
            await aput(space, [ArchiveRecord(handle=k, data=v) for k, v in records.items()])


_NAMESPACE = ("ctxbudget", "archive")


class GraphStoreBackend:
    """Records in a LangGraph ``BaseStore``: namespace ``("ctxbudget", "archive", <space>)``, values ``{"data": s}``."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    @staticmethod
    def _namespace(space: str) -> tuple[str, ...]:
        return (*_NAMESPACE, space.replace(".", "_"))  # a space has no "." (space_for); LangGraph refuses one

    def read(self, space: str, keys: Sequence[str]) -> dict[str, str]:
        """``{key: data}`` for the stored keys."""
        namespace = self._namespace(space)
        return _found(keys, [self.store.get(namespace, key) for key in keys])

    def write(self, space: str, records: Mapping[str, str]) -> None:
        """Write the records."""
        namespace = self._namespace(space)
        for key, data in records.items():
            self.store.put(namespace, key, {"data": data})

    async def aread(self, space: str, keys: Sequence[str]) -> dict[str, str]:
        """Async :meth:`read`."""
        namespace = self._namespace(space)
        return _found(keys, [await self.store.aget(namespace, key) for key in keys])

    async def awrite(self, space: str, records: Mapping[str, str]) -> None:
        """Async :meth:`write`."""
        namespace = self._namespace(space)
        for key, data in records.items():
            await self.store.aput(namespace, key, {"data": data})


def _found(keys: Sequence[str], items: Sequence[Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, item in zip(keys, items, strict=True):
        value = getattr(item, "value", None)
        if isinstance(value, Mapping) and isinstance(value.get("data"), str):
            out[key] = value["data"]
    return out


# -- caches --------------------------------------------------------------------------------------------------------
@dataclass
class RecordCache:
    """Decoded records (immutable, so never stale), bounded by characters; least recently used go first.

    Keyed by (backend, space, key): shared by every thread of one middleware, as a record's key names its content
    (entries) or is random (batches).
    """

    max_chars: int = 16_000_000
    _items: OrderedDict[tuple[int, str, str], tuple[Any, int]] = field(default_factory=OrderedDict)
    _chars: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, backend: object, space: str, key: str) -> Any:
        """The cached record, or ``None``."""
        with self._lock:
            found = self._items.get((id(backend), space, key))
            if found is None:
                return None
            self._items.move_to_end((id(backend), space, key))
            return found[0]

    def put(self, backend: object, space: str, key: str, value: Any, size: int) -> None:
        """Remember a record of ``size`` characters."""
        if size > self.max_chars // 4:
            return  # one record never takes most of the cache
        with self._lock:
            name = (id(backend), space, key)
            old = self._items.pop(name, None)
            if old is not None:
                self._chars -= old[1]
            self._items[name] = (value, size)
            self._chars += size
            while self._chars > self.max_chars and self._items:
                self._chars -= self._items.popitem(last=False)[1][1]
