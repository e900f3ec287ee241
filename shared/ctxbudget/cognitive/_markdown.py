"""Markdown sections and a small deterministic lexical search, for the reference folder provider.

A document is split at ATX headings (``#`` .. ``######``, outside fenced code blocks). Each section is its
heading line plus the text up to the next heading; text before the first heading is a section headed by the file
name. A section's paragraphs are its blank-line-separated blocks, the heading line being the first. A query's
terms are its lowercase words of two or more characters, minus a few stop words; a paragraph matches when it
contains a term. A section's score counts term occurrences, heading occurrences twice.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .validation import MAX_HEADING_BYTES

__all__ = ["Section", "heading_text", "query_terms", "split_sections", "utf8_prefix"]

_OPENING = re.compile(r" {0,3}#{1,6}(?=[ \t]|\Z)")
_BLANKS = " \t"
_FENCE = re.compile(r" {0,3}(```|~~~)")
_WORD = re.compile(r"\w+")
_STOP_WORDS_TEXT = (
    "a an and are as at be by do does for from how i in is it of on or the to what when where which who why with"
)
_STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())


@dataclass(frozen=True)
class Section:
    """One heading's section of one document."""

    path: str
    index: int
    heading: str
    text: str
    paragraphs: tuple[str, ...]

    def score(self, terms: frozenset[str]) -> int:
        """Count the occurrences of ``terms``; words of the heading line count twice."""
        total = 0
        for position, paragraph in enumerate(self.paragraphs):
            weight = 2 if position == 0 else 1
            total += weight * sum(1 for word in _words(paragraph) if word in terms)
        return total

    def matching_paragraphs(self, terms: frozenset[str]) -> list[str]:
        """Return the paragraphs that contain at least one of ``terms``."""
        return [paragraph for paragraph in self.paragraphs if terms.intersection(_words(paragraph))]


def _words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def query_terms(query: str) -> frozenset[str]:
    """Return the searchable terms of ``query``: lowercase words of 2+ characters that are not stop words."""
    return frozenset(word for word in _words(query) if len(word) >= 2 and word not in _STOP_WORDS)


def utf8_prefix(text: str, max_bytes: int) -> str:
    """Return the longest prefix of ``text`` whose UTF-8 encoding is at most ``max_bytes`` (never a cut char)."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[:max_bytes].decode("utf-8", errors="ignore")


def heading_text(line: str) -> str | None:
    """Return the raw text of an ATX heading line, or ``None`` when ``line`` is not one.

    A heading line is up to three spaces, one to six ``#``, then the end of the line or a space or tab. Its text
    is the rest without the spaces and tabs around it and without a closing run of ``#`` that follows a space or
    tab (``# a #`` is ``a``, ``# a#`` is ``a#``). String methods only, so the time is linear in the line (a regex
    with a lazy group before optional trailing blanks backtracks quadratically on a long run of inner spaces).
    """
    opening = _OPENING.match(line)
    if opening is None:
        return None
    text = line[opening.end() :].strip(_BLANKS)
    body = text.rstrip("#")
    if len(body) < len(text) and body.endswith(tuple(_BLANKS)):
        return body.rstrip(_BLANKS)
    return text


def _clean_heading(raw: str, fallback: str) -> str:
    text = "".join(" " if unicodedata.category(char) == "Cc" else char for char in raw)
    text = utf8_prefix(" ".join(text.split()), MAX_HEADING_BYTES).strip()
    return text or fallback


def _section(path: str, index: int, heading: str, lines: list[str]) -> Section | None:
    text = "\n".join(lines).strip()
    if not text:
        return None
    paragraphs = tuple(block.strip() for block in re.split(r"\n[ \t]*\n", text) if block.strip())
    return Section(path=path, index=index, heading=heading, text=text, paragraphs=paragraphs)


def split_sections(path: str, text: str) -> list[Section]:
    """Split a Markdown document into its heading sections, in document order.

    Args:
        path: the document's relative path (used as the heading of text before the first heading).
        text: the Markdown.

    Returns:
        The non-empty sections.
    """
    fallback = path.rsplit("/", 1)[-1]
    sections: list[Section] = []
    heading, fenced = fallback, False
    lines: list[str] = []
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        raw = None if fenced else heading_text(line)
        if raw is not None:
            section = _section(path, len(sections), heading, lines)
            sections.extend([section] if section is not None else [])
            heading, lines = _clean_heading(raw, fallback), []
        lines.append(line)
    section = _section(path, len(sections), heading, lines)
    sections.extend([section] if section is not None else [])
    return sections
