"""Search hits and how they are shown to a model: :class:`ArchiveHit`, :func:`excerpt`, :func:`render_hits`.

A hit's text is an :func:`excerpt` of its original centred on the query's terms. A model's ``search_archive`` tool
answers with :func:`render_hits`: one line per hit, the query quoted back at most :data:`QUERY_ECHO_CHARS`
characters, and (given the per-output limit and a counter) no more tokens than any other tool output may take.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ..errors import InvalidPolicyError
from ._text import term_pattern

if TYPE_CHECKING:
    from ..messages.tokens import TokenCounter

__all__ = [
    "EXCERPT_CHARS",
    "MAX_K",
    "QUERY_ECHO_CHARS",
    "ArchiveHit",
    "check_search_args",
    "excerpt",
    "fit_text",
    "render_hits",
]

EXCERPT_CHARS = 300
"""Most characters in a hit's excerpt, ellipses included."""
_MAX_MATCHES = 1000
"""Occurrences of one term scanned when placing an excerpt (a huge log is not scanned to its end for a common word)."""
MAX_K = 100
"""Most hits one search returns."""


def check_search_args(query: object, k: object) -> None:
    """Raise :class:`InvalidPolicyError` naming ``query`` or ``k`` unless they are a non-empty str and 1..100."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidPolicyError(f"query: must be a non-empty str, got {_short(query)}", field="query")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InvalidPolicyError(f"k: must be an int in 1..{MAX_K}, got {k!r}", field="k")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= QUERY_ECHO_CHARS else f"{text[: QUERY_ECHO_CHARS - 1]}… ({len(text):,} chars)"


class ArchiveHit(BaseModel):
    """One archived original that matches a query; read it back whole with its ``handle``.

    A tool call and its result are one hit: the result's handle, text and role, with the call named in ``call``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    handle: str
    """Archive handle of the fullest archived version (``ctx://archive/...``); reading it returns the original."""
    message_id: str | None
    """Id of the archived message; ``None`` for an archived text (a bounded tool output, evidence)."""
    role: str | None
    """Role of the archived message (``user``, ``assistant``, ``tool``, ``system``); ``None`` for a text."""
    reason: str
    """Why it was archived (``bounded``, ``cleared``, ``summarized``, ...)."""
    source: str | None
    """Where the text came from: the tool name of a tool output (or of the call), when known."""
    text: str
    """An excerpt (at most 300 chars) centred on the best-matching region, with ``…`` where it was cut."""
    score: float
    """Relevance (BM25, plus the phrase bonus); higher is better, comparable only within one search."""
    call: str | None = None
    """The tool call this hit's result answers (or the call itself, when its result was not archived): its name and
    JSON arguments, at most 300 chars; ``None`` for a message that is not part of a tool call."""
    call_handle: str | None = None
    """Archive handle of the message that made the call, when ``call`` had to be cut and that message is archived:
    reading it back gives the whole call, arguments included."""


QUERY_ECHO_CHARS = 120
"""Most characters of the query :func:`render_hits` repeats back (a longer one is cut, its length named)."""


def _echo(query: str) -> str:
    """The query as quoted back to the model: whole up to :data:`QUERY_ECHO_CHARS`, else its head and its length."""
    if len(query) <= QUERY_ECHO_CHARS:
        return repr(query)
    return f"{query[: QUERY_ECHO_CHARS - 1]!r}… ({len(query):,} chars)"


def _hit_line(rank: int, hit: ArchiveHit) -> str:
    who = (hit.role or "text") + (f" ({hit.source[:80]})" if hit.source else "")
    call = f" | call {' '.join(hit.call.split())}" if hit.call else ""
    if hit.call_handle:
        call += f" (whole call: {hit.call_handle})"
    return f"{rank}. {hit.handle} | {who} | score {hit.score:.2f}{call} | {' '.join(hit.text.split())}"


def render_hits(
    hits: Sequence[ArchiveHit],
    query: str,
    *,
    read_tool: str = "read_archived_output",
    max_tokens: int | None = None,
    counter: TokenCounter | None = None,
) -> str:
    """Hits as text for a model: one line per hit (handle, role, score, excerpt) and how to read one back.

    The query is quoted back whole only up to :data:`QUERY_ECHO_CHARS` characters (a longer one by its head and its
    length), so a huge query never comes back in the answer.

    Args:
        hits: the hits, best first.
        query: the query they answer.
        read_tool: the read-back tool's name, named in the first line.
        max_tokens: with ``counter``, the most tokens the text may take (a tool output's limit): hits are dropped
            from the end until it fits, then the last line kept is cut (the first line says how many were shown).
        counter: counts ``max_tokens``; required with it.

    Raises:
        InvalidPolicyError: ``max_tokens`` is given without a ``counter``, or is not an int >= 1.
    """
    if not isinstance(query, str):
        raise InvalidPolicyError(f"query: must be a str, got {type(query).__name__}", field="query")
    if not isinstance(read_tool, str):
        raise InvalidPolicyError(f"read_tool: must be a str, got {type(read_tool).__name__}", field="read_tool")
    if isinstance(hits, (str, bytes)) or not isinstance(hits, Sequence):
        raise InvalidPolicyError(f"hits: must be a sequence of ArchiveHit, got {type(hits).__name__}", field="hits")
    wrong = next((i for i, hit in enumerate(hits) if not isinstance(hit, ArchiveHit)), None)
    if wrong is not None:
        raise InvalidPolicyError(
            f"hits[{wrong}]: expected an ArchiveHit, got {type(hits[wrong]).__name__}", field=f"hits[{wrong}]"
        )
    if max_tokens is not None and (
        counter is None or isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
    ):
        raise InvalidPolicyError(
            f"max_tokens: must be an int >= 1 given with a counter, got {max_tokens!r} (counter {counter!r})",
            field="max_tokens",
        )
    if not hits:
        return fit_text(f"No archived original matches {_echo(query)}.", max_tokens, counter)
    how = f"call {read_tool} with a handle for the full text"
    lines = [_hit_line(rank, hit) for rank, hit in enumerate(hits, start=1)]
    text = "\n".join([f"{len(hits)} archived original(s) match {_echo(query)}, best first; {how}.", *lines])
    if max_tokens is None or counter is None or counter.count_text(text) <= max_tokens:
        return text
    shown = len(lines)
    while shown > 1:
        shown -= 1
        text = "\n".join([f"{shown} of {len(hits)} archived originals matching {_echo(query)} shown, best first; "
                          f"{how}.", *lines[:shown]])  # fmt: skip
        if counter.count_text(text) <= max_tokens:
            return text
    return fit_text(text, max_tokens, counter)


def fit_text(text: str, max_tokens: int | None, counter: TokenCounter | None) -> str:
    """``text`` cut at its end (marked ``…``) until ``counter`` gives it at most ``max_tokens``."""
    if max_tokens is None or counter is None:
        return text
    cut = text
    while counter.count_text(cut) > max_tokens and len(cut) > 1:
        cut = text[: int(len(cut) * 0.8)] + "…"
    return cut


def _best_span(text: str, weights: dict[str, float], width: int) -> tuple[int, int] | None:
    """The span (at most ``width`` chars) holding the most query weight (distinct terms); ``None`` if no term occurs."""
    if not weights:
        return None
    lower = text.lower()
    same = len(lower) == len(text)  # lower-casing kept every offset (it nearly always does)
    matches: list[tuple[int, int, str]] = []
    for term in weights:  # per term, so a rare term is found even after thousands of a common one
        pattern = term_pattern(term, 0 if same else re.IGNORECASE)
        found = itertools.islice(pattern.finditer(lower if same else text), _MAX_MATCHES)
        matches.extend((m.start(), m.end(), term) for m in found)
    matches.sort()
    best: tuple[float, int, int] | None = None
    inside: Counter[str] = Counter()
    weight, left = 0.0, 0
    for right, (_, end, term) in enumerate(matches):
        weight += weights.get(term, 0.0) if inside[term] == 0 else 0.0
        inside[term] += 1
        while left < right and end - matches[left][0] > width:
            gone = matches[left][2]
            inside[gone] -= 1
            weight -= weights.get(gone, 0.0) if inside[gone] == 0 else 0.0
            left += 1
        if best is None or weight > best[0] + 1e-12:
            best = (weight, matches[left][0], end)
    return None if best is None else (best[1], best[2])


def excerpt(text: str, weights: dict[str, float]) -> str:
    """At most :data:`EXCERPT_CHARS` of ``text`` centred on its best-matching span, ``…`` marking each cut.

    Costs one scan of ``text`` per weighted term (at most :data:`MAX_QUERY_TERMS`), each stopped after
    :data:`_MAX_MATCHES` occurrences.
    """
    if len(text) <= EXCERPT_CHARS:
        return text
    width = EXCERPT_CHARS - 2  # room for an ellipsis at each end
    span = _best_span(text, weights, width) or (0, 0)
    start = max(0, (span[0] + span[1] - width) // 2)
    end = min(len(text), start + width)
    start = max(0, end - width)
    return ("…" if start > 0 else "") + text[start:end] + ("…" if end < len(text) else "")
