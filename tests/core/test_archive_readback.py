"""Reading an archived original back gives all of it: a tool call's arguments are part of the message that made it.

A model that writes a script with a heredoc, or a long query, sends it as a call's arguments; once that message is
archived, the read-back tool is the only way to see it again, so it must serve the calls too, and a search hit
that could show only part of a long call names where the whole call is read back.
"""

from __future__ import annotations

from ctxbudget import Archive, ContextSession
from ctxbudget.messages import Message, ToolCall

SCRIPT = "cat > check_validators.py << 'EOF'\n" + "\n".join(f"case_{i} = validate('user{i}\\n')" for i in range(60))


def _archived_call(archive: Archive) -> tuple[str, str]:
    call = ToolCall(id="call-1", name="bash", args={"command": SCRIPT})
    call_handle = archive.put_message(
        Message(role="assistant", content="Let me write a check.", tool_calls=(call,)), "summarized"
    )
    result = Message(role="tool", content="wrote check_validators.py", tool_call_id="call-1", name="bash")
    return call_handle, archive.put_message(result, "summarized")


def test_reading_back_an_archived_call_gives_its_text_then_each_call_whole() -> None:
    archive = Archive()
    call_handle, _ = _archived_call(archive)
    text = archive.read(call_handle)
    assert text.startswith("Let me write a check.\n[tool call bash (id call-1): ")
    assert "case_59 = validate" in text  # the end of the script: nothing of the arguments is cut
    assert archive.read(call_handle, offset=len(text) - 10) == text[-10:]  # paging covers the calls too


def test_a_message_without_calls_reads_back_as_its_text() -> None:
    archive = Archive()
    handle = archive.put_message(Message(role="user", content="keep the pipe delimiter"), "summarized")
    assert archive.read(handle) == "keep the pipe delimiter"


def test_a_hit_showing_a_cut_call_names_the_handle_that_reads_it_back_whole() -> None:
    archive = Archive()
    call_handle, result_handle = _archived_call(archive)
    [hit] = archive.search("validate case_59 check_validators", k=1)
    assert hit.handle == result_handle  # a call and its result are one hit, showing the result
    assert hit.call is not None
    assert len(hit.call) < len(SCRIPT)
    assert hit.call_handle == call_handle
    assert "case_59" in archive.read(hit.call_handle)


def test_a_short_call_shown_whole_names_no_other_handle() -> None:
    archive = Archive()
    call = ToolCall(id="c2", name="grep", args={"pattern": "INVOICE_BATCH"})
    archive.put_message(Message(role="assistant", content="", tool_calls=(call,)), "cleared")
    archive.put_message(Message(role="tool", content="config.py:3: INVOICE_BATCH=200", tool_call_id="c2"), "cleared")
    [hit] = archive.search("INVOICE_BATCH", k=1)
    assert hit.call is not None
    assert "INVOICE_BATCH" in hit.call
    assert hit.call_handle is None


def test_a_session_reads_an_archived_call_back_whole() -> None:
    session = ContextSession(model="gpt-4o", max_tokens=4_000)
    session.add_user("check the validators")
    session.add(
        Message(role="assistant", content="", tool_calls=(ToolCall(id="c1", name="bash", args={"command": SCRIPT}),))
    )
    session.add_tool_result("c1", "wrote check_validators.py", name="bash")
    for turn in range(12):
        session.add_user(f"next step {turn}: " + "details " * 60)
        session.add_assistant(f"done with step {turn}")
    session.compact()
    handles = [e.handle for e in session.archive.entries() if e.message is not None and e.message.tool_calls]
    assert handles, "the call was compacted away"
    assert "case_59" in session.read_archived(handles[0], limit=None)
