"""Long tool output, logs and child transcripts: archived whole, entering the prompt as bounded evidence.

The full text goes to the :class:`~ctxbudget.archive.store.Archive`; the prompt gets a head/tail excerpt within a token
bound, with a marker naming the handle the full text can be read back from (:func:`ctxbudget.context.evidence.excerpt`).
Nothing is lost and nothing long enters the prompt.
"""

from __future__ import annotations

from ctxbudget.archive.store import Archive
from ctxbudget.context.evidence import excerpt
from ctxbudget.context.items import ContextItem, Trust
from ctxbudget.errors import InvalidPolicyError, UsageError
from ctxbudget.messages._counter_inputs import not_text
from ctxbudget.messages._validation import JsonValueError, check_utf8, short_repr
from ctxbudget.messages.tokens import TokenCounter, check_counter

__all__ = ["evidence_item"]


def evidence_item(
    text: str,
    *,
    key: str,
    source: str,
    archive: Archive,
    counter: TokenCounter,
    max_tokens: int,
    type: str = "tool_output",
    trust: Trust = "tool",
    relevance: float = 0.5,
    priority: float = 0.5,
    freshness: float = 0.5,
) -> ContextItem:
    """Archive ``text`` under ``key`` and return an item carrying at most ``max_tokens`` of it.

    The item's metadata records the archive ``handle``, the original ``chars`` and ``tokens``, and whether the
    content was ``truncated``. Text that fits is carried whole (and still archived).

    Args:
        text: the full output, log or transcript.
        key: the archive key (unique per text); the handle is ``ctx://archive/<key>``.
        source: where it came from (a tool name, a command, a child agent); also the item's source.
        archive: where the full text is kept.
        counter: measures the excerpt.
        max_tokens: the excerpt's bound, by ``counter.count_text``.
        type: the item type (envelope attribute).
        trust: provenance; tool output is data by default.
        relevance: planner relevance 0..1.
        priority: planner priority 0..1.
        freshness: planner freshness 0..1.

    Raises:
        InvalidPolicyError: ``max_tokens`` < 1, an empty ``key``, ``archive`` not an :class:`Archive` or ``counter``
            not a :class:`~ctxbudget.messages.tokens.TokenCounter`.
        UsageError: ``text``, ``key`` or ``source`` is not a ``str``, or holds a lone surrogate (not valid Unicode);
            these and ``archive`` and ``counter`` are checked before anything is archived.
        ArchiveError: ``key`` already holds a different text.
    """
    _check_arguments(text, key, source, archive, counter)
    handle = archive.put_text(key, text, source=source)
    content = excerpt(text, max_tokens=max_tokens, counter=counter, handle=handle)
    return ContextItem(
        id=key,
        source=source,
        type=type,
        content=content,
        trust=trust,
        relevance=relevance,
        priority=priority,
        freshness=freshness,
        metadata={
            "handle": handle,
            "chars": len(text),
            "tokens": counter.count_text(text),
            "truncated": content != text,
        },
    )


def _check_arguments(text: object, key: object, source: object, archive: object, counter: object) -> None:
    """Refuse an argument of the wrong type, naming it, before anything is archived.

    A lone surrogate in ``text``, ``key`` or ``source`` could never be sent or persisted with the archive, so it is
    refused here too.
    """
    for field, value in (("text", text), ("key", key), ("source", source)):
        if not isinstance(value, str):
            raise not_text(value, field)
        try:
            check_utf8(field, value)
        except JsonValueError as exc:
            raise UsageError(str(exc), field=field) from None
    if not isinstance(archive, Archive):
        got = f"{type(archive).__name__} {short_repr(archive)}"
        raise InvalidPolicyError(f"archive: expected a ctxbudget Archive, got {got}", field="archive")
    check_counter(counter)
