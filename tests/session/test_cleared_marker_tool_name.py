"""A cleared tool result names its tool, also when the result itself carries no name: its call's name is used."""

from __future__ import annotations

from ctxbudget import ContextSession, Message, ToolCall


def _session_with_unnamed_results() -> ContextSession:
    session = ContextSession(model="gpt-4o", max_tokens=6_000)
    session.add_user("find where INVOICE_BATCH is set")
    for turn in range(8):
        call = ToolCall(id=f"c{turn}", name="grep_repo", args={"pattern": f"INVOICE_BATCH_{turn}"})
        session.add(Message(role="assistant", content="", tool_calls=(call,)))
        output = "\n".join(f"src/billing/batch_{turn}_{line}.py:{line}: INVOICE_BATCH = {line}" for line in range(40))
        session.add(Message(role="tool", tool_call_id=call.id, content=output))  # no name, as many clients send
        session.add_assistant(f"Checked batch {turn}.")
    return session


def test_a_result_without_a_name_is_cleared_under_its_calls_name() -> None:
    session = _session_with_unnamed_results()
    request = session.build_request()
    assert request.compaction is not None
    markers = [m.text for m in request.messages if m.role == "tool" and m.text.startswith("[tool output cleared")]
    assert markers, "the oldest results were cleared"
    assert all("chars from grep_repo;" in marker for marker in markers)
    assert not any("from the tool;" in marker for marker in markers)
