"""Text analysis for the archive search: tokens, stopwords, light stemming, status lines, term patterns.

:func:`tokenize` splits text into identifier-aware tokens (lower-cased words, compounds such as paths and dotted
names kept whole, a path's suffixes, snake/camel parts). :func:`analyze` turns those tokens into index terms: function
and question words dropped (:data:`STOPWORDS`), plain words reduced by a light English stemmer (:func:`stem`:
``failed``, ``fails``, ``failing`` -> ``fail``), identifiers kept as they are. :func:`split_status` separates the
lines that report an outcome (errors, exit codes, HTTP status lines, ``"status"`` fields) so the index can weigh
them higher. Every function here costs time linear in its text; the query side is capped
(:data:`MAX_QUERY_CHARS`, :data:`MAX_QUERY_TERMS`) so a query's cost does not grow past the cap.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter, deque
from collections.abc import Callable, Iterable

from ._stem import stem

__all__ = [
    "ABBREVIATIONS",
    "CALL_TERM",
    "COUNT_TERM",
    "FAILURE_TERM",
    "FAILURE_WORDS",
    "FIX_WORDS",
    "MAX_PHRASE_WORDS",
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TERMS",
    "QUERY_STOPWORDS",
    "ROLE_TERMS",
    "STOPWORDS",
    "Tokenizer",
    "analyze",
    "cap_query",
    "failed",
    "negation",
    "phrase_pattern",
    "query_terms",
    "split_status",
    "stem",
    "term_counts",
    "term_pattern",
    "tokenize",
]

MAX_QUERY_CHARS = 2_000
"""Characters of a query that are read (cut at a space): a longer query costs what this prefix costs."""
MAX_QUERY_TERMS = 32
"""Distinct terms of a query that are scored (the first ones): the cap on a search's cost per archived text."""
MAX_PHRASE_WORDS = 8
"""A query of 2 to this many words also scores as a phrase; longer ones do not (no text is scanned for them)."""
_STATUS_WINDOWS = 32
"""Status windows kept from the head of a text, and as many from its tail (a traceback ends with its exception)."""
_STATUS_REACH = 160
"""Characters a status window reaches on each side of its keyword, within its line."""

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing done during each either else ever every few for from further
    get gets got had has have having he her here hers herself him himself his how i if in into is it its itself
    just let lets may me might mine more most must my myself no nor not now of on once only or other ought our
    ours ourselves own please same shall she should so some such than that the their theirs them themselves then
    there these they this those through to too until upon us very was we were what whatever when where whether
    which while who whom whose why will with within would yet you your yours yourself yourselves tell show find
    know remember earlier previously many much
    s t d m ll re ve don doesn didn isn wasn weren aren hasn haven hadn couldn shouldn wouldn won""".split()  # noqa: SIM905
)
"""Function words and question words: dropped from texts and queries, so they neither match nor score. The last
line is what tokenizing splits off possessives and contractions (``worktree's`` -> ``worktree``, ``s``; ``don't``
-> ``don``, ``t``): kept, ``s`` would match every ``Here's`` and ``it's`` in the archive."""
QUERY_STOPWORDS = frozenset(
    """first last later latest recent recently previous next exactly actually current currently still happen happened
    happens say said says told give gave see saw look looked need needed want wanted thing things anything
    something""".split()  # noqa: SIM905 - a word list reads better as text
)
"""Words that frame a question ("the first edit", "what happened") without naming what it is about: dropped from
queries only (a text that holds them is not penalized)."""
ABBREVIATIONS = {
    "production": "prod",
    "database": "db",
    "databases": "db",
    "configuration": "config",
    "repository": "repo",
    "repositories": "repo",
    "directory": "dir",
    "directories": "dir",
    "environment": "env",
    "environments": "env",
    "authentication": "auth",
    "dependency": "dep",
    "dependencies": "dep",
    "deps": "dep",
    "postgresql": "postgres",
    "kubernetes": "k8s",
}
"""Long forms read as the short form engineers write (``production database`` finds ``PROD_DSN``, ``db-prod-1``)."""
FAILURE_TERM = "~failure"
"""A term no tokenizer produces: held by texts whose outcome lines report a failure, asked for by a query that asks
why something failed or what went wrong (``why did the refund fail`` finds ``{"status": "error", ...}``)."""
ROLE_TERMS = {"user": "~user", "assistant": "~assistant"}
"""Terms no tokenizer produces, held by what the user said and what the assistant said: a question about what the
user asked or what the agent decided asks for them (``what did the user ask to add``)."""
_ROLE_WORDS = {"user": "~user", "users": "~user", "customer": "~user", "agent": "~assistant", "assistant": "~assistant"}
COUNT_TERM = "count"
"""What a question about a number asks for besides its own words (``how many loose objects`` finds ``count: 4553``
and ``count-objects``): tools and logs report numbers as counts."""
_HOW_MANY = re.compile(r"\bhow many\b")
CALL_TERM = "~call"
"""A term no tokenizer produces, held by every tool call: a question about how something was done ("how are the
skipping tests run", "how was the edit applied") asks for the command or call that did it, not for talk about it."""
_HOW_DONE = re.compile(r"\bhow (?:is|are|was|were|has|have|had|did)\b")
_FAILURE = re.compile(
    r"e(?:rror|xception|xit (?:code|status):? *[1-9])|traceback|f(?:ail|atal|orbidden)|panic|denied|refused|"
    r"reject|invalid|timed? ?out|not found|missing|unable|http/[\d.]+ [45]\d\d|status\W+[45]\d\d|"
    r"returncode> *-?[1-9]"
)
"""Outcome keywords that mean a failure, in lower-cased text."""

Tokenizer = Callable[[str], list[str]]
"""Text -> tokens; :func:`tokenize` is the default."""

_WORD = re.compile(r"\w+")
_RUN = re.compile(r"\d{1,3}(?:,\d{3})+(?![\d,])|\w+(?:[./@\-]+\w+)*")
"""A number written with thousands separators (``1,047``: read as ``1047``), a word, or an identifier-like compound of
words joined by ``. / @ -`` (a path, a dotted name, ``eu-west-3``)."""
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_EDGE_AFTER = r"(?![^\W_])"
_STATUS = re.compile(
    r"e(?:rror|xception|xit (?:code|status))|t(?:raceback|imed? ?out)|f(?:ail|atal|orbidden)|panic|denied|"
    r"re(?:fused|ject|try-after|turncode> *-?[1-9])|invalid|not found|missing|status|http/\d|[45]\d\d [a-z]{2}|"
    r"passed|succe(?:ed|ss)|warning"
)
"""Keywords of a line that reports an outcome, in lower-cased text (grouped by first letter: ``re`` scans it fast)."""
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens, identifier-like compounds kept whole, path suffixes, snake/camel parts.

    ``"See src/pkg_3/module_8.py in eu-west-3"`` gives the words (``see``, ``src``, ``pkg_3``, ...), the compounds
    ``src/pkg_3/module_8.py`` and ``eu-west-3``, the suffixes ``pkg_3/module_8.py`` and ``module_8.py``, and the
    parts ``pkg``, ``3``, ``module``, ``8``. Queries are tokenized the same way; :func:`analyze` then drops stopwords
    and stems.
    """
    runs = _RUN.findall(text)
    if "," in text:
        runs = [run.replace(",", "") if "," in run else run for run in runs]
    tokens = "\n".join(runs).lower().split("\n") if runs else []  # one C-level lower() for every run
    for run, count in Counter(runs).items():  # each distinct run is expanded once, its tokens repeated
        if not run.isalnum() or not (run.islower() or run.isupper() or run.isdigit()):  # plain words: nothing more
            tokens.extend(_expand(run) * count)
    return tokens


def _expand(run: str) -> list[str]:
    """The extra tokens of one run: a compound's words and path suffixes, and every word's snake/camel parts."""
    words = _WORD.findall(run)
    if len(words) == 1:
        return _parts(run)
    tokens = [word.lower() for word in words]
    if "/" in run:
        tokens.extend(_suffixes(run.lower()))
    for word in words:
        tokens.extend(_parts(word))
    return tokens


_SUFFIX_PARTS = 8
"""The most components of a path's tail indexed (``a/a/a/...`` of 50,000 parts is not 50,000 tails)."""


def _suffixes(compound: str) -> list[str]:
    """``a/b/c.py`` -> ``b/c.py``, ``c.py``: a path's tails, so a file is found by its name or partial path.

    The tails of at most :data:`_SUFFIX_PARTS` components: a deeper one is found by the whole path or a shorter tail.
    """
    parts = compound.split("/")
    first = max(1, len(parts) - _SUFFIX_PARTS)
    return [suffix for i in range(first, len(parts)) if _WORD.match(suffix := "/".join(parts[i:]))]


def _parts(word: str) -> list[str]:
    """The lower-cased parts of a snake_case or camelCase word (``pkg_3`` -> ``pkg``, ``3``); ``[]`` for others."""
    pieces = [piece for piece in word.split("_") if piece]
    parts: list[str] = []
    for piece in pieces:
        camel = piece.isascii() and not piece.isupper() and piece[1:] != piece[1:].lower()
        if camel:
            parts.extend(part.lower() for part in _CAMEL_PART.findall(piece))
        elif len(pieces) > 1 or piece != word:
            parts.append(piece.lower())
    return parts


FAILURE_WORDS = frozenset(
    stem(word)
    for word in """fail failure error wrong break broke broken crash reject forbidden deny denied refuse
    exception""".split()  # noqa: SIM905 - a word list reads better as text
)
"""Query terms that ask about a failure, and so also ask for :data:`FAILURE_TERM`: the words' stems, as a query's
terms are (``broke`` is ``brok``, ``denied`` is ``deni``)."""
FIX_WORDS = frozenset(stem(word) for word in "fix resolve solve repair workaround".split())  # noqa: SIM905
"""Query terms (stems) that ask what fixed something: the calls that fixed a failure answer them."""


_STEMS: dict[str, str] = {}
"""Stems of the words seen so far (bounded; words repeat a lot)."""


def _stemmed(token: str) -> str:
    found = _STEMS.get(token)
    if found is None:
        found = ABBREVIATIONS.get(token) or stem(token)
        if len(_STEMS) < 200_000:
            _STEMS[token] = found
    return found


def analyze(tokens: Iterable[str]) -> list[str]:
    """Index terms of ``tokens``: stopwords dropped, plain words stemmed (:func:`stem`), the rest unchanged."""
    return [_stemmed(token) for token in tokens if token not in STOPWORDS]


def term_counts(tokens: Iterable[str]) -> Counter[str]:
    """:func:`analyze` as counts: each distinct token is looked at once, however often it occurs."""
    counts: Counter[str] = Counter()
    for token, count in Counter(tokens).items():
        if token not in STOPWORDS:
            counts[_stemmed(token)] += count
    return counts


def cap_query(query: str) -> str:
    """The part of ``query`` that is read: at most :data:`MAX_QUERY_CHARS` chars, cut at a space when one is near."""
    if len(query) <= MAX_QUERY_CHARS:
        return query
    head = query[:MAX_QUERY_CHARS]
    space = head.rfind(" ", MAX_QUERY_CHARS // 2)
    return head[:space] if space > 0 else head


_QUERY_STOP_STEMS = QUERY_STOPWORDS | {stem(word) for word in QUERY_STOPWORDS}
"""Framing words as index terms, in any inflection: ``give``, ``gives`` and ``giving`` stem to ``giv``, which the
list itself does not hold."""


def query_terms(query: str, tokenizer: Tokenizer) -> list[str]:
    """The distinct index terms of a query, in order, at most :data:`MAX_QUERY_TERMS` (from :func:`cap_query`).

    Beyond :func:`analyze`: question-framing words are dropped (:data:`QUERY_STOPWORDS`), two adjacent words are
    also tried joined (``rolled back`` -> ``rollback``, ``health check`` -> ``healthcheck``) and as a snake_case name
    (``item id`` -> ``item_id``), a question about a failure asks for :data:`FAILURE_TERM` and for ``fail`` (the
    word the archive uses, whichever the question does: ``what broke``), and a ``how many`` question for
    :data:`COUNT_TERM`.
    """
    capped = cap_query(query)
    terms = dict.fromkeys(t for t in analyze(tokenizer(capped)) if t not in _QUERY_STOP_STEMS)
    lower = capped.lower()
    words = [w for w in _WORD.findall(lower) if w not in STOPWORDS and _stemmed(w) not in _QUERY_STOP_STEMS]
    for left, right in itertools.islice(itertools.pairwise(words), MAX_QUERY_TERMS):
        terms.setdefault(left + right)
        terms.setdefault(_stemmed(left) + right)
        for joined in _snake(left, right):
            terms.setdefault(joined)
    if FAILURE_WORDS.intersection(terms):
        terms.setdefault(FAILURE_TERM)
        terms.setdefault("fail")
    if _HOW_MANY.search(lower):
        terms.setdefault(COUNT_TERM)
    if _HOW_DONE.search(lower):
        terms.setdefault(CALL_TERM)
    for word in words:
        role = _ROLE_WORDS.get(word)
        if role is not None:
            terms.setdefault(role)
    return list(itertools.islice(terms, MAX_QUERY_TERMS))


def _snake(left: str, right: str) -> tuple[str, str]:
    """Two words as the snake_case name they may be, singular and plural (``payment_method``, ``payment_methods``).

    A record's keys and a program's names write a thing so (``"payment_methods": {...}``, ``"item_id"``); the words
    apart also occur in every field that shares one of them (``payment_method_id``).
    """
    other = right[:-1] if right.endswith("s") and not right.endswith("ss") else f"{right}s"
    return f"{left}_{right}", f"{left}_{other}"


def negation(term: str) -> str | None:
    """The ``un-`` form of a plain-word term, or the word an ``un-`` term negates (``install`` <-> ``uninstall``).

    A question about a state ("is the package still installed", "which files are tracked") is answered as often by
    the text that reversed it (``Successfully uninstalled``, ``Untracked files:``) as by the one that set it, so a
    query also asks for the other form, at a lower weight (``ArchiveIndex.search``). ``None`` for ids, numbers and
    ``un`` words too short to hold a word of their own (``unit``, ``under``, ``union``).
    """
    if not term.isalpha() or not term.isascii():
        return None
    if term.startswith("un"):
        return term[2:] if len(term) >= 7 else None
    return "un" + term


def failed(status: str) -> bool:
    """Whether outcome lines (lower-cased or not) report a failure."""
    return _FAILURE.search(status.lower()) is not None


def split_status(text: str) -> tuple[str, str]:
    """``(status, rest)``: the windows of ``text`` around outcome keywords, and everything else.

    A window is the keyword's line, at most :data:`_STATUS_REACH` characters each side of the keyword; the first and
    the last :data:`_STATUS_WINDOWS` windows are kept (one pass over the text, whatever its size). Each character of
    ``text`` is in exactly one of the two parts.
    """
    head: list[tuple[int, int]] = []
    tail: deque[tuple[int, int]] = deque(maxlen=_STATUS_WINDOWS)
    end = 0
    lower = text.lower()
    if len(lower) != len(text):  # a few letters lower-case to two characters: fold ASCII only, offsets kept
        lower = text.translate(_ASCII_LOWER)
    for match in _STATUS.finditer(lower):
        if match.start() < end:
            continue  # inside the window already taken
        start = max(text.rfind("\n", 0, match.start()) + 1, match.start() - _STATUS_REACH, end)
        stop = text.find("\n", match.end())
        stop = min(len(text) if stop < 0 else stop, match.end() + _STATUS_REACH)
        (head if len(head) < _STATUS_WINDOWS else tail).append((start, stop))
        end = stop
    if not head:
        return "", text
    windows = [*head, *tail]
    status = "\n".join(text[a:b] for a, b in windows)
    edges = [0, *itertools.chain.from_iterable(windows), len(text)]
    rest = "\n".join(text[edges[i] : edges[i + 1]] for i in range(0, len(edges), 2))
    return status, rest


def _literal(term: str) -> str:
    """A pattern for ``term`` not preceded by a letter or digit; it starts with the literal, so ``re`` scans fast."""
    escaped = re.escape(term)
    return f"{escaped}(?<![^\\W_]{escaped})"


def phrase_pattern(query: str) -> tuple[tuple[str, ...], re.Pattern[str]] | None:
    """A query of 2..:data:`MAX_PHRASE_WORDS` words as a phrase: its words, and a pattern for lower-cased text.

    The words must appear in order, apart only by punctuation. ``None`` for fewer or more words: a long natural
    question is not expected verbatim, and matching one would cost the text times its words.
    """
    words = _WORD.findall(cap_query(query).lower())
    if not 2 <= len(words) <= MAX_PHRASE_WORDS:
        return None
    pattern = re.compile(_literal(words[0]) + "".join(r"[\W_]+" + re.escape(word) for word in words[1:]) + _EDGE_AFTER)
    return tuple(dict.fromkeys(words)), pattern


def term_pattern(term: str, flags: int = 0) -> re.Pattern[str]:
    """Where ``term`` occurs: a stem also matches its inflections (``fail`` matches ``failed``, ``failure``)."""
    inflected = r"[a-z]{0,4}" if term.isalpha() and term.isascii() else ""
    return re.compile(_literal(term) + inflected + _EDGE_AFTER, flags)
