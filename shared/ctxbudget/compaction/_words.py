"""Content words: the stop words that carry no subject, and the light stemming that makes two forms one word.

A statement's *subject words* are its content words (:func:`run_words` of each run), lower-cased and stemmed
(``owners`` and ``owns`` are ``own``): two statements about the same thing share them.
"""

from __future__ import annotations

import re

__all__ = ["STOP_WORDS", "run_words", "stem"]

_WORDS = re.compile(r"[A-Za-z]+")
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "by",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "i",
        "you",
        "we",
        "he",
        "she",
        "they",
        "me",
        "my",
        "our",
        "your",
        "their",
        "them",
        "him",
        "her",
        "us",
        "please",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "just",
        "also",
        "then",
        "than",
        "so",
        "if",
        "not",
        "no",
        "yes",
        "ok",
        "okay",
        "do",
        "does",
        "did",
        "done",
        "doing",
        "have",
        "has",
        "had",
        "having",
        "let",
        "lets",
        "get",
        "got",
        "make",
        "made",
        "now",
        "next",
        "here",
        "there",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "how",
        "when",
        "where",
        "why",
        "all",
        "any",
        "some",
        "more",
        "most",
        "very",
        "into",
        "onto",
        "over",
        "under",
        "about",
        "after",
        "before",
        "again",
        "only",
        "own",
        "same",
        "too",
        "up",
        "down",
        "out",
        "off",
        "each",
        "few",
        "other",
        "such",
        "both",
        "am",
        "being",
        "one",
        "two",
        "via",
        "per",
        "there's",
        "it's",
        "i'm",
        "i'll",
        "we'll",
        "you're",
        "that's",
        "let's",
        "don't",
        "doesn't",
        "didn't",
        "can't",
        "won't",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "hasn't",
        "haven't",
        "hadn't",
        "i'd",
        "we're",
        "they're",
        "thanks",
        "thank",
        "hi",
        "hello",
        "hey",
        "sure",
        "well",
        "going",
        "want",
        "need",
        "like",
        "still",
        "really",
        "actually",
        "quick",
    ]
)
"""Function words, question words and filler: they carry no subject and never score a search."""


def run_words(run: str) -> list[str]:
    """The stemmed content words of one run: letters only, three to forty of them, not stop words, not acronyms."""
    out = []
    for word in _WORDS.findall(run):
        lower = word.lower()
        if 3 <= len(lower) <= 40 and lower not in STOP_WORDS and not (word.isupper() and len(word) > 1):
            out.append(stem(lower))
    return out


def stem(word: str) -> str:
    """A light, deterministic stem of a lower-cased word: plurals, ``-ing``, ``-ed``, ``-ly`` and ``-er`` removed."""
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "ches", "shes", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix, minimum in (("ing", 6), ("ed", 5), ("ly", 6), ("er", 6)):
        if word.endswith(suffix) and len(word) >= minimum and word[-len(suffix) - 1] != "e":
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word
