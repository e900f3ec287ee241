"""The archive of one thread's session, kept in a store beside the agent state (see ``_archive_store``).

:class:`ThreadArchive` is the :class:`~ctxbudget.archive.store.Archive` the session of a thread holds. In memory it
keeps only what compaction may need without I/O: the entries archived since the last state update (until they are
written) and the originals of messages still live (a bounded or cleared copy's original). Everything else is read
from the store by handle when asked for (read-back, search, ``originals()``), through a cache bounded by characters.
Handles of the whole chain are known (handle -> entry key, message id), so deduplication and ``in`` need no I/O.

Writing is two steps: :meth:`ThreadArchive.plan` gives the records to write and the batch that lists them (entries
first, then the batch, so a reader never meets a batch whose entries are missing); once written, :meth:`commit`
makes the batch the head the state's reference names.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass

from ctxbudget.archive import Archive, ArchiveEntry
from ctxbudget.archive.search import ArchiveHit, ArchiveIndex, check_search_args
from ctxbudget.errors import ArchiveError, SnapshotFormatError
from ctxbudget.messages import Message

from ._archive_store import (
    SEGMENT,
    ArchiveBackend,
    ArchiveRef,
    Batch,
    Item,
    RecordCache,
    decode_entry,
    encode_entry,
    new_batch_key,
)

__all__ = ["Flush", "ThreadArchive"]

_READ_CHUNK = 200
"""Entries read per store call when many are needed at once (search, listing)."""


@dataclass(frozen=True, slots=True)
class Flush:
    """What one state update writes: entry records, then the batch listing them."""

    entries: dict[str, str]
    batch: Batch
    handles: tuple[str, ...]
    new: tuple[ArchiveEntry, ...]
    """The entries written, in archiving order."""


class ThreadArchive(Archive):
    """A thread's archive: the chain of batches its state names, read on demand, plus what is not yet written.

    Args:
        space: the thread's archive space.
        backend: the store (``None``: nothing can be read or written; a threadless call outside a run).
        cache: decoded records, shared by the middleware's threads.
    """

    def __init__(self, space: str, backend: ArchiveBackend | None, cache: RecordCache) -> None:
        super().__init__()
        self.space = space
        self.backend = backend
        self.cache = cache
        self.head: str | None = None
        self.depth = 0
        self.segment: str | None = None
        """The newest segment batch of the chain (the parent of the next segment)."""
        self.since_segment: list[Item] = []
        self.known: dict[str, tuple[str, str | None]] = {}
        """Handles of the written chain -> (entry key, message id)."""
        self.batches: set[str] = set()
        """Keys of the chain's batches read or written (a newer head's chain reaches one of them)."""
        self._new: list[str] = []
        self._search = ArchiveIndex()
        self._indexed: set[str] = set()

    # -- loading the chain ---------------------------------------------------------------------------------------
    def _walk(self, head: str | None, stop: set[str]) -> Generator[str, str | None, list[Batch] | None]:
        """The chain from ``head`` down to a batch in ``stop`` (excluded), oldest first.

        ``None`` when ``stop`` is not empty and the chain never reaches it. Yields each batch key to read and receives
        its record.
        """
        chain: list[Batch] = []
        key = head
        seen: set[str] = set()
        while key is not None and key not in stop:
            if key in seen:
                raise SnapshotFormatError(f"archive batch {key!r} of space {self.space!r}: the chain loops")
            seen.add(key)
            batch = self.cache.get(self.backend, self.space, key)
            if not isinstance(batch, Batch):
                data = yield key
                if data is None:
                    raise ArchiveError(
                        f"archive batch {key!r} of space {self.space!r} is not in the archive store: the state "
                        "names an archive this middleware's store does not hold (pass the store the state was "
                        "written with: create_agent(store=...) or ContextBudgetMiddleware(archive_store=...))"
                    )
                batch = Batch.decode(key, data, self.space)
                self.cache.put(self.backend, self.space, key, batch, len(data))
            chain.append(batch)
            key = batch.parent
        if key is None and stop:
            return None
        chain.reverse()
        return chain

    def _absorb(self, chain: list[Batch]) -> None:
        """Apply batches, oldest first, on top of what the archive holds (the caller holds ``_lock``)."""
        for batch in chain:
            for handle, key, message_id in batch.items:
                self.known.setdefault(handle, (key, message_id))
            if batch.depth == 0:
                self.segment, self.since_segment = batch.key, []
            else:
                self.since_segment.extend(batch.items)
            self.depth = batch.depth
            self.head = batch.key
            self.batches.add(batch.key)

    def _run(self, walk: Generator[str, str | None, list[Batch] | None]) -> list[Batch] | None:
        try:
            key = next(walk)
            while True:
                key = walk.send(self._read_one(key))
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]  # the generator's return value

    async def _arun(self, walk: Generator[str, str | None, list[Batch] | None]) -> list[Batch] | None:
        try:
            key = next(walk)
            while True:
                key = walk.send(await self._aread_one(key))
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]  # the generator's return value

    def load(self, ref: ArchiveRef) -> None:
        """Read the chain ``ref`` names (each batch once per process, then from the cache)."""
        chain = self._run(self._walk(ref.head, set()))
        with self._lock:
            self._absorb(chain or [])

    async def aload(self, ref: ArchiveRef) -> None:
        """Async :meth:`load`."""
        chain = await self._arun(self._walk(ref.head, set()))
        with self._lock:
            self._absorb(chain or [])

    def extend_to(self, ref: ArchiveRef) -> bool:
        """Move to a newer head whose chain reaches this one's (reading only the batches in between).

        Returns ``False``, changing nothing, when ``ref`` is not a descendant (another branch).
        """
        if ref.head == self.head:
            return True
        if self._new or not self.batches or ref.space != self.space:
            return False
        chain = self._run(self._walk(ref.head, set(self.batches)))
        if chain is None:
            return False
        with self._lock:
            self._absorb(chain)
        return True

    async def aextend_to(self, ref: ArchiveRef) -> bool:
        """Async :meth:`extend_to`."""
        if ref.head == self.head:
            return True
        if self._new or not self.batches or ref.space != self.space:
            return False
        chain = await self._arun(self._walk(ref.head, set(self.batches)))
        if chain is None:
            return False
        with self._lock:
            self._absorb(chain)
        return True

    def _read_one(self, key: str) -> str | None:
        return None if self.backend is None else self.backend.read(self.space, [key]).get(key)

    async def _aread_one(self, key: str) -> str | None:
        return None if self.backend is None else (await self.backend.aread(self.space, [key])).get(key)

    def prefetch(self, handles: Iterable[str]) -> None:
        """Keep in memory the entries of ``handles`` (originals of live copies: compaction reads them)."""
        for _, entry in self._fetch([h for h in handles if h in self.known and h not in self._entries]):
            with self._lock:
                self._entries.setdefault(entry.handle, entry)

    async def aprefetch(self, handles: Iterable[str]) -> None:
        """Async :meth:`prefetch`."""
        wanted = [h for h in handles if h in self.known and h not in self._entries]
        keys = [self.known[h][0] for h in wanted]
        found = await self.backend.aread(self.space, keys) if self.backend is not None and keys else {}
        for handle, key in zip(wanted, keys, strict=True):
            if key in found:
                entry = decode_entry(key, found[key], self.space)
                with self._lock:
                    self._entries.setdefault(handle, entry)

    # -- Archive ---------------------------------------------------------------------------------------------------
    def _keep(self, entry: ArchiveEntry) -> None:
        """Store a new entry (the caller holds ``_lock``); a handle the chain has keeps its written entry."""
        if entry.handle in self.known:
            return
        self._entries[entry.handle] = entry
        self._new.append(entry.handle)

    def __len__(self) -> int:
        with self._lock:
            return len(self.known) + sum(1 for h in self._new if h not in self.known)

    def __contains__(self, handle: object) -> bool:
        return isinstance(handle, str) and (handle in self._entries or handle in self.known)

    def __iter__(self) -> Iterator[ArchiveEntry]:
        return iter(self.entries())

    def get(self, handle: str) -> ArchiveEntry:
        """The entry for ``handle``: in memory, cached, or read from the store."""
        entry = self._entries.get(handle)
        if entry is not None:
            return entry
        found = self.known.get(handle)
        if found is None:
            raise ArchiveError(f"handle: {handle!r} is not in the archive ({len(self)} entries)")
        for _, read in self._fetch([handle]):
            return read
        raise ArchiveError(f"handle: {handle!r} is listed in the archive but its entry is not in the archive store")

    def _fetch(self, handles: list[str]) -> list[tuple[str, ArchiveEntry]]:
        """(key, entry) of written handles: from the cache, else read from the store in chunks."""
        out: list[tuple[str, ArchiveEntry]] = []
        missing: list[str] = []
        for handle in handles:
            key = self.known[handle][0]
            cached = self.cache.get(self.backend, self.space, key)
            if isinstance(cached, ArchiveEntry):
                out.append((key, cached))
            else:
                missing.append(key)
        for start in range(0, len(missing), _READ_CHUNK):
            keys = missing[start : start + _READ_CHUNK]
            found = self.backend.read(self.space, keys) if self.backend is not None else {}
            for key in keys:
                if key in found:
                    entry = decode_entry(key, found[key], self.space)
                    self.cache.put(self.backend, self.space, key, entry, len(found[key]))
                    out.append((key, entry))
        return out

    def entries(self) -> list[ArchiveEntry]:
        """Every entry: the written chain's (read from the store), then the new ones, in archiving order."""
        with self._lock:
            written = list(self.known)
            new = [self._entries[h] for h in self._new if h not in self.known]
        by_key = dict(self._fetch(written))
        return [by_key[self.known[h][0]] for h in written if self.known[h][0] in by_key] + new

    def messages(self) -> list[Message]:
        """Every archived original message, one per id, in archiving order."""
        seen: dict[str, Message] = {}
        for entry in self.entries():
            if entry.message is not None and entry.message.id not in seen:
                seen[entry.message.id] = entry.message
        return list(seen.values())

    async def aget(self, handle: str) -> ArchiveEntry:
        """Async :meth:`get` (reads the store with its async twin)."""
        entry = self._entries.get(handle)
        found = self.known.get(handle)
        if entry is not None or found is None:
            return self.get(handle)
        key = found[0]
        cached = self.cache.get(self.backend, self.space, key)
        if isinstance(cached, ArchiveEntry):
            return cached
        data = (await self.backend.aread(self.space, [key])).get(key) if self.backend is not None else None
        if data is None:
            raise ArchiveError(f"handle: {handle!r} is listed in the archive but its entry is not in the archive store")
        read = decode_entry(key, data, self.space)
        self.cache.put(self.backend, self.space, key, read, len(data))
        return read

    def search(self, query: str, k: int = 5) -> list[ArchiveHit]:
        """Rank every entry of this archive for ``query``; each is read and indexed once."""
        check_search_args(query, k)
        with self._search_lock:
            with self._lock:
                written = [h for h in self.known if h not in self._indexed]
                new = [self._entries[h] for h in self._new if h not in self._indexed and h not in self.known]
            for _, entry in self._fetch(written):
                self._index_one(entry)
            for entry in new:
                self._index_one(entry)
            return self._search.search(query, k)

    async def aindex(self) -> None:
        """Read (with the store's async twin) and index every written entry not indexed yet."""
        with self._lock:
            written = [h for h in self.known if h not in self._indexed]
        missing: list[tuple[str, str]] = []
        for handle in written:
            key = self.known[handle][0]
            cached = self.cache.get(self.backend, self.space, key)
            if isinstance(cached, ArchiveEntry):
                with self._search_lock:
                    self._index_one(cached)
            else:
                missing.append((handle, key))
        for start in range(0, len(missing), _READ_CHUNK):
            chunk = missing[start : start + _READ_CHUNK]
            keys = [key for _, key in chunk]
            found = await self.backend.aread(self.space, keys) if self.backend is not None else {}
            with self._search_lock:
                for key in keys:
                    if key in found:
                        self._index_one(decode_entry(key, found[key], self.space))

    def _index_one(self, entry: ArchiveEntry) -> None:
        if entry.handle not in self._indexed:
            self._indexed.add(entry.handle)
            self._search.add(entry)

    # -- writing -------------------------------------------------------------------------------------------------
    def pending(self) -> bool:
        """Whether entries were archived since the last write."""
        return bool(self._new)

    def plan(self) -> Flush | None:
        """The records the next state update writes, or ``None`` when nothing is new."""
        with self._lock:
            new = [self._entries[h] for h in self._new if h not in self.known]
        if not new:
            return None
        entries: dict[str, str] = {}
        items: list[Item] = []
        for entry in new:
            key, data = encode_entry(entry)
            entries[key] = data
            items.append((entry.handle, key, entry.message.id if entry.message is not None else None))
        if self.depth + 1 >= SEGMENT:
            batch = Batch(key=new_batch_key(), parent=self.segment, items=(*self.since_segment, *items), depth=0)
        else:
            batch = Batch(key=new_batch_key(), parent=self.head, items=tuple(items), depth=self.depth + 1)
        return Flush(entries=entries, batch=batch, handles=tuple(entry.handle for entry in new), new=tuple(new))

    def write(self, flush: Flush) -> None:
        """Write ``flush`` to the store (entries, then the batch) and make it the head."""
        if self.backend is not None:
            self.backend.write(self.space, flush.entries)
            self.backend.write(self.space, {flush.batch.key: flush.batch.encode()})
        self.commit(flush)

    async def awrite(self, flush: Flush) -> None:
        """Async :meth:`write`."""
        if self.backend is not None:
            await self.backend.awrite(self.space, flush.entries)
            await self.backend.awrite(self.space, {flush.batch.key: flush.batch.encode()})
        self.commit(flush)

    def commit(self, flush: Flush) -> None:
        """Make a written batch the head: its entries are known and may leave memory."""
        with self._lock:
            self._absorb([flush.batch])
            written = set(flush.handles)
            self._new = [h for h in self._new if h not in written]

    def ref(self) -> ArchiveRef:
        """The reference the state holds after the last write."""
        with self._lock:
            return ArchiveRef(space=self.space, head=self.head, count=len(self.known))

    def release(self, live: set[str]) -> None:
        """Drop from memory the written entries whose message is no longer live (they stay in the store)."""
        with self._lock:
            pending = set(self._new)
            for handle in [h for h, e in self._entries.items() if h not in pending]:
                message = self._entries[handle].message
                if message is None or message.id not in live:
                    del self._entries[handle]
