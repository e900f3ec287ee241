"""A compaction uses the room it is given: the tail keeps what the summary leaves room for, and a message too large
to stay beside a summary is shown as an excerpt, not folded away with the whole history.

Twenty-fifth held-out round (Claude Code, oh-my-posh): at 30% the request used 17,915 of 24,807 tokens. The offline
summary came out smaller than estimated, and the tail that could use the rest began inside a tool call's results
(four Edit results after their call), so the shorter span was refused. In an earlier round (Claude Code, napoli) the
newest message was a 29,886-token command output Claude Code sent as the user's, larger than the window: the whole
history was folded into the summary and the request used 20% of its budget, the newest turn not in view at all.
"""

from __future__ import annotations

from ctxbudget import ContextSession, Message, TiktokenCounter, ToolCall

COUNTER = TiktokenCounter()


def _edits(turn: int, count: int) -> list[Message]:
    calls = tuple(
        ToolCall(id=f"e{turn}_{k}", name="Edit", args={"file_path": f"docs/part_{k}.md", "new_string": "x " * 40})
        for k in range(count)
    )
    return [
        Message(role="assistant", content="Applying the copyedits.", tool_calls=calls, id=f"a{turn}"),
        *(
            Message(role="tool", tool_call_id=c.id, content=f"The file docs/part_{k}.md has been updated.", id=c.id)
            for k, c in enumerate(calls)
        ),
    ]


def test_the_tail_grows_into_the_room_the_summary_left_even_past_a_calls_results() -> None:
    session = ContextSession(max_tokens=6_000, counter=COUNTER)
    session.add(Message(role="user", content="Edit the document against the style rules.", id="goal"))
    for turn in range(12):
        session.add(Message(role="user", content=f"Now section {turn}: " + "tighten the wording. " * 10))
        session.add(*_edits(turn, 4))
        session.add(Message(role="assistant", content=f"Section {turn} done: " + "the wording is tighter. " * 10))
    session.compact()
    request = session.build_request()
    used = sum(COUNTER.count_message(m) for m in request.messages)
    target = int(6_000 * session.policy.target)
    assert used >= 0.85 * target, (used, target)


def test_a_user_message_larger_than_the_window_is_an_excerpt_beside_the_summary() -> None:
    session = ContextSession(max_tokens=8_000, counter=COUNTER)
    session.add(Message(role="user", content="Run the PR creation tests and fix what fails.", id="goal"))
    for turn in range(6):
        call = ToolCall(id=f"c{turn}", name="Bash", args={"command": f"npm test -- part{turn}"})
        session.add(Message(role="assistant", tool_calls=(call,)))
        session.add(Message(role="tool", tool_call_id=call.id, content=f"part{turn}: 12 passed"))
    log = "\n".join(f" FAIL tests/pr_creation.test.ts > case {n}: expected push to succeed" for n in range(2_500))
    session.add(Message(role="user", content=f"<bash-stdout>{log}</bash-stdout>", id="log"))
    session.compact()
    request = session.build_request()
    newest = request.messages[-1]
    assert newest.id == "log"  # the turn the model is in stays in view
    assert "FAIL tests/pr_creation.test.ts > case 0" in newest.text  # as its head and tail
    assert "chars omitted; full text: ctx://archive/log" in newest.text
    handle = newest.text.split("full text: ", 1)[1].split(" ", 1)[0]
    assert "case 1200:" in session.read_archived(handle, limit=None)  # nothing lost
