"""Truncation, the last tier, never removes the turn the model is in.

In a long agent run the user's request is summarized early (it stays pinned as the goal), so "never past the latest
user request" no longer bounds the cut: the newest message, and the call it answers, must still be sent. These
histories have no user message left and a target below any message: truncation goes as far as it may.
"""

from __future__ import annotations

from ctxbudget import ContextSession
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.compaction.tiers import Compaction
from ctxbudget.messages import Message, ToolCall
from ctxbudget.messages.tokens import TiktokenCounter

COUNTER = TiktokenCounter()


def _steps(count: int, *, end_on_result: bool) -> list[Message]:
    history: list[Message] = []
    for t in range(count):
        call = ToolCall(id=f"c{t}", name="grep", args={"n": t})
        history += [
            Message(role="assistant", tool_calls=(call,), id=f"a{t}"),
            Message(role="tool", content=f"result {t}", tool_call_id=f"c{t}", id=f"r{t}"),
            Message(role="assistant", content=f"step {t} done", id=f"d{t}"),
        ]
    return history[:-1] if end_on_result else history


def _truncated(history: list[Message]) -> list[Message]:
    work = Compaction(
        history,
        counter=COUNTER,
        policy=CompactionPolicy(),
        window=100_000,
        target_tokens=50,  # far below what any message costs: truncation goes as far as it may
        fixed_tokens=0,
        summary="earlier work",
        render_summary=lambda summary, _goal: Message(role="user", content=summary) if summary else None,
        sizes=[100] * len(history),
    )
    work.truncate(500)
    assert work.out.tiers == ["truncate"]
    return work.out.history


def test_truncation_keeps_the_newest_message_when_no_user_request_is_left() -> None:
    assert [m.id for m in _truncated(_steps(3, end_on_result=False))] == ["d2"]


def test_truncation_keeps_the_newest_result_with_its_call() -> None:
    assert [m.id for m in _truncated(_steps(3, end_on_result=True))] == ["a2", "r2"]


def test_a_tail_that_fills_the_target_does_not_empty_the_summary() -> None:
    """The current turn fills the target, the hard stop has room: what was summarized stays in what is sent.

    Before, the fold sized the summary to what the *target* left (nothing), so the ledger was built with 16 tokens and
    every earlier fact fell out of the request (they were still archived, but the model no longer saw them).
    """
    facts = [f"My booking reference is REF{t:04d} and the passenger is Passenger{t}." for t in range(6)]
    history = [Message(role="user", content=fact, id=f"u{t}") for t, fact in enumerate(facts)]
    history.append(Message(role="user", content="Please rebook the flights. " + "context " * 300, id="now"))
    sizes = [COUNTER.count_message(m) for m in history]
    work = Compaction(
        history,
        counter=COUNTER,
        policy=CompactionPolicy(),
        window=1_000,
        target_tokens=sizes[-1],  # the newest turn alone fills the target
        fixed_tokens=0,
        summary=None,
        render_summary=lambda summary, _goal: Message(role="user", content=summary) if summary else None,
        sizes=sizes,
    )
    work.truncate(400)
    assert [m.id for m in work.out.history] == ["now"]
    summary = work.out.summary or ""
    assert sum(f"REF{t:04d}" in summary for t in range(6)) >= 4, summary
    assert work.total() <= CompactionPolicy().hard_stop * 1_000


def test_a_newest_turn_over_the_hard_stop_stays_in_view_as_an_excerpt_beside_the_work() -> None:
    """Claude Code (held-out round 6): the user's own `!` command printed 30k tokens into a 26k window.

    Before, the summary tier sized its summary to the room beside that turn (16 tokens) and kept ``## Open items -
    (none)`` for 73 messages; truncation then folded the turn into that: the request held the goal and one bullet
    (``<bash-stderr></bash-stderr>``). Then the whole history was folded at once, and the request held a summary
    alone (20% of the room, twenty-fifth round). Now the output is bounded like a tool's: its head and tail stay in
    view, and the work before it is kept or summarized beside it.
    """
    session = ContextSession(model="gpt-4o", max_tokens=4_000)
    session.add(Message(role="user", content="Find why git push fails in the sandbox."))
    for t in range(6):
        call = ToolCall(id=f"c{t}", name="Read", args={"file_path": f"/repo/src/sandbox_{t}.ts"})
        session.add(
            Message(role="assistant", content=f"Reading sandbox_{t}.ts for the auth setup.", tool_calls=(call,)),
            Message(role="tool", tool_call_id=f"c{t}", content=f"export const step{t} = {t};\n" * 20),
        )
    session.add(Message(role="assistant", content="The root cause is that `gh auth setup-git` never runs."))
    session.add(Message(role="user", content="<bash-stdout>" + "test output line\n" * 3_000 + "</bash-stdout>"))
    session.compact()
    request = session.build_request()
    seen = "\n".join(m.text for m in request.messages)
    assert "gh auth setup-git" in seen
    assert sum(f"sandbox_{t}.ts" in seen for t in range(6)) == 6, seen
    assert request.messages[-1].text.startswith("<bash-stdout>test output line")
    assert "chars omitted; full text: ctx://archive/" in request.messages[-1].text
