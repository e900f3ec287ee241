"""Exact spans a query names and the short forms an archive defines: code phrases and abbreviations.

* A **code phrase** is a run of a query's words joined by code punctuation (``_separable = True``,
  ``retries >= 3``, ``foo(bar)``) or quoted in backticks: an expression the question copies from code or a log.
  The words alone also occur apart (``_separable`` in every line that reads the flag, ``True`` anywhere); the
  expression occurs only where it was written, so a text holding it verbatim (whitespace aside) earns a bonus.
* An **abbreviation** is a short form an archived text defines beside its long form: ``Dallas/Fort Worth (DFW)``,
  ``Los Angeles (LAX)``, ``Kubernetes (K8S)``. Records and tool outputs use the short form (``"origin": "DFW"``);
  people ask with the long one ("the flight from Dallas"), so a query's long form also asks for the short form.

Both scan their text once (linear in its length). The archive package's only imports are its own modules.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence

from ._text import analyze

__all__ = [
    "MAX_ABBREVIATION_WORDS",
    "Abbreviation",
    "Abbreviations",
    "abbreviations",
    "add_best_forms",
    "code_pattern",
    "code_spans",
]

Abbreviation = tuple[tuple[str, ...], str]
"""A long form's index terms and its short form's term: ``(("los", "angel"), "lax")``."""

MAX_ABBREVIATION_WORDS = 4
"""Most words of a long form an abbreviation stands for."""

_CODE_GAP = r"(?:\s*[=<>!+*%&|^~]+\s*|[()\[\]{}]+)"
"""What joins two words of an expression: operators (spaces around them optional) or brackets (no spaces: in
``foo(bar) returns`` the expression is ``foo(bar``)."""
_CODE_WORD = r"\w+(?:[./\-]\w+)*"
_CODE_RUN = re.compile(f"{_CODE_WORD}(?:{_CODE_GAP}{_CODE_WORD})+")
_BACKTICKS = re.compile(r"`([^`\n]{3,120})`")
_WORDY = re.compile(r"\w")
_CHUNK = re.compile(r"\w+|[^\w\s]+")
_EDGE_BEFORE = r"(?<![^\W_])"
_EDGE_AFTER = r"(?![^\W_])"
_DEFINED = re.compile(rf"(?<![\w'.-])((?:[A-Z][\w'.-]*[ /]){{1,{MAX_ABBREVIATION_WORDS}}})\(([A-Z][A-Z0-9]{{1,5}})\)\Z")
"""Up to four capitalized words, a space, and an upper-case short form in parentheses: ``Los Angeles (LAX)``, at the
end of the text searched (the look-back before one code)."""
_CODE = re.compile(r"\([A-Z][A-Z0-9]{1,5}\)")
_LOOKBACK = 160
"""Characters before a code in parentheses searched for its long form."""


def code_spans(query: str) -> list[str]:
    """The query's code phrases, lower-cased, distinct, in order: the spans :func:`code_pattern` finds.

    A span is a run of words joined by operators or brackets (``_separable = True``), or a backtick-quoted span of
    two words or more. Nothing is compiled here: a search picks the spans it scans for first.
    """
    spans = [match.group(0) for match in _CODE_RUN.finditer(query)]
    spans += [quoted for quoted in _BACKTICKS.findall(query) if len(quoted.split()) >= 2]
    lowered = dict.fromkeys(span.lower() for span in spans)
    return [span for span in lowered if len(_CHUNK.findall(span)) >= 2]


def code_pattern(span: str) -> re.Pattern[str]:
    """A pattern that finds a code phrase (a span of :func:`code_spans`) in lower-cased text.

    It matches the span's words and symbols in order, whitespace between them optional (between two words
    required), bounded by non-word characters on both sides (``x = 1`` does not match ``x == 1`` or ``max = 10``).
    """
    chunks = _CHUNK.findall(span.lower())
    gaps = [r"\s+" if _WORDY.match(a[-1]) and _WORDY.match(b[0]) else r"\s*" for a, b in itertools.pairwise(chunks)]
    body = re.escape(chunks[0]) + "".join(gap + re.escape(chunk) for gap, chunk in zip(gaps, chunks[1:], strict=True))
    return re.compile(_EDGE_BEFORE + body + _EDGE_AFTER)


def abbreviations(text: str) -> list[tuple[str, str]]:
    """``(long form, short form)`` for each abbreviation ``text`` defines, both lower-cased.

    The long form is the run of capitalized words before the parenthesis from the last one that starts with the short
    form's first letter (``from Atlanta (ATL)`` -> ``atlanta``); none starting so, no abbreviation (``Chicago
    (ORD)``). Names joined by a slash are each a long form of it: ``Dallas/Fort Worth (DFW)`` gives ``dallas`` and
    ``fort worth``.
    """
    found = []
    for code in _CODE.finditer(text):  # a code in parentheses is rare: look back from each one only
        match = _DEFINED.search(text, max(0, code.start() - _LOOKBACK), code.end())
        if match is None:
            continue
        short = match.group(2)
        words = match.group(1).split()
        start = next((i for i in range(len(words) - 1, -1, -1) if words[i][0] == short[0]), None)
        if start is None:
            continue
        for name in " ".join(words[start:]).lower().split("/"):
            if name.strip() and name.strip() != short.lower():
                found.append((name.strip(), short.lower()))
    return found


class Abbreviations:
    """The abbreviations archived texts define, as index terms, looked up by a query's terms.

    Args:
        tokenizer: the index's (terms are analyzed as the index analyzes them).
    """

    def __init__(self, tokenizer: Callable[[str], list[str]]) -> None:
        self._tokenizer = tokenizer
        self._by_first: dict[str, list[Abbreviation]] = {}  # first term of a long form -> its abbreviations

    def learn(self, text: str) -> None:
        """Remember each abbreviation ``text`` defines (each once)."""
        for name, code in abbreviations(text):
            long = tuple(dict.fromkeys(analyze(self._tokenizer(name))))
            short = analyze(self._tokenizer(code))
            if not long or len(short) != 1 or short[0] in long:
                continue
            known = self._by_first.setdefault(long[0], [])
            if (long, short[0]) not in known:
                known.append((long, short[0]))

    def asked(self, terms: Iterable[str]) -> list[Abbreviation]:
        """The abbreviations whose every long-form term is among ``terms`` (a query's).

        ``dallas`` asks for ``dfw``; ``los`` alone does not ask for ``lax``.
        """
        held = list(dict.fromkeys(terms))
        return [found for term in held for found in self._by_first.get(term, ()) if set(found[0]) <= set(held)]


def add_best_forms(
    scores: dict[int, float], apart: dict[str, dict[int, float]], groups: Sequence[Abbreviation]
) -> None:
    """Add to ``scores`` each abbreviation's best form per unit: its short form's score or a long form's summed score.

    ``apart`` holds, per term of ``groups``, each unit's score for it. A text that defines a code holds both forms
    and counts as one of them, not both; a term shared by two abbreviations counts in the first.
    """
    counted: set[str] = set()
    for short in dict.fromkeys(short for _, short in groups):
        forms = [apart.get(short, {})] if short not in counted else []
        for long in dict.fromkeys(long for long, other in groups if other == short):
            named: dict[int, float] = {}
            for word in set(long) - counted:
                for unit, score in apart.get(word, {}).items():
                    named[unit] = named.get(unit, 0.0) + score
            forms.append(named)
            counted.update(long)
        counted.add(short)
        for unit in set().union(*forms):
            scores[unit] = scores.get(unit, 0.0) + max(form.get(unit, 0.0) for form in forms)
