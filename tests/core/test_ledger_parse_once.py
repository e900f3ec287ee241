"""A bullet kept from summary to summary is classified once per session: parsing the next summary reads only what
is new in it, and what it reads is what a fresh parse reads."""

from __future__ import annotations

import pytest
from ctxbudget.compaction import _ledger_text
from ctxbudget.compaction.memo import ReadMemo

FIRST = "## User facts and constraints\n- The staging db lives at db-stg-4.internal:5433.\n- Marta signs off."
SECOND = FIRST + "\n- Keep the pipe delimiter.\n\n## Decisions\n- Use the replica."


def test_a_bullet_of_an_earlier_summary_is_classified_once(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    classify = _ledger_text.classify

    def counting(text: str) -> object:
        seen.append(text)
        return classify(text)

    monkeypatch.setattr(_ledger_text, "classify", counting)
    memo = ReadMemo()
    _ledger_text.parse_ledger(FIRST, memo=memo)
    assert len(seen) == 2
    _ledger_text.parse_ledger(SECOND, memo=memo)
    assert seen[2:] == ["Keep the pipe delimiter."]  # only the new fact is read


def test_a_remembered_parse_is_the_fresh_parse() -> None:
    memo = ReadMemo()
    _ledger_text.parse_ledger(FIRST, memo=memo)
    assert _ledger_text.parse_ledger(SECOND, memo=memo) == _ledger_text.parse_ledger(SECOND)
