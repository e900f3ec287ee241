"""Reading a transcript file as a stream, with a size limit: JSONL line by line, a document's lists element by element.

Nothing here holds the whole file. :func:`open_source` opens the file (a pipe or another stream that cannot seek is
first copied to a temporary file, up to the limit) and tells JSONL from one JSON document by its first value
(:meth:`Source.is_jsonl`). JSONL is read line by line (:class:`JsonlRows`). A JSON document is first scanned for its
structure (:func:`scan_document`, which parses nothing but the small members): a top-level list, or a list member
of a top-level object (``messages``, ``history``, ``steps``, ``archive``, ...), larger than :data:`SMALL_BYTES` is
kept as the byte ranges of its elements (:class:`SpanRows`), each element parsed when it is read; everything else
is parsed at once. Reading a list again (two-pass readers) seeks back: the file is read, never held.

Limits, each a clear :class:`~ctxbudget.errors.TranscriptError` naming the flag or the place:

* the whole transcript: ``max_bytes`` (``--max-bytes``; :data:`MAX_BYTES` by default), so an endless stream
  (``/dev/zero``, a pipe that never closes) ends with an error, not a hang;
* one JSONL line or one list element (one message, event or step): :data:`MAX_VALUE_BYTES`;
* nesting: what ``json.loads`` cannot recurse into is refused (the readers then check :data:`~._where.MAX_DEPTH`);
* numbers: a JSON integer longer than Python converts (4,300 digits) is refused, naming where.

Errors name the place as the readers do (``line 7``, ``messages[3]``); invalid UTF-8 names the byte offset.
"""

from __future__ import annotations

from ._document import SMALL_BYTES, Document, scan_document
from ._rows import LOOK_AHEAD, MAX_VALUE_BYTES, IndexedRows, JsonlRows, ListRows, Rows, SpanRows
from ._scanner import loads
from ._source import MAX_BYTES, Source, open_source

__all__ = [
    "LOOK_AHEAD",
    "MAX_BYTES",
    "MAX_VALUE_BYTES",
    "SMALL_BYTES",
    "Document",
    "IndexedRows",
    "JsonlRows",
    "ListRows",
    "Rows",
    "Source",
    "SpanRows",
    "loads",
    "open_source",
    "scan_document",
]
