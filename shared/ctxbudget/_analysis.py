"""What ``ctxbudget inspect`` and ``ctxbudget compact`` compute, as plain JSON-able data (no rendering, no rich).

A transcript becomes a :class:`~ctxbudget.session.ContextSession`: its leading system messages are the session's
system prompt (never compacted), the rest is the history. ``inspect`` measures the transcript as it stands and runs
a manual compaction on that throwaway session to show what compaction would do; ``compact`` does the same and keeps
the result: the request to send next, the cumulative summary and the archive of every original that left it.

A document ``compact`` wrote resumes where it left off: its summary, goal and archive seed the session, and the
messages the session generated (the summary message, synthetic tool results) are left out of the history, so
compacting it again loses nothing.

Both commands count archived originals the same way (:func:`archived_originals`): the transcript messages whose
original is in the session's archive after the compaction, each once, whatever the reason (bounded on arrival,
cleared, shortened or summarized by compaction, or dropped as an orphaned result no request can carry). *Bounded on
arrival* are the tool outputs over the per-output limit (``CompactionPolicy.max_tool_output_tokens``, by default
min(8,000, window / 8) tokens) that were cut to a head and tail excerpt as they were read into the session, before
any compaction; their full text is archived, so they are among the archived originals.

The long steps report how far they are to a :class:`~ctxbudget._progress.Progress` callback (the CLI draws rich
bars from it; see :mod:`ctxbudget._progress` for the steps).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ._progress import Progress, compaction_progress, no_progress
from .archive import ArchiveEntry
from .events import ContextCompacted
from .messages import Message
from .policy import CompactionPolicy
from .session import ContextSession
from .snapshot import SessionSnapshot, TrackerSnapshot
from .tokens import count_request
from .toolpairs import find_tool_pair_problems
from .tracking import ContextState
from .transcripts import COMPACTED_FORMAT, CompactedState, Transcript

__all__ = [
    "COMPACTED_FORMAT",
    "archived_originals",
    "compact_transcript",
    "inspect_transcript",
    "originals_from_compacted",
    "session_for",
]

_SESSION_ID = "ctxbudget-cli"
_ADD_BATCH = 250  # messages added to the session between two progress reports


def archived_originals(entries: Iterable[ArchiveEntry]) -> int:
    """How many distinct messages have their original in ``entries`` (the one archived count the CLI reports)."""
    return len({entry.message.id for entry in entries if entry.message is not None})


def session_for(
    transcript: Transcript,
    *,
    model: str | None,
    max_tokens: int | None,
    compact_instructions: str | None = None,
    policy: CompactionPolicy | None = None,
    progress: Progress = no_progress,
) -> tuple[ContextSession, list[Message]]:
    """Build a session holding ``transcript``; returns it and the leading system messages it took as its prompt.

    Adding the messages measures each one and bounds oversized tool outputs: the ``counting`` step.
    """
    messages = list(transcript.messages)
    lead = 0
    while lead < len(messages) and messages[lead].role == "system":
        lead += 1
    system = messages[:lead]
    session = ContextSession(
        model=model,
        max_tokens=max_tokens,
        system_prompt="\n\n".join(m.text for m in system) or None,
        tools=transcript.tools,
        session_id=_SESSION_ID,
        compact_instructions=compact_instructions,
        policy=policy,
    )
    history = messages[lead:]
    progress("counting", 0, len(history))
    if transcript.compacted is not None:
        session = _resumed(session, transcript.compacted, history)
    else:
        for start in range(0, len(history), _ADD_BATCH):
            session.add(*history[start : start + _ADD_BATCH])
            progress("counting", min(start + _ADD_BATCH, len(history)), len(history))
    progress("counting", len(history), len(history))
    return session, system


def _compact(session: ContextSession, progress: Progress) -> tuple[ContextCompacted, list[Message]]:
    """Compact ``session`` now and build the next request; returns the event and the messages sent after the prompt.

    A message of the history the request leaves out (an orphaned result a strict provider would reject) is
    archived as ``dropped``: never lost.
    """
    with compaction_progress(session, progress):
        event = session.compact()
        request = session.build_request()
    sent = list(request.messages[1:] if session.system_prompt else request.messages)
    sent_ids = {m.id for m in sent}
    for message in session.history:
        if message.id not in sent_ids:
            session.archive.put_message(message, "dropped")
    return event, sent


def _resumed(fresh: ContextSession, state: CompactedState, messages: list[Message]) -> ContextSession:
    """``fresh``'s configuration with a compacted document's summary, goal and archive; its originals as history."""
    history = [m for m in messages if not m.metadata.get("ctxbudget")]  # the summary etc. are generated again
    order: dict[str, int] = {}
    for entry in state.archive:
        if entry.message is not None:
            order.setdefault(entry.message.id, len(order))
    for message in history:
        order.setdefault(message.id, len(order))
    originals = _originals(state.archive, history)
    first_user = next((m for m in originals if m.role == "user"), None)
    goal = state.goal if state.goal is not None else (first_user.text if first_user is not None else None)
    snapshot = SessionSnapshot(
        session_id=fresh.session_id,
        model=fresh.model,
        max_tokens=fresh.max_tokens,
        system_prompt=fresh.system_prompt,
        tools=fresh.tools,
        policy=fresh.policy.model_dump(mode="json"),
        compact_instructions=fresh.compact_instructions,
        history=tuple(history),
        summary=state.summary,
        goal=goal,
        goal_id=first_user.id if first_user is not None and first_user.text == goal else None,
        archive=state.archive,
        order=order,
        tracker=TrackerSnapshot(ratio=1.0, samples=0),
    )
    return ContextSession.restore(snapshot, counter=fresh.counter, summarizer=fresh.summarizer)


def inspect_transcript(
    transcript: Transcript,
    *,
    model: str | None = "gpt-4o",
    max_tokens: int | None = None,
    top: int = 10,
    policy: CompactionPolicy | None = None,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Report window usage by role and tool, the largest items, tool-pair problems and a trial compaction.

    The trial is the compaction ``compact`` would run (same policy, same steps), so its ``archived`` count is the
    one ``compact`` reports for the same file.
    """
    session, _ = session_for(transcript, model=model, max_tokens=max_tokens, policy=policy, progress=progress)
    counter = session.counter
    sizes = [counter.count_message(m) for m in transcript.messages]
    used = count_request(counter, transcript.messages, transcript.tools)
    policy = session.policy
    window = session.max_tokens
    problems = find_tool_pair_problems(transcript.messages)
    return {
        "transcript": {
            "source": transcript.source,
            "format": transcript.format,
            "key": transcript.key,
            "messages": len(transcript.messages),
            "tools": len(transcript.tools),
        },
        "model": model,
        "counter": counter.name,
        "window": {
            **_state_json(ContextState.of(used, window)),
            "threshold_tokens": int(policy.threshold * window),
            "hard_stop_tokens": int(policy.hard_stop * window),
            "over_window": used > window,
        },
        "by_role": _by_role(transcript.messages, sizes),
        "by_tool": _by_tool(transcript.messages, sizes),
        "largest": _largest(transcript.messages, sizes, top),
        "tool_pairs": {"problems": len(problems), "details": [p.describe() for p in problems[:50]]},
        "late_system_messages": [i for i, m in enumerate(transcript.messages) if m.role == "system" and i > 0][:50],
        "compaction": _trial_compaction(session, would_trigger=used >= policy.threshold * window, progress=progress),
    }


def _by_role(messages: tuple[Message, ...], sizes: list[int]) -> dict[str, dict[str, int]]:
    report: dict[str, dict[str, int]] = {}
    for message, size in zip(messages, sizes, strict=True):
        entry = report.setdefault(message.role, {"messages": 0, "tokens": 0})
        entry["messages"] += 1
        entry["tokens"] += size
    return report


def _tool_names(messages: tuple[Message, ...]) -> dict[str, str]:
    return {call.id: call.name for m in messages for call in m.tool_calls}


def _tool_of(message: Message, names: dict[str, str]) -> str | None:
    if message.role != "tool":
        return None
    return message.name or names.get(message.tool_call_id or "") or "unknown"


def _by_tool(messages: tuple[Message, ...], sizes: list[int]) -> dict[str, dict[str, int]]:
    names = _tool_names(messages)
    calls = Counter(call.name for m in messages for call in m.tool_calls)
    report = {name: {"calls": count, "results": 0, "result_tokens": 0} for name, count in calls.items()}
    for message, size in zip(messages, sizes, strict=True):
        tool = _tool_of(message, names)
        if tool is not None:
            entry = report.setdefault(tool, {"calls": 0, "results": 0, "result_tokens": 0})
            entry["results"] += 1
            entry["result_tokens"] += size
    return dict(sorted(report.items(), key=lambda kv: (-kv[1]["result_tokens"], kv[0])))


def _largest(messages: tuple[Message, ...], sizes: list[int], top: int) -> list[dict[str, Any]]:
    names = _tool_names(messages)
    order = sorted(range(len(messages)), key=lambda i: (-sizes[i], i))[: max(0, top)]
    return [
        {
            "index": i,
            "id": messages[i].id,
            "role": messages[i].role,
            "tool": _tool_of(messages[i], names) or (",".join(c.name for c in messages[i].tool_calls) or None),
            "tokens": sizes[i],
            "preview": " ".join(messages[i].text.split())[:80],
        }
        for i in order
    ]


def _trial_compaction(session: ContextSession, *, would_trigger: bool, progress: Progress) -> dict[str, Any]:
    bounded = _bounded_on_arrival(session)
    try:
        event, _ = _compact(session, progress)
    except Exception as exc:  # a failed trial is part of the report, not a crash
        return {"would_auto_trigger": would_trigger, "bounded_on_arrival": bounded, "error": f"{exc}"}
    return {
        "would_auto_trigger": would_trigger,
        "bounded_on_arrival": bounded,
        **_event_json(event, session),
        "error": None,
    }


def _bounded_on_arrival(session: ContextSession) -> int:
    """Tool outputs bounded as they were added (before any compaction): their originals are archived as such."""
    return archived_originals(entry for entry in session.archive if entry.reason == "bounded")


def _state_json(state: ContextState) -> dict[str, Any]:
    return {
        "max_tokens": state.max_tokens,
        "used_tokens": state.used_tokens,
        "used_percentage": state.used_percentage,
        "remaining_percentage": state.remaining_percentage,
    }


def _event_json(event: ContextCompacted, session: ContextSession) -> dict[str, Any]:
    return {
        "trigger": event.trigger,
        "tiers": list(event.tiers),
        "before": _state_json(event.before),
        "after": _state_json(event.after),
        "archived": archived_originals(session.archive),
        "summary_chars": len(event.summary or ""),
    }


def compact_transcript(
    transcript: Transcript,
    *,
    model: str | None = "gpt-4o",
    max_tokens: int | None = None,
    instructions: str | None = None,
    policy: CompactionPolicy | None = None,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Compact ``transcript`` and return the document ``ctxbudget compact`` writes.

    ``messages`` is the request to send next (the transcript's own system messages first, then the summary and
    the kept tail); ``archive`` holds every original that left it, so ``messages`` + ``archive`` reconstruct every
    message of the transcript. Raises :class:`~ctxbudget.errors.CompactionError` or
    :class:`~ctxbudget.errors.ContextOverflowError` when compaction cannot make the history fit.
    """
    session, system = session_for(
        transcript,
        model=model,
        max_tokens=max_tokens,
        compact_instructions=instructions,
        policy=policy,
        progress=progress,
    )
    bounded = _bounded_on_arrival(session)
    event, sent = _compact(session, progress)
    messages = [*system, *sent]
    return {
        "format": COMPACTED_FORMAT,
        "source": transcript.source,
        "source_format": transcript.format,
        "model": model,
        "max_tokens": session.max_tokens,
        "tokens": count_request(session.counter, messages, transcript.tools),
        "messages": [m.model_dump(mode="json") for m in messages],
        "tools": [t.model_dump(mode="json") for t in transcript.tools],
        "summary": session.summary,
        "goal": session.goal,
        "archive": [entry.model_dump(mode="json") for entry in session.archive.entries()],
        "compaction": {**_event_json(event, session), "bounded_on_arrival": bounded},
    }


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
