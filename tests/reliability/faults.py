"""Helpers for the reliability suite: a store that fails on cue, and the checks every test ends with."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Literal

from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.compaction.summarize import Summarizer
from ctxbudget.errors import SnapshotStoreError
from ctxbudget.messages import Message, ToolCall
from ctxbudget.messages.tokens import TiktokenCounter
from ctxbudget.session import ContextSession
from ctxbudget.stores import ArchiveRecord, SnapshotStore, StoredSnapshot
from ctxbudget.testing import StrictProvider

COUNTER = TiktokenCounter()
WINDOW = 6_000

When = Literal["before", "after", "exit_before", "exit_after"]
"""``before``: fail without touching storage; ``after``: do the operation, then fail (a lost acknowledgement);
``exit_before`` / ``exit_after``: kill the process (``os._exit``) before / after the operation, as a crash would."""


class FaultyStore:
    """Wraps a store; the n-th call (1-based) of an operation fails as ``faults[(operation, n)]`` says."""

    def __init__(self, inner: SnapshotStore, faults: dict[tuple[str, int], When] | None = None) -> None:
        self.inner = inner
        self.faults = dict(faults or {})
        self.calls: dict[str, int] = {}
        self.injected: list[tuple[str, int, When]] = []

    def _call(self, operation: str, run: Callable[[], object]) -> object:
        n = self.calls[operation] = self.calls.get(operation, 0) + 1
        when = self.faults.get((operation, n))
        if when is None:
            return run()
        self.injected.append((operation, n, when))
        if when == "exit_before":
            os._exit(77)
        if when == "before":
            raise SnapshotStoreError(f"injected: {operation} call {n} failed before reaching storage")
        run()
        if when == "exit_after":
            os._exit(77)
        raise SnapshotStoreError(f"injected: {operation} call {n} succeeded but its reply was lost")

    def load(self, session_id: str) -> StoredSnapshot | None:
        return self._call("load", lambda: self.inner.load(session_id))  # type: ignore[return-value]

    def save(self, session_id: str, data: str, *, expected_version: int | None) -> int:
        return self._call("save", lambda: self.inner.save(session_id, data, expected_version=expected_version))  # type: ignore[return-value]

    def delete(self, session_id: str, *, expected_version: int) -> None:
        self._call("delete", lambda: self.inner.delete(session_id, expected_version=expected_version))

    def append(self, session_id: str, records: Sequence[str]) -> list[int]:
        return self._call("append", lambda: self.inner.append(session_id, records))  # type: ignore[return-value]

    def read_log(self, session_id: str, *, after: int = 0) -> list[tuple[int, str]]:
        return self._call("read_log", lambda: self.inner.read_log(session_id, after=after))  # type: ignore[return-value]

    def log_head(self, session_id: str) -> int:
        return self._call("log_head", lambda: self.inner.log_head(session_id))  # type: ignore[return-value]

    def trim_log(self, session_id: str, *, upto: int) -> int:
        return self._call("trim_log", lambda: self.inner.trim_log(session_id, upto=upto))  # type: ignore[return-value]

    def put_archive(self, session_id: str, records: Sequence[ArchiveRecord]) -> list[int]:
        return self._call("put_archive", lambda: self.inner.put_archive(session_id, records))  # type: ignore[return-value]

    def get_archive(self, session_id: str, handles: Sequence[str]) -> dict[str, str]:
        return self._call("get_archive", lambda: self.inner.get_archive(session_id, handles))  # type: ignore[return-value]

    def read_archive(self, session_id: str, *, after: int = 0, limit: int | None = None) -> list[tuple[int, str, str]]:
        run = lambda: self.inner.read_archive(session_id, after=after, limit=limit)  # noqa: E731 - one call
        return self._call("read_archive", run)  # type: ignore[return-value]

    def archive_head(self, session_id: str) -> int:
        return self._call("archive_head", lambda: self.inner.archive_head(session_id))  # type: ignore[return-value]

    def archived_ids(self, session_id: str, message_ids: Sequence[str]) -> dict[str, int]:
        return self._call("archived_ids", lambda: self.inner.archived_ids(session_id, message_ids))  # type: ignore[return-value]


HANG_TIMEOUT = 0.2
"""The summarizer timeout of a test whose summarizer hangs. Every other session has none, so no working summarizer
ever races a clock on a busy machine."""
HANG_SECONDS = 3600.0
"""How long a scripted hang lasts: past the end of any run, so the timeout always fires first (a sync call is
abandoned on its daemon thread, an async one cancelled), however slowly the machine schedules the waiting thread."""


def make_session(summarizer: Summarizer, *, window: int = WINDOW, timeout: float | None = None) -> ContextSession:
    """The session every fault test starts from: a system prompt, a small window, no summarizer timeout."""
    return ContextSession(
        max_tokens=window,
        counter=COUNTER,
        system_prompt="You are a careful coding agent.",
        summarizer=summarizer,
        policy=CompactionPolicy(summarizer_timeout=timeout, keep_recent_messages=4),
        session_id="faults",
    )


def conversation(turns: int, *, big_every: int = 3, tag: str = "t") -> list[Message]:
    """A deterministic agent conversation: user asks, assistant calls a tool, tool answers, assistant replies."""
    messages: list[Message] = []
    for turn in range(turns):
        call = ToolCall(id=f"call_{tag}_{turn}", name="grep", args={"pattern": f"needle{turn}"})
        lines = 900 if turn % big_every == 0 else 3
        output = "\n".join(f"src/mod{turn}.py:{line}: needle{turn} found here" for line in range(lines))
        messages += [
            Message(role="user", content=f"Turn {turn}: please find needle{turn} in the repo.", id=f"{tag}u{turn}"),
            Message(role="assistant", content="", tool_calls=(call,), id=f"{tag}a{turn}"),
            Message(role="tool", tool_call_id=call.id, name="grep", content=output, id=f"{tag}r{turn}"),
            Message(role="assistant", content=f"Found needle{turn} in src/mod{turn}.py.", id=f"{tag}b{turn}"),
        ]
    return messages


def assert_whole(session: ContextSession, added: Sequence[Message]) -> None:
    """Archive + live history reconstruct every message added, exactly as given, once each, in order."""
    originals = session.originals()
    assert [m.id for m in originals] == [m.id for m in added]
    assert originals == list(added)


def assert_valid_request(session: ContextSession) -> None:
    """The next request is accepted by a strict provider, within the budget, system prompt first and only."""
    request = session.build_request()
    provider = StrictProvider(max_tokens=session.max_tokens, counter=session.counter)
    tokens = provider.complete(request.messages, request.tools)
    assert tokens <= session.max_tokens
    assert request.tokens <= session.policy.hard_stop * session.max_tokens
    roles = [m.role for m in request.messages]
    if session.system_prompt:
        assert roles[0] == "system"
    assert "system" not in roles[1:]
