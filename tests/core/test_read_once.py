"""What compaction has read is not read again: counted by calls, never by time.

A tool result's failure line is read once for its own items (when it is cleared) and for its call's outcome (when
the assistant message is summarized); a second ledger build over the same items reads no subject or content words
again; the remembered readings of runs give the same answers as reading them afresh.
"""

from __future__ import annotations

import ctxbudget.compaction.ledger as ledger_module
import ctxbudget.compaction.salience as salience_module
import pytest
from ctxbudget import Message, ToolCall
from ctxbudget.compaction.ledger import Ledger
from ctxbudget.compaction.memo import ReadMemo
from ctxbudget.compaction.salience import Salient
from ctxbudget.compaction.summarize import ExtractiveSummarizer, SummaryRequest
from ctxbudget.compaction.textscan import _read_run, _run_reading, _token, _token_of, informative_tokens, scan
from ctxbudget.messages.tokens import CharCounter

CALL = ToolCall(id="c1", name="run_tests", args={"command": "pytest -q tests/test_api.py"})
SPAN = (
    Message(role="user", content="The deploy target is eu-west-3 and the ticket is OPS-4411.", id="u1"),
    Message(role="assistant", content="", tool_calls=(CALL,), id="a1"),
    Message(
        role="tool",
        content="collected 12 items\nFAILED tests/test_api.py::test_login - KeyError: 'user_id'\n1 failed, 11 passed",
        tool_call_id="c1",
        name="run_tests",
        id="c1",
    ),
)


def _counting(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[str]:
    calls: list[str] = []
    original = getattr(module, name)

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(name)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_result_failure_is_read_once_for_its_marker_and_its_calls_outcome(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch, salience_module, "failure_line")
    summarizer = ExtractiveSummarizer(CharCounter())
    lines = summarizer.key_lines(SPAN[2], 6, {CALL.id: CALL})  # the clear tier reads the result
    assert lines[0].startswith("FAILED:")
    assert len(calls) == 1
    summary = summarizer.summarize(SummaryRequest(messages=SPAN, max_tokens=400))
    assert "FAILED" in summary  # the call's outcome came from the remembered failure
    assert len(calls) == 1


def test_a_second_build_reads_no_subject_or_words_again(monkeypatch: pytest.MonkeyPatch) -> None:
    subjects = _counting(monkeypatch, ledger_module, "subject_of")
    words = _counting(monkeypatch, ledger_module, "content_words")
    items = [
        Salient(
            "fact", "The deploy target is eu-west-3.", None, 0, informative_tokens("The deploy target is eu-west-3.")
        ),
        Salient("fact", "The deploy target is now us-east-1.", None, 1, informative_tokens("now us-east-1")),
        Salient("question", "Could you also check the staging logs?", None, 2, informative_tokens("staging logs")),
        Salient("question", "Which region serves the EU customers?", None, 3, informative_tokens("region customers")),
    ]
    memo = ReadMemo()
    first = Ledger(CharCounter(), 400, memo=memo).build([], items)
    read = (len(subjects), len(words))
    assert read[0] > 0
    assert read[1] > 0
    again = Ledger(CharCounter(), 400, memo=memo).build([], items)
    assert again == first
    assert (len(subjects), len(words)) == read


@pytest.mark.parametrize(
    "text",
    [
        "Deploy v2.3.1 to eu-west-3 by 2026-01-05, $1,200 budget; see src/app/main.py:12 and ops@example.com.",
        "a" * 250 + " trailing words, 42 rows; «ünïcödé» ok.",
        "",
    ],
)
def test_remembered_run_readings_match_fresh_ones(text: str) -> None:
    # The remembered per-run readings answer as reading the run afresh does, before and after being remembered.
    for run in [*text.split(), *(word.strip(".,;") for word in text.split())]:
        for _ in range(2):
            assert _read_run(run) == _run_reading(run)
            assert _token(run) == _token_of(run)
    assert scan(text) == scan(text)
    assert informative_tokens(text) == informative_tokens(text)
