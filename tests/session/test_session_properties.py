"""Invariants of ContextSession over generated agent sessions.

Whatever the session looks like (parallel tool calls, huge tool outputs, interrupted replies, a summarizer that
fails at random points), every built request: fits the window by our counter, is a valid strict-provider sequence,
starts with the system prompt, keeps pinned content and the user's goal; and archive + live history reconstruct
every message ever added.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.messages import Message, ToolCall
from ctxbudget.messages.tokens import TiktokenCounter, count_request
from ctxbudget.session import ContextSession
from ctxbudget.testing import ScriptedSummarizer, StrictProvider
from hypothesis import event, given, settings
from hypothesis import strategies as st

COUNTER = TiktokenCounter()
WINDOW = 3_000
SYSTEM = "You are a careful coding agent."
PIN = "Never push to main without review."


@dataclass(frozen=True)
class Turn:
    user_words: int
    calls: tuple[int, ...]  # one tool output size (lines) per parallel call
    interrupted: bool
    reply_words: int
    system_note: bool = False
    check_open_calls: bool = False  # build a request while the tool calls are still unanswered
    pin_result: bool = False  # mark the first tool result as pinned (must survive verbatim)


turns = st.builds(
    Turn,
    user_words=st.integers(1, 60),
    calls=st.lists(st.sampled_from([0, 3, 40, 400, 3000]), max_size=4).map(tuple),
    interrupted=st.booleans(),
    reply_words=st.integers(0, 120),
    system_note=st.booleans(),
    check_open_calls=st.booleans(),
    pin_result=st.booleans(),
)
failure_scripts = st.lists(st.sampled_from(["ok", "raise", "blank", "oversized", "not_text"]), max_size=12)


def _run(session: ContextSession, provider: StrictProvider, script: list[Turn]) -> list[Message]:
    added: list[Message] = []
    pinned_texts: list[str] = []

    def add(message: Message) -> None:
        session.add(message)
        added.append(message)

    def check() -> None:
        request = session.build_request()
        billed = provider.complete(request.messages, request.tools)  # raises on any invalid or over-window request
        assert request.tokens == count_request(COUNTER, request.messages, request.tools)  # what we count is sent
        assert request.tokens <= WINDOW
        assert request.messages[0].role == "system"
        assert request.messages[0].text == SYSTEM
        text = "\n".join(m.text for m in request.messages)
        assert PIN in text
        assert "goal number one" in text  # the first request, pinned verbatim
        assert all(pinned in text for pinned in pinned_texts)  # pinned history survives verbatim
        session.record_usage(billed)

    for n, turn in enumerate(script):
        words = "goal number one" if n == 0 else " ".join(["please"] * turn.user_words)
        add(Message(role="user", content=words))
        if turn.system_note:  # a framework injecting system content mid-conversation
            add(Message(role="system", content=f"Note {n}: the user's timezone is UTC."))
        check()
        if turn.calls:
            calls = tuple(
                ToolCall(id=f"call_{n}_{i}", name="grep", args={"q": f"x{i}"}) for i in range(len(turn.calls))
            )
            add(Message(role="assistant", content="", tool_calls=calls))
            if turn.check_open_calls:
                check()  # the calls are unanswered: the request carries synthetic results, counted
            for index, (call, lines) in enumerate(zip(calls, turn.calls, strict=True)):
                pin = turn.pin_result and index == 0 and lines <= 40
                content = f"pinned fact {n}\n" + "match line\n" * lines if pin else "match line\n" * lines
                add(
                    Message(
                        role="tool",
                        tool_call_id=call.id,
                        name="grep",
                        content=content,
                        metadata={"pinned": True} if pin else {},
                    )
                )
                if pin:
                    pinned_texts.append(content)
            check()
        add(
            Message(
                role="assistant",
                content=" ".join(["done"] * turn.reply_words),
                state="interrupted" if turn.interrupted else "complete",
            )
        )
    check()
    return added


@settings(max_examples=40, deadline=None)
@given(script=st.lists(turns, min_size=8, max_size=40), failures=failure_scripts)
def test_every_request_is_valid_in_budget_and_nothing_is_lost(script: list[Turn], failures: list[str]) -> None:
    session = ContextSession(
        max_tokens=WINDOW,
        counter=COUNTER,
        system_prompt=SYSTEM,
        summarizer=ScriptedSummarizer(failures),  # type: ignore[arg-type]
        policy=CompactionPolicy(keep_recent_messages=6, threshold=0.7, target=0.5, summarizer_timeout=5),
    )
    session.pin(PIN)
    provider = StrictProvider(max_tokens=WINDOW, counter=COUNTER)
    compactions: list[object] = []
    session.subscribe(compactions.append, "context_compacted")
    added = _run(session, provider, script)
    event(f"compactions: {min(len(compactions), 3)}{'+' if len(compactions) >= 3 else ''}")

    originals = session.originals()
    assert [m.id for m in originals] == [m.id for m in added]
    assert originals == added  # byte-for-byte, metadata included


@settings(max_examples=15, deadline=None)
@given(script=st.lists(turns, min_size=5, max_size=30))
def test_snapshot_round_trip_preserves_everything(script: list[Turn]) -> None:
    session = ContextSession(
        max_tokens=WINDOW, counter=COUNTER, system_prompt=SYSTEM, policy=CompactionPolicy(keep_recent_messages=6)
    )
    session.pin(PIN)
    _run(session, StrictProvider(max_tokens=WINDOW, counter=COUNTER), script)

    restored = ContextSession.restore(session.snapshot().to_json(), counter=COUNTER)

    assert restored.history == session.history
    assert restored.summary == session.summary
    assert restored.originals() == session.originals()
    assert restored.counted_tokens() == session.counted_tokens()
    assert restored.build_request().messages[1:] == session.build_request().messages[1:]
