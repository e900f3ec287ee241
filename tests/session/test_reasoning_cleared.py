"""The clear tier takes reasoning blocks out of older assistant messages first, and archives each original.

Twenty-seventh held-out round (a Claude Code session with extended thinking): the thinking blocks of the kept messages
took 6,700 of a 15,300-token request, room the summary and the tail did not get. A provider needs back only the newest
assistant message's reasoning (Anthropic wants the last assistant message of a tool loop to start with its thinking
block; its own context editing clears older thinking first).
"""

from __future__ import annotations

from ctxbudget import ContentBlock, ContextSession, Message, TiktokenCounter, ToolCall
from ctxbudget.session import ArchivedItem

THOUGHT = "Weighing the options for this step before calling the tool. " * 60


def _turn(n: int) -> list[Message]:
    thinking = ContentBlock(type="thinking", data={"thinking": f"{n}: {THOUGHT}", "signature": f"sig-{n}"})
    return [
        Message(role="user", content=f"Please run step {n} of the migration.", id=f"u{n}"),
        Message(
            role="assistant",
            content=[thinking, ContentBlock(type="text", text=f"Running step {n}.")],
            tool_calls=[ToolCall(id=f"c{n}", name="run", args={"step": n})],
            id=f"a{n}",
        ),
        Message(role="tool", tool_call_id=f"c{n}", content=f"step {n} done: 12 rows migrated", id=f"t{n}"),
    ]


def _compacted(window: int, turns: int) -> tuple[ContextSession, list[ArchivedItem], list[Message]]:
    session = ContextSession(max_tokens=window, counter=TiktokenCounter())
    receipts: list[ArchivedItem] = []
    session.subscribe(lambda event: receipts.extend(getattr(event, "receipt", ())), "context_compacted")
    added = [message for n in range(turns) for message in _turn(n)]
    session.add(*added)
    return session, receipts, session.build_request().messages


def _has_reasoning(message: Message) -> bool:
    return not isinstance(message.content, str) and any(block.type == "thinking" for block in message.content)


def test_older_reasoning_goes_first_oldest_first_and_the_newest_assistant_message_keeps_its_own() -> None:
    _session, receipts, sent = _compacted(window=9_000, turns=12)
    assistants = [m for m in sent if m.role == "assistant" and m.tool_calls]
    assert assistants, "the tail keeps assistant messages"
    kept = [_has_reasoning(m) for m in assistants]
    assert kept[-1]
    assert not kept[0]
    assert kept == sorted(kept)  # oldest first: every message that lost its reasoning is older than any that kept it
    assert all(m.text.startswith("Running step") for m in assistants)  # their text and calls stay
    cleared = [item for item in receipts if item.message_id.startswith("a") and item.reason == "cleared"]
    assert cleared
    assert not [item for item in receipts if item.message_id.startswith("t")]  # no tool result had to go for it


def test_every_cleared_reasoning_block_reads_back_from_the_archive_as_it_was() -> None:
    session, receipts, _sent = _compacted(window=9_000, turns=12)
    originals = {m.id: m for n in range(12) for m in _turn(n)}
    for item in receipts:
        if item.message_id.startswith("a"):
            assert session.archive.get(item.handle).message == originals[item.message_id]


def test_a_message_that_is_only_reasoning_keeps_it() -> None:
    session = ContextSession(max_tokens=6_000, counter=TiktokenCounter())
    only = ContentBlock(type="thinking", data={"thinking": THOUGHT, "signature": "sig"})
    for n in range(10):
        session.add(
            Message(role="user", content=f"Question {n}: what next?", id=f"u{n}"),
            Message(role="assistant", content=[only], id=f"r{n}"),
            Message(role="assistant", content=f"Answer {n}.", id=f"x{n}"),
        )
    sent = session.build_request().messages
    assert all(m.content for m in sent if m.role == "assistant")
