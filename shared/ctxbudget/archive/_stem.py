"""A light English stemmer for the archive search: a word and its plural, past and ``-ing`` forms meet.

``failed`` / ``fails`` / ``failing`` are one term (``fail``), ``pointer`` and ``points`` another (``point``): the
words of a question and of the text it asks about rarely share their endings.
"""

from __future__ import annotations

__all__ = ["stem"]

_VOWELS = frozenset("aeiouy")


def stem(word: str) -> str:
    """A light English stem of a lower-case word: plural ``-s``/``-es``/``-ies``, ``-ed``, ``-ing``, ``-er``, an ``-e``.

    ``failed``/``fails``/``failing`` -> ``fail``, ``retries`` -> ``retry``, ``created``/``create`` -> ``creat``,
    ``stopped`` -> ``stop``, ``pointer``/``points`` -> ``point``, ``handler``/``handle`` -> ``handl``; words of 3
    letters or fewer, and anything not purely alphabetic (ids, paths, numbers), are returned unchanged.
    """
    if len(word) <= 3 or not word.isalpha() or not word.isascii():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith(("ing", "ed")):
        base = word[:-3] if word.endswith("ing") else word[:-2]
        if len(base) < 3 or not _VOWELS.intersection(base):
            return _final_e(word[:-1]) if word.endswith("ed") and len(base) == 2 else word  # used -> use
        return _final_e(_agent(_undouble(base)))
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return _final_e(_agent(word))


def _undouble(base: str) -> str:
    """``stopp`` -> ``stop``; ``fall``, ``pass``, ``buzz`` stay."""
    return base[:-1] if base[-1] == base[-2] and base[-1] not in "lsz" else base


def _agent(word: str) -> str:
    """An ``-er`` noun as its verb (``pointer`` -> ``point``, ``handler`` -> ``handl``, ``wrapper`` -> ``wrap``).

    A ``.git pointer file`` is found by asking where the file points. Only when at least four letters with a vowel
    remain, so ``user``, ``order``, ``power`` and ``never`` stay whole.
    """
    base = word[:-2]
    if not word.endswith("er") or len(base) < 4 or not _VOWELS.intersection(base):
        return word
    return _undouble(base)


def _final_e(word: str) -> str:
    return word[:-1] if word.endswith("e") and len(word) > 3 else word
