"""Questions about order: which of several runs of one command a question asks about.

An agent runs one command several times: ``python reproduce_issue.py`` fails on a missing module, is run again after
``pip install -e .`` and fails on the bug, and passes after the fix. The runs share their command, so a question
about "the script" matches each of them; which one it asks about, its words say: "why did the script *first* fail"
asks for the earliest run, "what does it report *now*" or "is it *still* installed" for the latest.
:func:`order_asked` reads that from the question; :func:`order_runs` gives the best score among a command's runs to
the earliest (or latest) run like the best one, whose output holds every query term the best one's output holds (a
run that failed, when the best one failed), and the two trade scores; the other like runs of the very same command
(``cat src/sqlfluff/rules/L060.py`` three times, between edits) drop out, so they do not fill the top ``k`` with
what the question says it does not ask. A question without order words, or a unit with no other run, ranks as
before.

"After" and "before" are no order words: "which test failed after the signature change" asks for the run right
after an event the question names, not for the latest run.

Runs of one command are calls of the same tool whose words as written overlap as a re-run's do
(:data:`~ctxbudget.archive._units.RETRY_OVERLAP`, :attr:`~ctxbudget.archive._units.Unit.command`): ``pytest ... -k
L060 -xvs | head -30`` and ``pytest ... -k L060 -x | tail -5`` are one test run repeated; ``cat src/a.py`` and
``git diff src/a.py`` are not, though they share a path. Each run is in one group: the first best unit's. Which run
came first is the order their calls were archived in (:attr:`~ctxbudget.archive._units.Unit.made`).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from ._fixes import overlap
from ._text import cap_query
from ._units import RETRY_OVERLAP, UnitTable

__all__ = ["EARLY", "LATE", "order_asked", "order_runs"]

EARLY = frozenset("first firstly initially initial originally original".split())  # noqa: SIM905 - a word list
"""Words that ask for the earliest of several runs."""
LATE = frozenset("now still latest last final finally currently anymore".split())  # noqa: SIM905 - a word list
"""Words that ask for the latest of several runs."""
_WORD = re.compile(r"\w+")
_EVENT = re.compile(r"\b(?:after|before|since|until)\s+(?:(?:the|its|their|my|our|his|her|that)\s+)?\w+\b")
""""after the first fix", "before the last edit": the order word there names the event, not the run asked for."""
_CANDIDATES = 3
"""Best units (times ``k``) whose runs are looked for: only they can reach the top ``k``."""


def order_asked(query: str) -> int:
    """``-1`` when ``query`` asks for the earliest run, ``1`` for the latest, ``0`` for neither (or both).

    An order word that names the event the question places the run by is not asked of the run: "what error remained
    after the *first* fix" asks for the run after that fix, not for the earliest run.
    """
    words = set(_WORD.findall(_EVENT.sub(" ", cap_query(query).lower())))
    early, late = not EARLY.isdisjoint(words), not LATE.isdisjoint(words)
    return (1 if late else -1) if early != late else 0


def order_runs(scores: dict[int, float], table: UnitTable, terms: Collection[str], direction: int, k: int) -> None:
    """Give the best score of each command's runs to its earliest (``direction`` -1) or latest (1) like run.

    A run is like the best one when its output holds every query term (of ``terms``) the best one's output holds:
    "why did the script first fail" may mean any run that failed, not one that passed. Only the runs of the best
    ``_CANDIDATES * k`` units are looked for, among the scored calls of the same tool (a pass over the scored
    units, and a word-set comparison per call of that tool).
    """
    units = table.units
    by_tool: dict[str, list[int]] = {}
    for unit in scores:
        call = units[unit].call
        if call is not None:
            by_tool.setdefault(call.name, []).append(unit)
    best = sorted(scores, key=lambda unit: (-scores[unit], unit))[: _CANDIDATES * k]
    done: set[int] = set()
    for unit in best:
        call = units[unit].call
        if unit in done or call is None:
            continue
        words = units[unit].command
        runs = [
            other
            for other in by_tool[call.name]
            if other == unit or (other not in done and overlap(units[other].command, words) >= RETRY_OVERLAP)
        ]
        done.update(runs)
        shown = _output(table, unit)
        needed = [term for term in terms if term in shown]
        like = [run for run in runs if all(term in _output(table, run) for term in needed)]
        chosen = max(like, key=lambda run: direction * units[run].made)
        if chosen != unit:
            scores[unit], scores[chosen] = scores[chosen], scores[unit]
        same = units[chosen].call
        for run in like:  # the same command run again: the question asks for the one run, not the others
            other = units[run].call
            if run != chosen and same is not None and other is not None and other.args == same.args:
                del scores[run]


def _output(table: UnitTable, unit: int) -> Collection[str]:
    """The terms of ``unit``'s result (none when it has none archived)."""
    key = table.units[unit].result
    part = table.units[unit].parts.get(key) if key is not None else None
    return part.counts if part is not None else ()
