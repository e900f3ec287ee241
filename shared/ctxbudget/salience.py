"""What carries information in a transcript, found without a model.

Each message of an evicted span yields :class:`Salient` items: what the user stated (facts, constraints and
preferences, requests), what the assistant decided or left open, each tool call with its outcome, file paths and
figures reported inside tool outputs (wherever they sit in the output), and errors from tool results that really
failed. A failure is read from the result's structure (an error status, a leading ``Error:`` line, a traceback's
final exception line, a non-zero exit code, a test summary with failures), never from words that merely appear in
file contents, so ``raise RuntimeError`` inside a file that was read is not reported as an error.

Items carry a supersession key (a later item with the same key replaces an earlier one: the deploy region stated
twice, the same file written twice) and the informative tokens they hold (identifiers, paths, numbers), which the
ledger ranks by rarity within the session.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from .messages import Message, ToolCall

__all__ = [
    "SalienceKind",
    "Salient",
    "failure_line",
    "informative_tokens",
    "item_key",
    "key_lines",
    "salient_items",
]

SalienceKind = Literal[
    "fact", "constraint", "request", "decision", "note", "open", "command", "call", "artifact", "figure", "error"
]
"""What an item records; the ledger files each kind under one section."""

_PATH = re.compile(
    r"(?<![\w/.-])(?:~?/)?(?:[\w.-]+/)+[\w.-]*\w\.\w{1,8}\b"
    r"|(?<![\w/.-])[\w-]+\.(?:py|pyi|js|jsx|ts|tsx|go|rs|java|kt|rb|php|cs|c|h|cc|cpp|hpp|md|rst|json|ya?ml|toml"
    r"|cfg|ini|txt|csv|sql|sh|html|css|lock|env|ipynb|proto|tf|xml)\b"
)
_IDENT = re.compile(r"[A-Za-z_][\w.:/-]*\d[\w.:/-]*|\d+[A-Za-z_][\w.-]*|[A-Z]{2,}[\w-]*|[\w-]+@[\w.-]+|https?://\S+")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])")
_FIGURE = re.compile(
    r"[$€£]\s?\d[\d,]*(?:\.\d+)?|(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:ms|µs|us|ns|s|sec|secs|seconds?|minutes?|mins?|h|hours?|%|kb|mb|gb|tb|kib|mib"
    r"|gib|rps|qps|req/s|tokens?|passed|failed|errors?|warnings?|skipped|rows?|items?|files?|lines?|bytes|x)\b"
    r"|\b(?:p\d{2}|latency|throughput|coverage|total|count|size|memory|cpu|duration|score|accuracy|rate)\b"
    r"[\w ]{0,24}?[:=]?\s?\d[\d,]*(?:\.\d+)?",
    re.IGNORECASE,
)
_FIGURE_LOWER = re.compile(_FIGURE.pattern)
"""``_FIGURE`` for lower-cased text."""
_WORD = re.compile(r"\w+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(\[])|\n+")
_CONSTRAINT = re.compile(
    r"\b(never|always|must(?:n't| not)?|do not|don't|dont|cannot|can't|can not|avoid|only use|prefer|preferably|"
    r"preference|instead of|"
    r"rather than|use [^.]{1,60}?, not|"
    r"not allowed|make sure|required|requirement|should(?:n't| not)?|no more than|at most|at least|without|"
    r"keep .{1,30} under)\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(decision|decided|decide|we will|we'll|i will|i'll|we need to|we should|going with|go with|chose|choose|"
    r"opted|plan is|"
    r"switch(?:ed|ing)? to|agreed|settled on|conclusion|root cause)\b",
    re.IGNORECASE,
)
_OPEN = re.compile(
    r"\b(todo|to do|next step|next,? i|still need|remaining|open question|follow[- ]up|blocked|pending|not yet)\b",
    re.IGNORECASE,
)
_RELATION = re.compile(r"\b(is|are|was|=|equals|set to|uses?|runs? on|lives? (?:at|in))\b|:\s*\S", re.IGNORECASE)
_LABEL = re.compile(r"^\s*([A-Za-z][\w-]{0,30}(?:[ -]\d+)?)(?:\s+(?:update|correction|change|fix|amended))?\s*:")
_SUBJECT = re.compile(
    r"\b(?:the|our|my|a)\s+([a-z][a-z0-9 _-]{1,40}?)\s+(?:is|are|was|should be|will be|=|has been|becomes)\b",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(
    r"^(?:please|pls|can you|could you|would you|let's|lets|now|next|then|also|and|ok|okay|go ahead|try|"
    r"write|add|fix|run|check|look|make|update|implement|refactor|investigate|find|create|remove|delete|rename|move|"
    r"continue|review|explain|show|tell|help|start|stop|test|debug|read|open|search|use|set|change|improve|clean|"
    r"migrate|deploy|ship|merge|rebase|bump|upgrade|document|summarize|compare|split|annotate|type-annotate|"
    r"optimi[sz]e|profile|benchmark|port|convert|extract|inline|simplify|rewrite|trace|reproduce|audit|verify|"
    r"ensure|handle|wire|hook|replace|drop|split|profile|measure|write up)\b",
    re.IGNORECASE,
)
_RECORD = re.compile(r"""^\s*["']?([A-Za-z][\w .-]{1,40}?)["']?\s*[:=]\s*["']?([^"'{}\[\]]{1,100}?)["']?,?\s*$""")
_SHELL_ARGS = frozenset({"command", "cmd", "script", "shell", "argv", "commands", "code"})
"""Argument names that make a tool call a command run (its exact text matters), not a lookup."""
_CANDIDATE = re.compile(r"[\d.]")  # every path has a dot, every figure and record value a digit
_REFERENCE = re.compile(r"\.\w{1,8}(?::\d+|::)")
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}(?:t[\d:.]+z?)?$")
# Read from a line lower-cased once (``_scan_output`` runs them on every line of long outputs): a word set and
# case-sensitive patterns are several times faster than IGNORECASE alternations, with the same matches on ASCII.
_OUTCOME_WORDS = frozenset(
    [
        "failed",
        "failure",
        "error",
        "errors",
        "passed",
        "succeeded",
        "success",
        "unchanged",
        "skipped",
        "circular",
        "missing",
        "conflict",
        "rejected",
        "reverted",
        "ok",
    ]
)
_OUTCOME_PHRASE = re.compile(r"\b(?:timed out|not found)\b")
_WRITE_VERBS = frozenset(
    [
        "wrote",
        "written",
        "write",
        "created",
        "create",
        "modified",
        "modify",
        "updated",
        "update",
        "edited",
        "edit",
        "changed",
        "deleted",
        "removed",
        "renamed",
        "moved",
        "added",
        "patched",
        "saved",
        "generated",
        "applied",
    ]
)
_LEADING_ERROR = re.compile(
    r"^\s*(?:error|fatal|panic|exception|failed|failure)(?:\[[\w-]+\])?\s*[:!]"
    r"|^\s*(?:[\w.]+(?:Error|Exception)|Traceback \(most recent call last\))\b",
    re.IGNORECASE,
)
_REPORTED_ERROR = re.compile(r"^\W{0,3}(?:[A-Z]\d{3,4}\s+)?[\w.]*(?:Error|Exception):\s")  # "- E999 SyntaxError: x"
_EXCEPTION_LINE = re.compile(r"^\s*[\w.]*(?:Error|Exception|Exit|Interrupt|Failure)\b(?::.*)?$")
_EXIT = re.compile(
    r"\b(?:exit(?:ed)?(?: with)?(?: code| status)?|return ?code|returncode|exit_code|status code)"
    r"\s*[:=]?\s*([1-9]\d{0,2})\b",
    re.IGNORECASE,
)
_TEST_FAIL = re.compile(r"\b([1-9]\d*) (?:failed|errors?)\b|^FAILED\b|^FAIL:", re.IGNORECASE)
_EDGE_ERROR = re.compile(
    r"command not found|no such file or directory|permission denied|not recognized as", re.IGNORECASE
)
_STOP_WORDS = (
    "a an the and or but of to in on at for with by from as is are was were be been it its this that these those i "
    "you we he she they me my our your their please can could would should will just also then than so if not no "
    "yes ok okay do does did done have has had let lets get got make made now next here there what which who how "
    "when where why all any some more most very"
)
_STOP = frozenset(_STOP_WORDS.split())

_MAX_LINE = 240
_MAX_ITEMS_PER_OUTPUT = 12
_MAX_RECORDS = 24
_MAX_LEAVES = 2_000
"""Leaves with a digit read from one JSON output for its :data:`_MAX_RECORDS` keys (bounds a huge listing's cost)."""
_MAX_PER_KEY = 3
"""A key with more values than this in one JSON output (a column of a list) is one item: its first value."""
_FRAME_SEP = '", '  # File "a.py", line 3, in f
_SHORT_OUTPUT_LINES = 40
_SCAN_CHARS = 400_000


@dataclass(frozen=True)
class Salient:
    """One thing worth keeping: its kind, the bullet text, a supersession key and where it came from.

    Attributes:
        kind: what the item records.
        text: the bullet as it is shown (one line).
        key: items with the same kind and key supersede each other (the later one wins); ``None``: no key.
        order: position in the conversation (larger is later); items from an earlier summary are negative.
        tokens: the informative tokens the item holds (identifiers, paths, numbers, rare words), lower-cased.
    """

    kind: SalienceKind
    text: str
    key: str | None
    order: int
    tokens: frozenset[str]


def clip(text: str, limit: int = _MAX_LINE) -> str:
    """``text`` on one line, whitespace collapsed, cut to ``limit`` chars with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_SUFFIX = re.compile(r"(\.\w{1,8})(?::\d+)+$|(\.\w{1,8})::.*$")


@lru_cache(maxsize=65_536)
def _normal(token: str) -> str:
    """A token without trailing punctuation or a ``:line`` / ``::test`` suffix (``a.py:12:`` is ``a.py``)."""
    token = token.lower().rstrip(".,;:")
    return _SUFFIX.sub(lambda m: m.group(1) or m.group(2), token)


@lru_cache(maxsize=8_192)
def informative_tokens(text: str) -> frozenset[str]:
    """The tokens of ``text`` that can carry information: identifiers, paths, numbers and non-stop words.

    Line numbers after a path and timestamps are dropped: they make every log line look unique. Cached: a rolling
    summary's lines are read again at every compaction.
    """
    found = {_normal(m.group(0)) for m in _PATH.finditer(text)}
    found.update(_normal(m.group(0)) for m in _IDENT.finditer(text))
    found.update(w.lower() for w in _WORD.findall(text) if len(w) > 2 and w.lower() not in _STOP)
    return frozenset(t for t in found if t and not _TIMESTAMP.match(t))


def _has_signal(text: str) -> bool:
    return bool(_PATH.search(text) or _IDENT.search(text) or _FIGURE.search(text) or _NUMBER.search(text))


def failure_line(message: Message) -> str | None:
    """The line that shows a tool result failed, or ``None`` when it did not.

    Read from structure only: an error status in the metadata, a leading error line, a traceback's final exception
    line, a non-zero exit code, a test summary with failures, or a shell error on the first or last lines.
    """
    text = message.text[:_SCAN_CHARS]
    lines = [line for line in text.splitlines() if line.strip()]
    status = message.metadata.get("status") if isinstance(message.metadata, Mapping) else None
    flagged = status == "error" or message.metadata.get("is_error") is True
    if not lines:
        return "the tool reported an error" if flagged else None
    found = _traceback_failure(lines) or _structured_failure(lines)
    if found is not None:
        return clip(found)
    return clip(lines[0]) if flagged else None


def _traceback_failure(lines: list[str]) -> str | None:
    """A Python traceback's final exception line and the frame it was raised in."""
    start = next((i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")), None)
    if start is None:
        return None
    last = next((ln for ln in reversed(lines[start:]) if _EXCEPTION_LINE.match(ln)), lines[start])
    frame = next((ln.strip() for ln in reversed(lines[start:]) if ln.lstrip().startswith('File "')), None)
    where = f" (at {frame.split(_FRAME_SEP, 1)[-1]})" if frame else ""
    return last.strip() + where


def _structured_failure(lines: list[str]) -> str | None:
    """A leading error line, an exit code or shell error at the edges, a reported error, a failing test summary."""
    if _LEADING_ERROR.match(lines[0]):
        return lines[0]
    checks: list[tuple[list[str], Callable[[str], bool]]] = [
        ([*lines[:3], *lines[-3:]], lambda ln: bool(_EXIT.search(ln) or _EDGE_ERROR.search(ln))),
        ([*lines[:6], *lines[-6:]], lambda ln: bool(_REPORTED_ERROR.match(ln))),
        (lines[-5:], lambda ln: bool(_TEST_FAIL.search(ln)) and not re.search(r"\b0 failed\b", ln)),
    ]
    return next((line for window, check in checks for line in window if check(line)), None)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def _fact_key(sentence: str, label: str | None) -> str | None:
    subject = _SUBJECT.search(sentence)
    parts = [label.lower()] if label else []
    if subject:
        parts.append(" ".join(subject.group(1).lower().split()))
    return "|".join(parts) or None


def _label(text: str) -> str | None:
    match = _LABEL.match(text)
    if match and (any(ch.isdigit() for ch in match.group(1)) or match.group(1).isupper()):
        return " ".join(match.group(1).split())
    return None


def item_key(kind: SalienceKind, text: str) -> str | None:
    """The supersession key of an item of ``kind`` shown as ``text`` (used to read an earlier ledger back)."""
    if kind == "artifact":
        match = _PATH.search(text)
        return match.group(0).lower() if match else None
    if kind in ("command", "call", "error"):
        return text.split(" -> ", 1)[0].lower() if " -> " in text else None
    if kind == "fact":
        body = text.split(" (was: ", 1)[0]
        return _fact_key(body, _label(body))
    if kind == "decision":
        subject = _SUBJECT.search(text.split(" (was: ", 1)[0])
        return " ".join(subject.group(1).lower().split()) if subject else None
    return None


def _user_items(message: Message, order: int) -> Iterator[Salient]:
    """Each informative sentence of a user message is its own fact or constraint; requests are kept apart."""
    text = message.text.strip()
    label = _label(text)
    for sentence in _sentences(text):
        tokens = informative_tokens(sentence)
        if _CONSTRAINT.search(sentence):
            yield Salient("constraint", clip(sentence, 300), None, order, tokens)
        elif _IMPERATIVE.match(sentence):
            continue  # a request: the latest one is kept as such, the archive keeps them all
        elif _has_signal(sentence) or _SUBJECT.search(sentence):
            own = _label(sentence.split("For the record:", 1)[-1]) or label
            yield Salient("fact", clip(sentence, 300), _fact_key(sentence, own), order, tokens)
    yield Salient("request", clip(text, 400), None, order, informative_tokens(text))


def _assistant_items(message: Message, order: int) -> Iterator[Salient]:
    for sentence in _sentences(message.text):
        tokens = informative_tokens(sentence)
        if _OPEN.search(sentence):
            yield Salient("open", clip(sentence, 240), None, order, tokens)
        elif _DECISION.search(sentence):
            subject = _SUBJECT.search(sentence)
            key = " ".join(subject.group(1).lower().split()) if subject else None
            yield Salient("decision", clip(sentence, 280), key, order, tokens)
        elif _has_signal(sentence):
            yield Salient("note", clip(sentence, 240), None, order, tokens)
    if message.state == "interrupted":
        yield Salient("open", "The assistant's reply was interrupted before it finished.", None, order, frozenset())


def _call_label(call: ToolCall) -> str:
    return f"{call.name} {clip(call.args_json(), 160)}"


def _outcome(result: Message | None) -> tuple[str, str | None]:
    """A short outcome for a call's result, and its failure line if it failed."""
    if result is None:
        return "no result", None
    failed = failure_line(result)
    if failed is not None:
        return f"FAILED: {clip(failed, 160)}", failed
    lines = [ln for ln in result.text[:_SCAN_CHARS].splitlines() if ln.strip()]
    summary = next((ln for ln in reversed(lines[-8:]) if _FIGURE.search(ln)), None)
    if summary is not None:
        return f"ok: {clip(summary, 140)}", None
    return f"ok ({len(result.text):,} chars)", None


def _output_lines(result: Message, label: str, order: int) -> Iterator[Salient]:
    """Paths with an outcome and figures reported anywhere in a tool output, the most informative first, capped.

    A path that is only a reference (``a.py:12:`` in a log, ``a.py::test_x`` in a test report) is not an artifact
    unless the line says it was written; those lines are what search is for.
    """
    for item in _scan_output(result.text, label):
        # Built directly: dataclasses.replace costs several times as much, once per item of every output.
        yield Salient(kind=item.kind, text=item.text, key=item.key, order=order, tokens=item.tokens)


def _json_records(text: str, label: str) -> list[Salient]:
    """The leaves of a JSON tool output whose value is an id, amount, number, email or address, as ``"key": value``.

    Breadth first, so a record's own fields come before those of the lists it holds. A key met more than
    :data:`_MAX_PER_KEY` times (a column of a list of records, as each line item's ``price``) is one item, its first
    value with how many there are: the singular fields (an order's id, its tracking number) are what a summary
    needs, and the archive keeps every value.
    """
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[" or len(stripped) > _SCAN_CHARS:
        return []
    try:
        data = json.loads(stripped)
    except ValueError:
        return []
    leaves: dict[str, list[object]] = {}
    stack: deque[tuple[str, object]] = deque([("", data)])
    scanned = 0
    while stack and scanned < _MAX_LEAVES:
        key, value = stack.popleft()
        if isinstance(value, dict):
            stack.extend((str(k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((key, v) for v in value)
        elif not isinstance(value, bool) and value is not None and key and re.search(r"[\d@]", str(value)):
            scanned += 1
            if key in leaves or len(leaves) < _MAX_RECORDS:
                leaves.setdefault(key, []).append(value)
    out: list[Salient] = []
    for key, values in leaves.items():
        shown = [f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}" for v in values]
        if len(values) > _MAX_PER_KEY:
            shown = [f"{shown[0]} (1 of {len(values)})"]
        for one in shown:
            item_text = clip(f"{label}: {one}", 180)
            out.append(Salient("figure", item_text, None, 0, informative_tokens(item_text)))
    return out[:_MAX_RECORDS]


_Candidate = tuple[int, SalienceKind, str, str | None, str]
"""A line worth keeping: its weight, kind, bullet text, supersession key, and the text its tokens come from."""


@lru_cache(maxsize=512)
def _scan_output(text: str, label: str) -> tuple[Salient, ...]:
    """:func:`_output_lines` for one text, cached: a cleared marker and the later summary read the same output."""
    records = _json_records(text, label)
    if records:
        return tuple(records)
    found: list[_Candidate] = []
    seen: set[str] = set()
    strong = 0  # weight-2 items found: once there are as many as are kept, no later line can make the cut
    lines = text[:_SCAN_CHARS].splitlines()
    short = len(lines) <= _SHORT_OUTPUT_LINES  # a short listing (search results): its paths are the answer
    for line in lines:
        if strong >= _MAX_ITEMS_PER_OUTPUT:
            break
        stripped = line.strip()
        if not stripped or len(stripped) > 600 or not _CANDIDATE.search(stripped):
            continue
        path = _PATH.search(stripped)  # the first path names the artifact
        low = stripped.lower()
        candidate: _Candidate
        if path:
            words = set(_WORD.findall(low))  # read only for a path: its verbs and outcome weigh it
            written = not _WRITE_VERBS.isdisjoint(words)
            if not written and _REFERENCE.search(stripped):
                continue  # a path only referred to (a.py:12 in a log) is what search is for
            outcome = not _OUTCOME_WORDS.isdisjoint(words) or _OUTCOME_PHRASE.search(low) is not None
            weight = 2 if (written or outcome or _FIGURE_LOWER.search(low)) else int(short)
            if weight == 0:
                continue
            candidate = (weight, "artifact", clip(stripped), path.group(0).lower(), stripped)
        elif (record := _RECORD.match(stripped)) and re.search(r"\d", record.group(2)):
            # a field of a structured record whose value is an id, amount or number
            field, value = record.group(1).strip(), record.group(2).strip()
            shown = f"{label}: {field} = {value}"
            candidate = (1, "figure", clip(shown, 180), None, shown)
        elif len(stripped) < 200 and _FIGURE_LOWER.search(low):
            candidate = (1, "figure", f"{label}: {clip(stripped, 180)}", None, stripped)
        else:
            continue
        if candidate[2] not in seen:
            seen.add(candidate[2])
            found.append(candidate)
            strong += candidate[0] == 2
    found.sort(key=lambda entry: -entry[0])  # stable: equal weights keep their order in the output
    # Only the items kept are tokenized (most lines of a long log are candidates; a few are kept).
    return tuple(
        Salient(kind, shown, key, 0, informative_tokens(source))
        for _, kind, shown, key, source in found[:_MAX_ITEMS_PER_OUTPUT]
    )


def key_lines(message: Message, max_lines: int) -> list[str]:
    """The lines of a tool output worth keeping in view when the output itself is not.

    Its failure first, then paths and figures (write verbs and outcomes first), at most ``max_lines``, one line each.
    """
    lines: list[str] = []
    failed = failure_line(message)
    if failed is not None:
        lines.append(f"FAILED: {failed}")
    for item in _output_lines(message, message.name or "tool", 0):
        if len(lines) >= max_lines:
            break
        text = item.text.split(": ", 1)[1] if item.kind == "figure" else item.text
        if text not in lines:
            lines.append(clip(text, 200))
    return lines[:max_lines]


def salient_items(messages: Sequence[Message], results: Mapping[str, Message] | None = None) -> list[Salient]:
    """Every salient item of ``messages``, in conversation order.

    Args:
        messages: the span (originals, not bounded or cleared copies, for full coverage).
        results: tool results by call id from outside the span (a call's result may sit after the cut).
    """
    by_call = dict(results or {})
    by_call.update({m.tool_call_id: m for m in messages if m.role == "tool" and m.tool_call_id})
    labels = {call.id: _call_label(call) for m in messages for call in m.tool_calls}
    names = {call.id: call.name for m in messages for call in m.tool_calls}
    items: list[Salient] = []
    for order, message in enumerate(messages):
        if message.metadata.get("ctxbudget"):
            continue  # our own summary, notices and pinned copies are not conversation
        items.extend(_message_items(message, order, by_call, labels, names))
    return items


def _message_items(
    message: Message,
    order: int,
    by_call: Mapping[str, Message],
    labels: Mapping[str, str],
    names: Mapping[str, str],
) -> Iterable[Salient]:
    if message.role == "user" and message.text.strip():
        yield from _user_items(message, order)
    elif message.role == "assistant":
        yield from _assistant_items(message, order)
        for call in message.tool_calls:
            outcome, _ = _outcome(by_call.get(call.id))
            label = _call_label(call)
            text = f"{label} -> {outcome}"
            kind: SalienceKind = "command" if _SHELL_ARGS.intersection(call.args) else "call"
            yield Salient(kind, clip(text, 320), label.lower(), order, informative_tokens(text))
    elif message.role == "tool":
        label = labels.get(message.tool_call_id or "", message.name or "tool")
        failed = failure_line(message)
        if failed is not None:
            text = f"{label} -> {failed}"
            yield Salient("error", clip(text, 300), label.lower(), order, informative_tokens(text))
        yield from _output_lines(message, message.name or names.get(message.tool_call_id or "", "tool"), order)
