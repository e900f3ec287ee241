"""What one compaction kept for the next: a user message's statements, a bullet's size, a figure line's candidates.

Counted by calls, never by time; each remembered answer is the one a fresh reading gives.
"""

from __future__ import annotations

import ctxbudget.compaction._figure_lines as figures_module
import ctxbudget.compaction.salience as salience_module
import pytest
from ctxbudget import Message
from ctxbudget.compaction._ledger_select import bullet_size
from ctxbudget.compaction.ledger import Ledger
from ctxbudget.compaction.memo import ReadMemo
from ctxbudget.compaction.statements import user_statements
from ctxbudget.compaction.summarize import ExtractiveSummarizer, SummaryRequest
from ctxbudget.messages.tokens import CharCounter

USER = Message(role="user", content="The deploy target is eu-west-3 and the ticket is OPS-4411.", id="u1")
REPLY = Message(role="assistant", content="Noted: we deploy to eu-west-3 for OPS-4411.", id="a1")


def test_a_user_message_is_read_for_statements_once_in_the_tail_and_when_evicted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    original = user_statements

    def counted(text: str) -> object:
        calls.append(text)
        return original(text)

    monkeypatch.setattr(salience_module, "user_statements", counted)
    summarizer = ExtractiveSummarizer(CharCounter())
    summarizer.summarize(SummaryRequest(messages=(REPLY,), max_tokens=400, kept=(USER.text,)))  # in view
    assert calls == [USER.text]
    evicted = summarizer.summarize(
        SummaryRequest(messages=(USER, REPLY), max_tokens=400, handles={"u1": "ctxbudget://u1.truncated"})
    )
    assert calls == [USER.text]  # evicted later, under another handle: its statements are remembered
    fresh = ExtractiveSummarizer(CharCounter()).summarize(SummaryRequest(messages=(USER, REPLY), max_tokens=400))
    assert evicted == fresh


class _Halves(CharCounter):
    """Another counter: half the tokens of a CharCounter."""

    def count_text(self, text: str) -> int:
        return max(1, super().count_text(text) // 2)


def test_a_bullet_size_is_remembered_per_counter() -> None:
    memo = ReadMemo()
    text = "src/app/config.py: read, edited x2 -> " + "a long detail " * 40
    one = Ledger(CharCounter(), 400, memo=memo)
    assert one._size(text, 24) == bullet_size(CharCounter(), text, 24)
    other = Ledger(_Halves(), 400, memo=memo)  # the same memo, another counter: counted again with it
    assert other._size(text, 24) == bullet_size(_Halves(), text, 24)
    assert other._size(text, 24) != one._size(text, 24)


@pytest.mark.parametrize("lines", [40, 400, 4000])
def test_figure_lines_are_those_the_word_by_word_visit_takes(lines: int) -> None:
    # Many distinct candidate lines (each holds one figure word): past the cap on lines taken, the visit word by
    # word decides which are taken; under it, the first candidates that match.
    words = figures_module.FIGURE_WORDS
    text = "\n".join(f"step {i} took {i % 97} {words[i % len(words)]} here" for i in range(lines))
    found = figures_module.figure_lines(text)
    lower = text.lower()
    taken: dict[int, str] = {}
    for word in words:  # the visit as it reads: each word's first lines, until enough are taken
        position, seen = lower.find(word), 0
        while position >= 0 and seen < 48 and len(taken) < 4 * 48:
            start = lower.rfind("\n", 0, position) + 1
            stop = lower.find("\n", position)
            stop = len(lower) if stop < 0 else stop
            if start not in taken and stop - start < 200 and figures_module._FIGURE_LOWER.search(lower, start, stop):
                taken[start] = text[start:stop]
            seen += 1
            position = lower.find(word, stop)
    assert found == sorted(taken.items())[:48]
    assert found
