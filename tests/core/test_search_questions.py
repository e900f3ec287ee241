"""Searching the archive with the question a model would ask: what the ranking does for natural questions."""

from __future__ import annotations

import json

import pytest
from ctxbudget import Archive
from ctxbudget.archive import ArchiveIndex
from ctxbudget.archive._text import (
    FAILURE_TERM,
    MAX_QUERY_TERMS,
    STOPWORDS,
    negation,
    query_terms,
    split_status,
    stem,
    tokenize,
)
from ctxbudget.messages import Message, ToolCall
from hypothesis import given, settings
from hypothesis import strategies as st


def _call(archive: Archive, name: str, args: dict[str, object], result: str, narration: str = "") -> Message:
    """Archive an assistant call and its result (cleared, as compaction does); returns the result message."""
    call = ToolCall(id=f"c{len(archive)}", name=name, args=args)
    archive.put_message(Message(role="assistant", content=narration, tool_calls=(call,)), "cleared")
    result_message = Message(role="tool", content=result, tool_call_id=call.id, name=name)
    archive.put_message(result_message, "cleared")
    return result_message


def _say(archive: Archive, role: str, text: str) -> Message:
    message = Message(role=role, content=text)  # type: ignore[arg-type]
    archive.put_message(message, "summarized")
    return message


def test_the_failed_refund_is_found_by_asking_why_it_failed() -> None:
    archive = Archive()
    _say(archive, "user", "Can you look at the refund flow? The refund did not go through for the customer.")
    answer = _call(archive, "run_command", {"command": "python scripts/refund.py --order ORD-88412"},
                   json.dumps({"status": "error", "code": "PAYMENT_METHOD_INACTIVE", "order_id": "ORD-88412"}),
                   narration="Let me reproduce the refund.")  # fmt: skip
    _say(archive, "assistant", "I will look at why the refund did not go through and what the customer saw.")
    _call(archive, "read_file", {"path": "docs/refunds.md"}, "Refunds are issued to the original payment method.")
    top = archive.search("why did the refund fail", k=3)[0]
    assert top.message_id == answer.id
    assert "PAYMENT_METHOD_INACTIVE" in top.text
    assert top.call == 'run_command {"command":"python scripts/refund.py --order ORD-88412"}'


def test_function_and_question_words_neither_match_nor_score() -> None:
    archive = Archive()
    _say(archive, "assistant", "Why did the what? Which of the ones did it, and what was it for, and why?")
    port = _say(archive, "user", "Staging now listens on port 5434.")
    assert [hit.message_id for hit in archive.search("which port does the staging use")] == [port.id]
    assert archive.search("what did the") == []
    assert {"what", "which", "why", "did", "the", "does"} <= STOPWORDS


def test_a_call_and_its_result_are_one_hit_in_either_archiving_order() -> None:
    archive = Archive()
    call = ToolCall(id="c1", name="run_tests", args={"path": "tests/migrations/test_0042.py"})
    result = Message(role="tool", content="AssertionError: expected 1204 rows, got 1198", tool_call_id="c1")
    archive.put_message(result, "cleared")  # the result first (an archive rebuilt from a state in any order)
    archive.put_message(Message(role="assistant", content="", tool_calls=(call,)), "cleared")
    for query in ("what did the migration test print", "run_tests", "expected rows"):
        (hit,) = archive.search(query)
        assert (hit.message_id, hit.source, hit.call) == (result.id, "run_tests", f"run_tests {call.args_json()}")


def test_a_short_line_introducing_a_call_is_part_of_its_hit_a_long_text_is_its_own() -> None:
    archive = Archive()
    result = _call(archive, "read_file", {"path": "config/staging.env"}, "DB_PORT=5433", narration="Checking config.")
    long_text = "Here is the plan for the staging config migration: " + "we move each setting in turn. " * 10
    _call(archive, "read_file", {"path": "config/prod.env"}, "DB_PORT=5432", narration=long_text)
    assert next(hit.message_id for hit in archive.search("checking config", k=5)) == result.id
    roles = {hit.role for hit in archive.search("plan staging config migration", k=5)}
    assert "assistant" in roles  # the long text is a hit of its own


def test_inflections_and_joined_words_match() -> None:
    archive = Archive()
    failing = _say(archive, "assistant", "The integration tests failed twice on the retries.")
    rollback = _call(archive, "read_file", {"path": "logs/deploy.log"}, "ERROR rollback triggered by healthcheck")
    _say(archive, "user", "Lunch is at noon.")
    assert archive.search("failing test retry")[0].message_id == failing.id
    assert archive.search("why was the deploy rolled back")[0].message_id == rollback.id
    assert archive.search("health check")[0].message_id == rollback.id


def test_common_abbreviations_read_as_their_short_form() -> None:
    archive = Archive()
    env = "DB_HOST=db-stg-4.internal\nPROD_DSN=postgres://billing@db-prod-1.internal:5432/billing"
    config = _call(archive, "read_file", {"path": "config/staging.env"}, env)
    _say(archive, "user", "The host for the demo is demo-1.internal.")
    assert archive.search("what host is the production database on")[0].message_id == config.id


def test_outcome_lines_of_tool_outputs_weigh_more_than_prose() -> None:
    archive = Archive()
    line = "request timeout after 30s talking to the cache layer"
    prose = _call(archive, "read_file", {"path": "docs/notes.md"}, f"Notes: {line}")
    failed = _call(archive, "run_command", {"command": "make smoke"}, f"ERROR: {line}")
    assert [h.message_id for h in archive.search("cache timeout", k=2)] == [failed.id, prose.id]
    status, rest = split_status("all good\nERROR: request timeout after 30s\nbye")
    assert status == "ERROR: request timeout after 30s"
    assert "all good" in rest
    assert "ERROR" not in rest


def test_what_a_user_or_assistant_says_about_a_failure_is_not_an_outcome() -> None:
    archive = Archive()
    talk = _say(archive, "user", "Did the deploy fail again? The deploy always fails on Fridays.")
    outcome = _call(archive, "run_command", {"command": "deploy --env prod"}, "Error: exit code 2 (deploy aborted)")
    index = ArchiveIndex()
    for entry in archive.entries():
        index.add(entry)
    units = index.units
    assert FAILURE_TERM in units[units.where(outcome.id) or 0].counts
    assert FAILURE_TERM not in units[units.where(talk.id) or 0].counts


def test_a_question_about_what_the_user_asked_prefers_the_users_words() -> None:
    archive = Archive()
    _call(archive, "read_file", {"path": "cmd/commit.go"}, "// Add the trailer to the commit message comment")
    asked = _say(archive, "user", "please add a line inbetween showing the Prompt")
    assert archive.search("what did the user ask to add to the comment", k=2)[0].message_id == asked.id


@pytest.mark.parametrize(
    ("word", "expected"),
    [("failed", "fail"), ("fails", "fail"), ("failing", "fail"), ("retries", "retry"), ("stopped", "stop"),
     ("created", "creat"), ("create", "creat"), ("passes", "pass"), ("status", "status"), ("used", "use"),
     ("deploy", "deploy"), ("t4821", "t4821"), ("eu-west-3", "eu-west-3"), ("api", "api"), ("pointer", "point"),
     ("pointers", "point"), ("handler", "handl"), ("handle", "handl"), ("wrapper", "wrap"), ("filtered", "filt"),
     ("filter", "filt"), ("user", "user"), ("order", "order"), ("power", "power"), ("never", "never")],
)  # fmt: skip
def test_light_stems(word: str, expected: str) -> None:
    assert stem(word) == expected


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(alphabet="abcdefghij xyz_-./0123456789", min_size=1, max_size=12), max_size=200))
def test_a_query_never_has_more_than_the_term_cap(words: list[str]) -> None:
    terms = query_terms(" ".join(words), tokenize)
    assert len(terms) <= MAX_QUERY_TERMS
    assert len(set(terms)) == len(terms)
    assert not STOPWORDS.intersection(terms)


def test_attaching_a_result_to_its_call_tokenizes_only_the_new_entry() -> None:
    seen: list[str] = []

    def counting(text: str) -> list[str]:
        seen.append(text)
        return tokenize(text)

    archive = Archive()
    call = ToolCall(id="c1", name="grep", args={"pattern": "needle_7"})
    archive.put_message(Message(role="assistant", content="", tool_calls=(call,)), "cleared")
    index = ArchiveIndex(tokenizer=counting)
    index.add(archive.entries()[0])
    seen.clear()
    archive.put_message(Message(role="tool", content="found needle_7 in a.py", tool_call_id="c1"), "cleared")
    index.add(archive.entries()[1])
    assert seen == ["found needle_7 in a.py"]
    (hit,) = index.search("needle_7")
    assert hit.role == "tool"


def test_a_pointer_file_is_found_by_asking_where_it_points() -> None:
    archive = Archive()
    _call(archive, "Bash", {"command": "ls -la .worktrees/1", "description": "List the worktree"},
          "total 8\n.git\nREADME.md\nmain.go\ngo.mod")  # fmt: skip
    pointer = _call(archive, "Bash", {"command": "cat .worktrees/1/.git", "description": "Check the .git pointer file"},
                    "gitdir: /repo/.git/worktrees/1")  # fmt: skip
    _say(archive, "assistant", "The worktree has its own .git file and its own index file; the index file is stale.")
    assert archive.search("where does the worktree's .git file point", k=1)[0].message_id == pointer.id


def test_a_question_about_a_state_also_finds_the_text_that_reversed_it() -> None:
    archive = Archive()
    installed = _call(archive, "bash", {"command": "pip install requests"}, "Successfully installed requests-2.32.3")
    removed = _call(archive, "bash", {"command": "pip uninstall leftpad -y"}, "Successfully uninstalled leftpad-1.3.0")
    _say(archive, "user", "The build should stay reproducible.")
    hits = archive.search("is the package still installed", k=3)
    assert [hit.message_id for hit in hits] == [installed.id, removed.id]  # the word asked outweighs its reversal
    assert archive.search("which files are untracked", k=1) == []  # nothing tracked or untracked: no match


@pytest.mark.parametrize(
    ("term", "expected"),
    [("install", "uninstall"), ("uninstall", "install"), ("untrack", "track"), ("lock", "unlock"),
     ("unit", None), ("under", None), ("union", None), ("pkg_3", None), ("5432", None)],
)  # fmt: skip
def test_negation_pairs(term: str, expected: str | None) -> None:
    assert negation(term) == expected


def test_negated_forms_keep_a_query_within_the_term_cap() -> None:
    words = [f"word{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(MAX_QUERY_TERMS)]
    archive = Archive()
    _say(archive, "user", " ".join(words + ["un" + word for word in words]))
    index = ArchiveIndex()
    for entry in archive.entries():
        index.add(entry)
    assert len(index._weights(query_terms(" ".join(words[:20]), tokenize))) == MAX_QUERY_TERMS


def test_a_short_reply_reading_out_a_result_is_part_of_the_calls_hit() -> None:
    """tau-bench: the certificate id is only in the tool's output; the words asked are in the agent's reply to it."""
    archive = Archive()
    for n in range(6):
        _say(archive, "user", f"Passenger {n} would like an aisle seat on the morning departure.")
    _say(archive, "assistant", "Your delayed flight qualifies for compensation under the policy.")
    _say(archive, "assistant", "A certificate can be issued once the reservation is confirmed.")
    call = ToolCall(id="c1", name="send_certificate", args={"user_id": "noah_muller_9847", "amount": 50})
    archive.put_message(Message(role="assistant", content="", tool_calls=(call,)), "summarized")
    result = Message(role="tool", content="Certificate certificate_3221322 added.", tool_call_id="c1")
    archive.put_message(result, "cleared")
    reply = _say(archive, "assistant", "A certificate worth $50 has been issued to you for the delayed flight.")
    hits = archive.search("which certificate was issued for the delayed flight", k=5)
    assert hits[0].message_id == result.id  # alone, its one matching word would rank it below both remarks
    assert reply.id not in {hit.message_id for hit in hits}  # the reply is part of the result's hit
    # A reply after a user turn, or a long one, stays a hit of its own.
    other = Archive()
    _call(other, "get_user", {"id": "u1"}, '{"name": "Noah"}')
    _say(other, "user", "Thanks.")
    after_user = _say(other, "assistant", "You are welcome, Noah.")
    _call(other, "get_user", {"id": "u2"}, '{"name": "Mia"}')
    long_reply = _say(other, "assistant", "Here is everything on file for Mia. " * 15)
    assert other.search("welcome")[0].message_id == after_user.id
    assert other.search("everything on file")[0].message_id == long_reply.id
    # After a long output (a file, a log) a short remark is the assistant's own reading: a hit of its own.
    _call(other, "read_file", {"path": "deploy.yaml"}, "region: us-east-1\nreplicas: 3\n" * 10)
    decision = _say(other, "assistant", "Decision: deploy to eu-west-3 from now on.")
    assert decision.id in {hit.message_id for hit in other.search("which region do we deploy to")}
    # A bare value holds none of the words asked: the hit shows the reply that does, and names the call.
    calc = _call(other, "calculate", {"expression": "(158 + 161) * 3 + 3 * 30"}, "1047.0")
    total = _say(other, "assistant", "It seems there was an oversight: the correct total, with fees, is $1,047.")
    # A short remark after a value that names nothing of the call or the value is not its reading: its own hit.
    value = _call(other, "get_order", {"order_id": "#W8899412"}, '{"status": "ok", "confirmation": "CNF-777803"}')
    remark = _say(other, "assistant", "The queue views need a schema change before the worker pool moves.")
    units = _indexed(other).units
    assert units.where(remark.id) != units.where(value.id)
    assert units.where(total.id) == units.where(calc.id)  # "$1,047" reads out "1047.0"
    hit = other.search("how is the agent recomputing the total")[0]
    assert (hit.message_id, hit.call) == (total.id, 'calculate {"expression":"(158 + 161) * 3 + 3 * 30"}')


def test_a_call_that_never_ran_is_answered_by_its_retry() -> None:
    """Claude Code: a parallel call cancelled ("Sibling tool call errored") and re-run with other words next turn."""
    archive = Archive()
    for n in range(8):
        _call(archive, "Bash", {"command": f"git -C repo log -n {n}"}, f"commit {n:07x} on main")
    failed = ToolCall(id="f1", name="Bash", args={"command": "git -C repo config gc.auto"})
    unrun = ToolCall(id="u1", name="Bash", args={"command": 'pgrep -lf "Sourcetree|GitKraken|Tower|vscode.*git"',
                                                 "description": "Check for running git GUI clients"})  # fmt: skip
    archive.put_message(Message(role="assistant", content="", tool_calls=(failed, unrun)), "summarized")
    archive.put_message(Message(role="tool", content="Exit code 1", tool_call_id="f1"), "cleared")
    cancelled = "<tool_use_error>Sibling tool call errored</tool_use_error>"
    archive.put_message(Message(role="tool", content=cancelled, tool_call_id="u1"), "cleared")
    answer = _call(archive, "Bash", {"command": 'pgrep -lf "Sourcetree|GitKraken|Tower|git" | head -20',
                                     "description": "Check for git-related processes"},
                   "681 /Applications/Sourcetree.app/Contents/MacOS/Sourcetree\n1138 /usr/bin/ssh-agent")  # fmt: skip
    top = archive.search("which git GUI is running", k=3)[0]
    assert (top.message_id, top.call) == (answer.id, f"Bash {answer_call_args(archive, answer)}")
    assert "Sourcetree.app" in top.text
    # Another call of the same tool with other words is not a retry, and a user turn in between ends the wait.
    other = Archive()
    other.put_message(Message(role="assistant", content="", tool_calls=(failed, unrun)), "summarized")
    other.put_message(Message(role="tool", content=cancelled, tool_call_id="u1"), "cleared")
    _say(other, "user", "Never mind that, just list the processes.")
    _call(other, "Bash", {"command": 'pgrep -lf "Sourcetree|GitKraken|Tower|git" | head -20'}, "681 Sourcetree")
    assert other.search("which git GUI is running", k=1)[0].text == cancelled


def answer_call_args(archive: Archive, result: Message) -> str:
    """The JSON arguments of the call ``result`` answers (found in the archive by call id)."""
    call = next(c for m in archive.messages() for c in m.tool_calls if c.id == result.tool_call_id)
    return call.args_json()


def test_a_number_with_thousands_separators_is_one_term() -> None:
    """``$1,047`` in a reply and ``1047.0`` from the calculator it reads out are the same number."""
    assert "1047" in tokenize("The correct total is $1,047.")
    assert "1047" in tokenize("1047.0")
    assert "1234567" in tokenize("1,234,567 rows")
    assert "047" not in tokenize("$1,047")
    assert tokenize("f(1,2)") == ["f", "1", "2"]  # arguments, not thousands


def _indexed(archive: Archive) -> ArchiveIndex:
    index = ArchiveIndex()
    for entry in archive.entries():
        index.add(entry)
    return index


def test_calls_that_never_ran_wait_for_a_retry_a_bounded_few_at_a_time() -> None:
    """A model may cancel thousands of calls in a row; only the newest few wait, so no call meets them all."""
    archive = Archive()
    cancelled: list[Message] = []
    for n in range(2_000):
        call = ToolCall(id=f"u{n}", name="Bash", args={"command": f"probe --target host-{n} --deep"})
        archive.put_message(Message(role="assistant", content="", tool_calls=(call,)), "summarized")
        result = Message(role="tool", content="<tool_use_error>Sibling tool call errored</tool_use_error>",
                         tool_call_id=call.id)  # fmt: skip
        archive.put_message(result, "cleared")
        cancelled.append(result)
    newest = _call(archive, "Bash", {"command": "probe --target host-1999 --deep --retry"}, "host-1999: up")
    _call(archive, "Bash", {"command": "probe --target host-0 --deep --retry"}, "host-0: up")
    units = _indexed(archive).units
    assert units[units.where(cancelled[-1].id) or 0].retry == units.where(newest.id)
    assert units[units.where(cancelled[0].id) or 0].retry is None  # past the newest MAX_WAITING: no longer waiting


def test_a_cancelled_call_archived_again_keeps_the_retry_it_had() -> None:
    """Compaction archives a result again (``.cleared``, then ``.summarized``): that is not a second wait."""
    archive = Archive()
    call = ToolCall(id="u1", name="Bash", args={"command": "pgrep -lf Sourcetree"})
    archive.put_message(Message(role="assistant", content="", tool_calls=(call,)), "summarized")
    cancelled = Message(role="tool", content="<tool_use_error>Sibling tool call errored</tool_use_error>",
                        tool_call_id="u1")  # fmt: skip
    archive.put_message(cancelled, "cleared")
    retry = _call(archive, "Bash", {"command": "pgrep -lf Sourcetree | head"}, "681 Sourcetree")
    archive.put_message(cancelled, "summarized")
    _call(archive, "Bash", {"command": "pgrep -lf Sourcetree | head -5"}, "681 Sourcetree")
    units = _indexed(archive).units
    assert units[units.where(cancelled.id) or 0].retry == units.where(retry.id)


def test_a_line_beside_a_call_that_reads_out_the_call_before_is_a_hit_of_its_own() -> None:
    # tau-bench retail task 54: the agent's line that reads out order #W5400801's details is written beside the call
    # for the next order, which failed with a 503; as that call's narration it was only reachable as "Error: 503".
    archive = Archive()
    record = {"order_id": "#W5400801", "user_id": "amelia_silva_7726", "status": "cancelled",
              "items": [{"name": "Cycling Helmet", "item_id": "7401244629", "price": 188.92}]}  # fmt: skip
    _call(archive, "get_order_details", {"order_id": "#W5400801"}, json.dumps(record),
          narration="Let me try one more time to fetch order #W5400801.")  # fmt: skip
    reading = "I've retrieved the details for order #W5400801. This order is also in a 'cancelled' status, so no "
    reading += "further action is needed for this one. Let's check the next order, #W4597054."
    _call(archive, "get_order_details", {"order_id": "#W4597054"}, "Error: 503 Service Unavailable", narration=reading)
    hits = archive.search("what is the status of order W5400801", k=3)
    assert any(reading in archive.read(hit.handle) for hit in hits)
    order = next(hit for hit in archive.search("W4597054", k=3) if hit.source == "get_order_details")
    assert order.text == "Error: 503 Service Unavailable"  # the next call's own hit: its call and its result
