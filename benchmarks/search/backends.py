"""The rankers the search evaluation compares, each behind one small interface.

* ``baseline``: the index before this work (:mod:`.baseline`): every token scored, a call and its result separate.
* ``default``: :class:`ctxbudget.archive.search.ArchiveIndex` (stopwords out, light stems, outcome lines weighted,
  a call and its result one unit).
* ``bm25s``: the ``bm25s`` library over the same units, with its own English stopwords and Snowball stemmer
  (PyStemmer), or over our terms; it has no incremental add, so a new entry re-indexes every unit.
* ``tantivy``: the ``tantivy`` library over the same units (``en_stem`` analyzer, lenient query parser); a new entry
  replaces its unit's document and commits.
* ``hybrid``: ``default`` fused with ``wordllama`` embeddings (the 256-d ``l2_supercat`` model whose weights ship in
  the wheel; loaded offline) by reciprocal rank fusion.

Each ranker answers a query with the text a model could read from each hit: the original read back by handle, the
hit's excerpt and the call it names.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any, Protocol

from ctxbudget.archive import ArchiveEntry
from ctxbudget.archive.search import ArchiveIndex

from . import baseline

logging.getLogger("bm25s").setLevel(logging.WARNING)


class Ranker(Protocol):
    name: str

    def build(self, entries: Sequence[ArchiveEntry]) -> None: ...

    def add(self, entry: ArchiveEntry) -> None: ...

    def search(self, query: str, k: int) -> list[str]: ...


class Baseline:
    name = "current index (before)"

    def build(self, entries: Sequence[ArchiveEntry]) -> None:
        self.by_handle = {e.handle: e for e in entries}
        self.index = baseline.ArchiveIndex()
        for entry in entries:
            self.index.add(entry)

    def add(self, entry: ArchiveEntry) -> None:
        self.by_handle[entry.handle] = entry
        self.index.add(entry)

    def search(self, query: str, k: int) -> list[str]:
        return [f"{self.by_handle[h.handle].full_text}\n{h.text}" for h in self.index.search(query, k)]


class Default:
    name = "default (this index)"

    def build(self, entries: Sequence[ArchiveEntry]) -> None:
        self.by_handle = {e.handle: e for e in entries}
        self.index = ArchiveIndex()
        for entry in entries:
            self.index.add(entry)

    def add(self, entry: ArchiveEntry) -> None:
        self.by_handle[entry.handle] = entry
        self.index.add(entry)

    def search(self, query: str, k: int) -> list[str]:
        return [_readable(self.by_handle, h.handle, h.call, h.text) for h in self.index.search(query, k)]


def _readable(by_handle: dict[str, ArchiveEntry], handle: str, call: str | None, text: str) -> str:
    return f"{by_handle[handle].full_text}\n{call or ''}\n{text}"


class _Units:
    """The units of :class:`ArchiveIndex` (a call with its result is one), as texts for another engine."""

    def __init__(self) -> None:
        self.grouping = ArchiveIndex()
        self.by_handle: dict[str, ArchiveEntry] = {}

    def add(self, entry: ArchiveEntry) -> None:
        self.by_handle[entry.handle] = entry
        self.grouping.add(entry)

    def count(self) -> int:
        return len(self.grouping.units)

    def text(self, unit: int) -> str:
        return "\n".join(part.text for part in self.grouping.units[unit].parts.values())

    def readable(self, unit: int) -> str:
        primary = self.grouping.units[unit].primary(())
        call = self.grouping.units[unit].call
        named = f"{call.name} {call.args_json()}" if call is not None else ""
        return f"{primary.entry.full_text}\n{named}\n{primary.text}"

    def handle(self, unit: int) -> str:
        return self.grouping.units[unit].primary(()).entry.handle


class Bm25s:
    def __init__(self, *, our_terms: bool) -> None:
        self.our_terms = our_terms
        self.name = "bm25s (our terms)" if our_terms else "bm25s (its stopwords + Snowball stemmer)"

    def build(self, entries: Sequence[ArchiveEntry]) -> None:
        self.units = _Units()
        for entry in entries:
            self.units.add(entry)
        self._reindex()

    def add(self, entry: ArchiveEntry) -> None:
        self.units.add(entry)
        self._reindex()  # bm25s has no incremental add: the whole matrix is rebuilt

    def _tokens(self, texts: list[str]) -> Any:
        import bm25s

        if self.our_terms:
            from ctxbudget.archive._text import analyze, tokenize

            return [analyze(tokenize(text)) or ["\x00"] for text in texts]
        import Stemmer

        return bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer.Stemmer("english"), show_progress=False)

    def _reindex(self) -> None:
        import bm25s

        self.retriever = bm25s.BM25()
        texts = [self.units.text(u) for u in range(self.units.count())]
        self.retriever.index(self._tokens(texts), show_progress=False)

    def search(self, query: str, k: int) -> list[str]:
        n = self.units.count()
        if self.our_terms:
            tokens = self._tokens([query])
            if tokens == [["\x00"]]:
                return []
            query_tokens: Any = tokens
        else:
            query_tokens = self._tokens([query])
        try:
            found, scores = self.retriever.retrieve(query_tokens, k=min(k, n), show_progress=False)
        except ValueError:  # no query token is in the vocabulary
            return []
        return [self.units.readable(int(u)) for u, s in zip(found[0], scores[0], strict=True) if s > 0]


class Tantivy:
    name = "tantivy (en_stem, lenient parser)"

    def build(self, entries: Sequence[ArchiveEntry]) -> None:
        import tantivy

        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="en_stem")
        builder.add_unsigned_field("unit", stored=True, indexed=True)
        self.schema = builder.build()
        self.index = tantivy.Index(self.schema)
        self.writer = self.index.writer(heap_size=15_000_000, num_threads=1)
        self.units = _Units()
        for entry in entries:
            self.units.add(entry)
        for unit in range(self.units.count()):
            self.writer.add_document(self._document(unit))
        self.writer.commit()
        self.index.reload()

    def add(self, entry: ArchiveEntry) -> None:

        before = self.units.count()
        self.units.add(entry)
        touched = set(range(before, self.units.count()))
        key = entry.message.id if entry.message is not None else None
        table = self.units.grouping.units
        touched.update(u for k, u in table.placed() if key is not None and k.startswith(key))
        for unit in touched:
            self.writer.delete_documents("unit", unit)
            self.writer.add_document(self._document(unit))
        self.writer.commit()
        self.index.reload()

    def _document(self, unit: int) -> Any:
        import tantivy

        document = tantivy.Document()
        document.add_text("body", self.units.text(unit))
        document.add_unsigned("unit", unit)
        return document

    def search(self, query: str, k: int) -> list[str]:
        parsed, _errors = self.index.parse_query_lenient(query, ["body"])
        searcher = self.index.searcher()
        found = searcher.search(parsed, k).hits
        return [self.units.readable(int(searcher.doc(address)["unit"][0])) for _score, address in found]


def load_wordllama() -> Any:
    """WordLlama's default model from the weights inside its wheel, with downloads disabled."""
    from pathlib import Path

    import wordllama

    # 0.4.0 looks for the bundled tokenizer under tokenizer/ but ships it under tokenizers/, which is where its
    # cache layout puts it: the package's own folder as the cache finds both files, and nothing is downloaded.
    return wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)


class Hybrid:
    """``default`` BM25 and WordLlama cosine similarity (max over ~400-char chunks), fused by reciprocal rank."""

    def __init__(
        self,
        *,
        model: Any = None,
        semantic_only: bool = False,
        rrf_k: int = 60,
        candidates: int = 50,
        weight: float = 1.0,
    ) -> None:
        self.semantic_only = semantic_only
        self.rrf_k = rrf_k
        self.candidates = candidates
        self.weight = weight
        self.name = "wordllama embeddings alone" if semantic_only else "hybrid: default + wordllama (RRF)"
        if weight != 1.0 and not semantic_only:
            self.name = f"hybrid: default + wordllama (RRF, embeddings weighted {weight:g})"
        self.model = model if model is not None else load_wordllama()

    def build(self, entries: Sequence[ArchiveEntry]) -> None:
        import numpy as np

        self.np = np
        self.default = Default()
        self.default.build(entries)
        self.units = _Units()
        self.rows: list[Any] = []
        self.owner: list[int] = []
        self.matrix: Any = None
        for entry in entries:
            self.add(entry, rebuild=False)

    def add(self, entry: ArchiveEntry, *, rebuild: bool = True) -> None:
        if rebuild:
            self.default.add(entry)
        self.units.add(entry)
        for key in _part_keys(entry):  # embed each part of this entry once, if it became the unit's fullest
            unit = self.units.grouping.units.where(key)
            part = self.units.grouping.units[unit].parts.get(key) if unit is not None else None
            if unit is None or part is None or part.entry is not entry:
                continue
            chunks = _chunks(part.text)
            if chunks:
                self.rows.append(self.model.embed(chunks, norm=True))
                self.owner.extend([unit] * len(chunks))
        self.matrix = None

    def search(self, query: str, k: int) -> list[str]:
        np = self.np
        if self.matrix is None:
            self.matrix = np.vstack(self.rows) if self.rows else np.zeros((0, 256), dtype=np.float32)
        vector = self.model.embed([query], norm=True)[0]
        sims = self.matrix @ vector
        best: dict[int, float] = {}
        for unit, sim in zip(self.owner, sims.tolist(), strict=True):
            if sim > best.get(unit, -math.inf):
                best[unit] = sim
        semantic = sorted(best, key=lambda u: -best[u])[: self.candidates]
        if self.semantic_only:
            return [self.units.readable(u) for u in semantic[:k]]
        lexical = self.default.index.search(query, self.candidates)
        fused: dict[str, float] = {}
        texts: dict[str, str] = {}
        for rank, hit in enumerate(lexical):
            fused[hit.handle] = fused.get(hit.handle, 0.0) + 1.0 / (self.rrf_k + rank + 1)
            texts[hit.handle] = _readable(self.default.by_handle, hit.handle, hit.call, hit.text)
        for rank, unit in enumerate(semantic):
            handle = self.units.handle(unit)
            fused[handle] = fused.get(handle, 0.0) + self.weight / (self.rrf_k + rank + 1)
            texts.setdefault(handle, self.units.readable(unit))
        order = sorted(fused, key=lambda h: -fused[h])[:k]
        return [texts[h] for h in order]


def _part_keys(entry: ArchiveEntry) -> list[str]:
    message = entry.message
    if message is None:
        return [entry.handle]
    return [message.id, *(f"{message.id}#call:{call.id}" for call in message.tool_calls)]


def _chunks(text: str, width: int = 400, most: int = 64) -> list[str]:
    """``text`` in windows of about ``width`` chars at line breaks, at most ``most`` (the head ones)."""
    chunks: list[str] = []
    current = ""
    for line in text.splitlines():
        if current and len(current) + len(line) > width:
            chunks.append(current)
            if len(chunks) == most:
                return chunks
            current = ""
        current = f"{current}\n{line}" if current else line[: width * 2]
    if current.strip():
        chunks.append(current)
    return chunks
