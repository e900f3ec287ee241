"""Which store a thread's archive lives in, and the archive of any agent state (for read-back and search).

The store: the middleware's ``archive_store`` when given; else the agent's LangGraph ``BaseStore``
(``create_agent(store=...)``, which reaches the middleware as ``runtime.store``); else the process's SQLite
database in memory, made on first use and shared by every middleware of the process, so a middleware built again
(a new graph on the same checkpointer) reads what an earlier one wrote. It lives as long as the process, like an
``InMemorySaver``: when the checkpointer outlives the process, give the agent a store or pass ``archive_store``.

The archive of a state is the chain its reference names, whatever thread id it runs under: the view's own archive
when the view is at the same head, else one loaded for that head and cached by it (a few heads, least recently used
first). A cache is keyed by what the state holds, never by its size, so a branch of a thread, or another agent on the
same thread id, never reads a different state's entries. A state written by an earlier version, with its entries
inline and no reference, is read from those entries.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from ctxbudget.archive import Archive
from ctxbudget.stores.base import SnapshotStore
from ctxbudget.stores.sqlite import SQLiteSnapshotStore

from ._archive_store import (
    ArchiveBackend,
    ArchiveRef,
    GraphStore,
    GraphStoreBackend,
    RecordCache,
    SnapshotStoreBackend,
    space_for,
)
from ._restore import state_archive
from ._thread_archive import ThreadArchive
from ._view import ThreadView

__all__ = ["Archives"]

_HEADS = 8
"""Archives of heads other than a view's kept loaded (branches being searched or read)."""
_SPACES = 65_536
"""Spaces whose agent store is remembered (a few dozen bytes each)."""
_Name = tuple[int, str, str | None]


class Archives:
    """The middleware's archive stores and the archives of states.

    Args:
        store: the ``archive_store`` argument (``None``: the agent's store, else a private in-memory SQLite one).
        cache_chars: characters of decoded records kept in memory for all threads together.
    """

    def __init__(self, store: SnapshotStore | GraphStore | None, *, cache_chars: int = 16_000_000) -> None:
        self._explicit = _backend(store) if store is not None else None
        self._graph: dict[int, tuple[object, GraphStoreBackend]] = {}
        self.cache = RecordCache(max_chars=cache_chars)
        self._heads: OrderedDict[_Name, ThreadArchive] = OrderedDict()
        self._spaces: OrderedDict[str, ArchiveBackend] = OrderedDict()
        self._lock = threading.Lock()

    def backend(self, runtime: Any, space: str | None = None) -> ArchiveBackend:
        """The store this call's archive lives in.

        An agent's store is remembered by the spaces it served, so a call made outside the graph (``read_archived``
        and ``search_archived`` given only a state) reads the store the state's archive was written to.
        """
        if self._explicit is not None:
            return self._explicit
        store = getattr(runtime, "store", None)
        if store is not None and isinstance(store, GraphStore):
            with self._lock:
                found = self._graph.get(id(store))
                if found is None or found[0] is not store:
                    if len(self._graph) > 64:
                        self._graph.clear()
                    found = (store, GraphStoreBackend(store))
                    self._graph[id(store)] = found
                if space is not None:
                    self._spaces[space] = found[1]
                    self._spaces.move_to_end(space)
                    while len(self._spaces) > _SPACES:
                        self._spaces.popitem(last=False)
                return found[1]
        with self._lock:
            remembered = self._spaces.get(space) if space is not None else None
        return remembered or _process_store()

    def new(self, key: str | None, state: Mapping[str, Any], runtime: Any) -> tuple[ThreadArchive, ArchiveRef | None]:
        """An unloaded archive for a view: in the space the state's reference names, else the thread's own."""
        ref, _ = state_archive(state)
        space = ref.space if ref is not None else space_for(key or "call")
        backend = self.backend(runtime, space) if key is not None or ref else None
        return ThreadArchive(space, backend, self.cache), ref

    def _take(
        self, backend: ArchiveBackend, ref: ArchiveRef
    ) -> tuple[_Name, ThreadArchive | None, list[ThreadArchive]]:
        """The cached archive of ``ref``'s head, or else the cached ones of its space (taken out: one may extend)."""
        name = (id(backend), ref.space, ref.head)
        with self._lock:
            found = self._heads.get(name)
            if found is not None:
                self._heads.move_to_end(name)
                return name, found, []
            others = [key for key in self._heads if key[:2] == name[:2]]
            return name, None, [self._heads.pop(key) for key in others]

    def _keep(self, name: _Name, archive: ThreadArchive) -> None:
        with self._lock:
            self._heads[name] = archive
            while len(self._heads) > _HEADS:
                self._heads.popitem(last=False)

    def _resolve(self, state: Mapping[str, Any] | None, view: ThreadView | None) -> Archive | ArchiveRef | None:
        """What needs no store read: no state, a legacy state, the view's own head; else the ref to load."""
        if state is None:
            return view.archive if view is not None else None
        ref, inline = state_archive(state)
        if ref is None:
            return Archive(inline)
        if view is not None and view.archive.space == ref.space and view.archive.head == ref.head:
            return view.archive
        return ref

    def of_state(self, state: Mapping[str, Any] | None, runtime: Any, view: ThreadView | None) -> Archive | None:
        """The archive ``state`` names (no state: the view's; ``None`` without either).

        A head not cached extends a cached archive of the same space when its chain reaches that one's head (a state
        that grew: only the new batches are read, only the new entries indexed), else is loaded whole.
        """
        resolved = self._resolve(state, view)
        if not isinstance(resolved, ArchiveRef):
            return resolved
        ref, backend = resolved, self.backend(runtime, resolved.space)
        name, found, others = self._take(backend, ref)
        if found is not None:
            return found
        for other in others:
            if found is None and other.extend_to(ref):
                found = other
            else:
                self._keep((id(backend), other.space, other.head), other)
        if found is None:
            found = ThreadArchive(ref.space, backend, self.cache)
            found.load(ref)
        self._keep(name, found)
        return self._with_inline(found, state)

    async def aof_state(self, state: Mapping[str, Any] | None, runtime: Any, view: ThreadView | None) -> Archive | None:
        """Async :meth:`of_state` (reads the store with its async twins)."""
        resolved = self._resolve(state, view)
        if not isinstance(resolved, ArchiveRef):
            return resolved
        ref, backend = resolved, self.backend(runtime, resolved.space)
        name, found, others = self._take(backend, ref)
        if found is not None:
            return found
        for other in others:
            if found is None and await other.aextend_to(ref):
                found = other
            else:
                self._keep((id(backend), other.space, other.head), other)
        if found is None:
            found = ThreadArchive(ref.space, backend, self.cache)
            await found.aload(ref)
        self._keep(name, found)
        return self._with_inline(found, state)

    @staticmethod
    def _with_inline(archive: ThreadArchive, state: Mapping[str, Any] | None) -> Archive:
        """``archive``, or (for a state that also holds entries inline, not yet migrated) a copy with them added."""
        _, inline = state_archive(state or {})
        if not inline:
            return archive
        return Archive([*archive.entries(), *inline])


_PROCESS: list[SnapshotStoreBackend] = []
_PROCESS_LOCK = threading.Lock()


def _process_store() -> SnapshotStoreBackend:
    """The process's default archive store (an in-memory SQLite database), made on first use."""
    with _PROCESS_LOCK:
        if not _PROCESS:
            _PROCESS.append(SnapshotStoreBackend(SQLiteSnapshotStore(":memory:")))
        return _PROCESS[0]


def _backend(store: SnapshotStore | GraphStore) -> ArchiveBackend:
    if isinstance(store, SnapshotStore):
        return SnapshotStoreBackend(store)
    return GraphStoreBackend(store)
