"""What ``inspect`` reports and ``compact`` writes of a :class:`~ctxbudget.cli._run.Run`, as JSON-able data.

No rendering here (``inspect``'s tables are :mod:`ctxbudget.cli._inspect`'s), and no file (the archive streams from
the run's sink, :mod:`ctxbudget.cli._files`).

Both commands count archived originals the same way: the transcript messages whose original is in the archive,
each once, whatever the reason (bounded on arrival, cleared, summarized, dropped as an orphaned result no request
can carry, or replaced by the transcript's own compaction). *Bounded on arrival* are the tool outputs over the
per-output limit (``CompactionPolicy.max_tool_output_tokens``) cut to a head and tail excerpt as they were read.
A compacted document's originals (:func:`originals_from_compacted`) are exactly the transcript's messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..archive.store import ArchiveEntry
from ..messages.message import Message, ToolSchema
from ..transcripts.formats._detect import COMPACTED_FORMAT
from ._run import Run, percent

__all__ = [
    "archived_originals",
    "document",
    "originals_from_compacted",
    "report",
    "sent_messages",
    "tools_of",
]


def archived_originals(entries: Iterable[ArchiveEntry]) -> int:
    """How many distinct messages have their original in ``entries`` (the one archived count the CLI reports)."""
    return len({entry.message.id for entry in entries if entry.message is not None})


def _state(used: int, window: int) -> dict[str, Any]:
    pct = percent(used, window)
    return {
        "max_tokens": window,
        "used_tokens": used,
        "used_percentage": pct,
        "remaining_percentage": round(max(0.0, 100.0 - pct), 1),
    }


def report(run: Run) -> dict[str, Any]:
    """The ``inspect`` report of ``run`` (JSON-able)."""
    head, tally = run.head, run.tally
    window = run.window
    compaction: dict[str, Any] = {
        "would_auto_trigger": run.used + run.harness >= run.threshold,
        "compactions": run.compactions,
        "tiers": run.tiers,
        "before": _state(run.used, window),
        "after": _state(run.after, window),
        "archived": run.sink.archived,
        "bounded_on_arrival": run.sink.bounded,
        "summary_chars": len(run.session.summary or ""),
        "gain_tokens": run.gain,
        "minimum_gain_tokens": run.minimum_gain,
        "worth_compacting": run.worth,
        "nothing_to_do": None if run.worth or run.error else run.why_not(),
        "error": run.error,
    }
    return {
        "transcript": {
            "source": head.source,
            "format": head.format,
            "key": head.key,
            "messages": tally.messages,
            "tools": len(head.tools),
            "replaced_messages": run.replaced,
            "replaced_tokens": run.replaced_tokens,
            "notes": head.notes,
        },
        "model": run.model,
        "model_from": run.model_from,
        "counter": run.session.counter.name,
        "window": {
            **_state(run.used + run.harness, window),
            "harness_tokens": run.harness,
            "stripped_thinking_tokens": run.tally.stripped,
            "threshold_tokens": run.threshold,
            "hard_stop_tokens": int(run.policy.hard_stop * window),
            "over_window": run.used + run.harness > window,
        },
        "reported_usage": {"first": run.usage[0].json(), "last": run.usage[-1].json()} if run.usage else None,
        "by_role": tally.by_role,
        "by_tool": tally.by_tool(),
        "largest": tally.largest(),
        "tool_pairs": {"problems": tally.pairs.count, "details": tally.pairs.details()},
        "late_system_messages": tally.late_system,
        "compaction": compaction,
    }


def document(run: Run) -> dict[str, Any]:
    """The ``ctxbudget.compacted/1`` document ``compact`` writes, without its archive (streamed from the sink).

    ``messages`` is the request to send next (the transcript's own system messages first, then the summary and
    the kept tail); the archive holds every original that left it, so messages + archive reconstruct every message
    of the transcript.
    """
    session, head = run.session, run.head
    messages = [*run.system, *run.sent]
    return {
        "format": COMPACTED_FORMAT,
        "source": head.source,
        "source_format": head.format,
        "model": run.model,
        "max_tokens": session.max_tokens,
        "tokens": run.after,
        "messages": [m.model_dump(mode="json") for m in messages],
        "tools": [t.model_dump(mode="json") for t in head.tools],
        "summary": session.summary,
        "goal": session.goal,
        "compaction": {
            "trigger": "manual",
            "compactions": run.compactions,
            "tiers": run.tiers,
            "before": _state(run.used, session.max_tokens),
            "after": _state(run.after, session.max_tokens),
            "archived": run.sink.archived,
            "bounded_on_arrival": run.sink.bounded,
            "harness_tokens": run.harness,
            "summary_chars": len(session.summary or ""),
        },
    }


def sent_messages(run: Run) -> list[Message]:
    """The request ``compact`` writes: the transcript's leading system messages, then what the session sends."""
    return [*run.system, *run.sent]


def tools_of(run: Run) -> Sequence[ToolSchema]:
    """The tools the transcript declared."""
    return run.head.tools


def originals_from_compacted(document: dict[str, Any]) -> list[Message]:
    """Every original message a compacted document holds: archived originals, then live ones not archived.

    Messages the session generated (the ``[Context Summary]``, pinned copies, synthetic tool results, notices:
    each carries a ``ctxbudget`` metadata key) were never in the transcript, so they are left out: the result is
    exactly the transcript's messages.
    """
    archive = [ArchiveEntry.model_validate(e) for e in document["archive"]]
    return _originals(archive, [Message.model_validate(raw) for raw in document["messages"]])


def _originals(archive: Sequence[ArchiveEntry], live: Sequence[Message]) -> list[Message]:
    by_id: dict[str, Message] = {}
    for message in [*(entry.message for entry in archive), *live]:  # the first archived copy is the original
        if message is not None and not message.metadata.get("ctxbudget"):
            by_id.setdefault(message.id, message)
    return list(by_id.values())
