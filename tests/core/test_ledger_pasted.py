"""What the user pasted is not what they said: a harness's instruction template (mini-swe-agent's first message: a
PR description and a hundred lines of rules) must not fill "User facts and constraints" at a tight budget while the
errors and commands of the work drop out.

The statements read out of a paste are written nested under the paste's own bullet, read back with it, worth less
after the best of them, and have no share of the budget reserved for what the user said.
"""

from __future__ import annotations

from ctxbudget.compaction._ledger_select import Scored, Selection, _diminished
from ctxbudget.compaction._ledger_text import NESTED, parse_ledger, render_ledger
from ctxbudget.compaction.memo import ReadMemo
from ctxbudget.compaction.salience import Salient
from ctxbudget.compaction.textscan import informative_tokens
from ctxbudget.messages import TiktokenCounter

PASTE = "User pasted 116 lines, 5,255 chars, starting: <pr_description> (full text: ctx://archive/goal-1)"
RULES = [
    "Avoid interactive tools like vi, nano, or any that require user input",
    "Always use non-interactive flags (-y, -f) for commands",
    "Directory or environment variable changes are not persistent.",
    "Every action is executed in a new subshell.",
    "You have a full Linux shell environment",
    "You can also create new tools or scripts to help you with the task",
    "You can make MULTIPLE tool calls in a single response when the commands are independent.",
    "When you've completed your work, you MUST submit your changes as a git patch.",
]


def _item(kind: str, text: str, order: int, key: str | None = None) -> Salient:
    return Salient(kind, text, key, order, informative_tokens(text))  # type: ignore[arg-type]


def _pasted(order: int = 0) -> list[Salient]:
    return [*(_item("constraint", rule, order) for rule in RULES), _item("paste", PASTE, order)]


def test_a_pastes_statements_are_nested_under_its_bullet_and_read_back_with_it() -> None:
    typed = _item("constraint", "Never push to main without a review.", 3)
    text = render_ledger([*_pasted(), typed], None, None)
    lines = text.splitlines()
    assert lines[1] == f"- {PASTE}"  # the paste first, though its statements were read before it
    assert lines[2 : 2 + len(RULES)] == [NESTED + rule for rule in RULES]
    assert lines[2 + len(RULES)] == f"- {typed.text}"  # a statement the user typed is a bullet of its own
    for memo in (None, ReadMemo()):
        read = parse_ledger(text, memo=memo)
        paste = next(item for item in read if item.kind == "paste")
        nested = [item for item in read if item.text in RULES]
        assert [item.text for item in nested] == RULES
        assert {item.order for item in nested} == {paste.order}  # grouped with the paste, as when first read
        assert next(item for item in read if item.text == typed.text).order != paste.order
        assert render_ledger(read, None, None) == text  # a ledger read back is written the same


def test_a_nested_bullet_without_a_paste_above_is_a_statement_of_its_own() -> None:
    """Indentation alone groups nothing: only the bullets right under a paste's bullet are read as from it."""
    text = "## User facts and constraints\n- Use port 5434.\n  - The staging db is db-stg-4.\n- Marta signs off."
    read = parse_ledger(text)
    assert len({item.order for item in read}) == 3


def test_a_pastes_statements_are_worth_less_after_the_best_of_them() -> None:
    scored = [Scored(item, value, 10) for item, value in zip(_pasted()[:3], (4.0, 8.0, 2.0), strict=True)]
    paste = Scored(_pasted()[-1], 3.0, 20)
    typed = [Scored(_item("constraint", f"Rule {n} the user typed.", n + 1), 4.0, 10) for n in range(3)]
    values = [entry.value for entry in _diminished([*scored, paste, *typed])]
    assert values == [4.0 / 2, 8.0, 2.0 / 3, 3.0, 4.0, 4.0, 4.0]


def test_at_a_tight_budget_a_pasted_template_does_not_crowd_out_the_errors() -> None:
    counter = TiktokenCounter()
    errors = [
        _item("error", "bash: python -m pytest tests -> /usr/bin/python: No module named pytest", 5, key="bash: a"),
        _item("error", "bash: python -c 'import django' -> ModuleNotFoundError: No module named 'sqlparse'", 7, "b"),
    ]
    selection = Selection(counter, max_tokens=160, max_items=None, bonus=lambda item: 0.0)
    kept = [entry.item.text for entry in selection.select([*_pasted(), *errors], None, None)]
    assert all(error.text in kept for error in errors)
    assert PASTE in kept
    assert sum(rule in kept for rule in RULES) < len(RULES)
    # With room, nothing is dropped: the template's rules are all kept.
    roomy = Selection(counter, max_tokens=2_000, max_items=None, bonus=lambda item: 0.0)
    assert all(rule in [e.item.text for e in roomy.select([*_pasted(), *errors], None, None)] for rule in RULES)
