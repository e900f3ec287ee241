"""Merging ledger items: repeats dropped, superseded statements replaced, one bullet per file, command and call.

* The same text twice (however spaced or cased) is one bullet (:func:`normal` is how repeats match); a statement
  another one of its section holds whole is that one.
* A later statement replaces the one it supersedes (:mod:`ctxbudget.compaction.supersession`), including statements
  still in view in the kept tail.
* One bullet per file (its operations in order: ``src/a.py: read, edited x2``), per command and per call (the latest
  outcome); an error is marked resolved when the same call or file later succeeds; the open items are those of the
  latest message that left any.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from ._artifacts import canonical_paths, merge_artifact
from ._ledger_errors import TIMES, repeated, rerun, resolve_errors, same_failures
from ._ledger_text import SECTION_OF, STATEMENTS, SUPERSEDED
from ._plans import PLAN_KEY, merge_task, task_key
from ._records import field_parts, record_field
from ._reverts import mark_reverted
from ._salient import Salient
from .supersession import PREFIX as _VALUE_PREFIX
from .supersession import Subject, SupersessionIndex, bare_kinds
from .textscan import informative_tokens

__all__ = ["Postings", "SubjectReader", "merge", "normal", "posting_keys"]

SubjectReader = Callable[[str], tuple[Subject, list[str]]]
"""Reads a statement's subject and the keys it is found by (:func:`posting_keys`), e.g. once per text."""

_SPOKEN = frozenset({*STATEMENTS, "request", "question", "decision", "finding", "task"})

TASK_PREFIX = task_key("")
"""How the key of one task of the agent's own list starts (``task #3``)."""
_NAMED_VALUE = re.compile(r"[A-Za-z]")
"""A field's value that names something (an address, a payment method, a user), not a quantity (``amount=236.57``)."""
_NAMING_FIELD = re.compile(r"(?:^|[._])(?:\w*id|ids|\w*number|\w*name|code|key|email|title)$", re.IGNORECASE)
"""A field that names its record or another one (``order_id``, ``item_ids``, ``flight_number``, ``name``)."""
_PLACE_FIELD = re.compile(r"(?:^|[._])(?:zip|zipcode|zip_code|postal_code|postcode)$", re.IGNORECASE)
"""A field of an address whose value is digits (``zip=80280``): shared by records as the address is, not a count."""
_CONTAINMENT_ITEMS = 600
"""Statements past this many are deduped by exact text only (containment is checked pairwise)."""


_NOT_WORD = re.compile(r"[^\w$€£%./:@-]+")


def _normal_form(text: str) -> str:
    return " ".join(_NOT_WORD.sub(" ", text.lower()).split())


_NORMAL_CACHE = 8_192
_NORMAL_CHARS = 600
"""Bullets up to this long have their normal form remembered (:data:`_NORMAL_CACHE` of them: at most about 10 MB)."""
_normal_cached = functools.lru_cache(maxsize=_NORMAL_CACHE)(_normal_form)


def normal(text: str) -> str:
    """``text`` lower-cased, its punctuation (but that of values) a space, its spaces collapsed: how repeats match.

    A bullet's form is remembered: each merge compares every item of the ledger, most of them seen before.
    """
    return _normal_cached(text) if len(text) <= _NORMAL_CHARS else _normal_form(text)


def merge(items: list[Salient], tail: Sequence[Salient], reader: SubjectReader) -> list[Salient]:
    """Dedupe, supersede and aggregate ``items`` (see the module docstring); the result is in order.

    ``tail`` holds the user statements still in view (they supersede, but are not returned); ``reader`` reads a
    statement's subject.
    """
    items = _dedupe(sorted(items, key=lambda i: i.order))
    items = mark_reverted(_supersede(items, tail, reader))
    items = _keyed(items)
    items = _latest_open(items)
    return same_failures(resolve_errors(items))


def _dedupe(items: list[Salient]) -> list[Salient]:
    """The same text twice (however spaced, cased or punctuated) is one bullet, at its later position.

    An error repeated is counted (``... (failed 4 times)``): the same call failing the same way again is news.

    A statement whose words another one of its section holds whole ("Let's focus on X." beside "Let's focus on
    X. Can we check Y?") is that one.
    """
    slots = [(SECTION_OF[item.kind], normal(item.text)) for item in items]
    last = {slot: index for index, slot in enumerate(slots)}
    times = Counter(slot for slot, item in zip(slots, items, strict=True) if item.kind == "error")
    said = {text for (section, text), item in zip(slots, items, strict=True) if item.kind in STATEMENTS}
    kept = [
        item if times[slots[index]] < 2 else item._replace(text=f"{item.text}{TIMES.format(times[slots[index]])}")
        for index, item in enumerate(items)
        if last[slots[index]] == index and not (item.kind in _NARRATED and slots[index][1] in said)
    ]  # the agent quoting a rule the user gave ('"DO NOT MODIFY: Tests, ..."') is that rule, said once, as the user's
    spoken = [item for item in kept if item.kind in _SPOKEN]
    if len(spoken) > _CONTAINMENT_ITEMS:
        return kept
    inside = _contained(spoken)
    inside |= _restated([item for item in spoken if item.kind in _NARRATED and id(item) not in inside])
    return [item for item in kept if id(item) not in inside]


def _contained(items: list[Salient]) -> set[int]:
    """The ids of the statements whose words another one of their section holds whole.

    Each section's texts (their normal forms, padded with spaces) are joined by a character no normal form holds,
    so an occurrence never spans two of them: a text another one holds occurs there twice at least (once as
    itself), and one C-level count per text replaces a comparison per pair.
    """
    by_section: dict[str, list[tuple[int, str]]] = {}
    for item in items:
        by_section.setdefault(SECTION_OF[item.kind], []).append((id(item), f" {normal(item.text)} "))
    inside: set[int] = set()
    for texts in by_section.values():
        if len(texts) < 2:
            continue
        joined = "\n".join(text for _, text in texts)
        inside.update(key for key, text in texts if joined.count(text) > 1)
    return inside


_NARRATED = frozenset({"finding", "decision"})
"""What the assistant said it found or decided: it restates itself as it works."""
_RESTATED_MIN = 4
_RESTATED_GROWTH = 1.5
_RESTATED_SHARE = 0.75
_REWORDED_MIN = 8
_VALUE = re.compile(r"[\d._@:$#=]")


def _restates(later: frozenset[str], earlier: frozenset[str]) -> bool:
    """``later`` says ``earlier`` again: it holds every value of it and all, or most, of its words.

    Every value (ids, paths, figures: a token with a digit or one of ``._@:$#=``) and every word, or, with eight
    or more, all but a quarter of the words reworded ("To get the author for a checkpoint, we'd need to traverse
    the commit history of `entire/sessions`" beside "To get author, we'd need to traverse `entire/sessions`
    commit history"); adding at most half as many again.
    """
    if len(later) > _RESTATED_GROWTH * len(earlier):
        return False
    shared = len(earlier & later)
    if shared == len(earlier):
        return True
    if len(earlier) < _REWORDED_MIN:  # a short one differs in the word that matters ("left" beside "right")
        return False
    return shared >= _RESTATED_SHARE * len(earlier) and all(t in later for t in earlier if _VALUE.search(t))


def _restated(items: list[Salient]) -> set[int]:
    """The ids of findings and decisions a later one of their section restates (the later wording is kept).

    A restatement holds every informative token of the earlier one (at least four) and adds at most half as many
    again, or rewords at most a quarter of its words and keeps every value (:func:`_restates`). Each item is indexed
    under its rarest tokens (a quarter of them, and one), so a later one meets only the earlier items whose rarest
    tokens it holds: the cost stays near linear.
    """
    frequency: dict[str, int] = {}
    for item in items:
        for token in item.tokens:
            frequency[token] = frequency.get(token, 0) + 1
    by_rarest: dict[tuple[str, str], list[int]] = {}
    dropped: set[int] = set()
    for position, item in enumerate(items):
        section = SECTION_OF[item.kind]
        for token in item.tokens:
            for earlier in by_rarest.get((section, token), ()):
                other = items[earlier]
                if _restates(item.tokens, other.tokens):
                    dropped.add(id(other))
        if len(item.tokens) >= _RESTATED_MIN:
            # Under its rarest tokens, as many as a rewording may leave out plus one: a restatement holds one.
            ranked = sorted(item.tokens, key=lambda token: (frequency[token], token))
            for rarest in ranked[: int(len(ranked) * (1 - _RESTATED_SHARE)) + 1]:
                by_rarest.setdefault((section, rarest), []).append(position)
    return dropped


def _supersede(items: list[Salient], tail: Sequence[Salient], reader: SubjectReader) -> list[Salient]:
    """Drop each statement (and decision) a later one replaces, the tail's statements included.

    A replaced statement that holds a value the later one does not restate (the host beside a corrected port) is
    kept, marked :data:`SUPERSEDED`, so nothing it said is lost while its stale value reads as stale.
    """
    dead: set[int] = set()
    marked: set[int] = set()
    pools = (  # (kinds, a bare number is a new value, a replaced one may be kept marked)
        (STATEMENTS, False, True),
        (_NARRATED, True, False),
        (frozenset({"request", "question"}), True, False),
    )
    for kinds, counters_change, marks_stale in pools:
        # a task of the agent's own list is merged by its number (_keyed), never replaced by another task's
        pool = [i for i, item in enumerate(items) if item.kind in kinds and not _planned(item)]
        later = [t for t in tail if t.kind in kinds]
        read = [reader(items[i].text) for i in pool] + [reader(t.text) for t in later]
        index = SupersessionIndex([subject for subject, _ in read], counters_change=counters_change)
        found_by = Postings(index)
        gone: set[int] = set()  # the positions in this pool of the statements replaced so far
        for position, (_, keys) in enumerate(read):
            # An earlier summary's statements were resolved when it was built: only new ones replace anything.
            fresh = position >= len(pool) or items[pool[position]].order >= 0
            candidates = found_by.candidates(position, keys) - gone if fresh else set()
            earlier = index.replaced_by(position, sorted(candidates)) if candidates else None
            if earlier is not None and earlier < len(pool):
                already = items[pool[earlier]].text.startswith(SUPERSEDED)
                if marks_stale and not already and index.keeps_values(position, earlier):
                    marked.add(pool[earlier])
                else:
                    dead.add(pool[earlier])
                    gone.add(earlier)
            found_by.add(position, keys)
    return [
        item._replace(text=SUPERSEDED + item.text) if i in marked else item
        for i, item in enumerate(items)
        if i not in dead
    ]


_RECENT = 64
"""Most earlier statements one key finds for a statement to be measured against: the newest that share it. What a
statement replaces was said shortly before it; a word or a template that 4,000 statements share ("The count is N.",
"Actually, the budget is now $N.") had each measured against all the others, quadratic: 36 s at 4,000."""


class Postings:
    """Where supersession finds the earlier statements a later one might replace (see :meth:`candidates`).

    Args:
        index: the pool's statements, in the order they are added here.
    """

    def __init__(self, index: SupersessionIndex) -> None:
        self.index = index
        self._every: dict[str, list[int]] = {}
        self._unlabelled: dict[str, list[int]] = {}  # the statements without a numbered label
        self._restating: dict[frozenset[str], list[int]] = {}  # by the values a restatement keeps the same

    def add(self, position: int, keys: list[str]) -> None:
        """Statement ``position`` of the index (its :func:`posting_keys` are ``keys``), after every earlier one."""
        subject = self.index.subjects[position]
        for key in keys:
            self._every.setdefault(key, []).append(position)
        if subject.label_id is None:
            for key in keys:
                self._unlabelled.setdefault(key, []).append(position)
        if not self.index.counters_change and subject.values:  # a statement without values is never restated
            self._restating.setdefault(subject.values - subject.scalars, []).append(position)

    def candidates(self, position: int, keys: list[str]) -> set[int]:
        """The statements added so far that ``position`` might replace: never fewer than any it does replace.

        Those found by one of its ``keys``, narrowed where :meth:`SupersessionIndex.replaced_by` cannot score the
        rest: a numbered statement replaces a numbered one only of its own number (found by its ``label:`` key), so
        it meets the unnumbered ones besides. A statement that can only restate those
        (:meth:`SupersessionIndex.restates_unnumbered_only`) meets only those sharing enough of its subject words:
        where a bare number is no new value (``counters_change`` off), those naming the same values but their
        figures (the template's test), else those holding one of its rarest few words
        (:meth:`SupersessionIndex.restating_words`); both must name values for that. Each one found is then measured
        whole.
        """
        index = self.index
        if not index.may_replace(position):
            return set()
        subjects = index.subjects
        subject = subjects[position]
        own: set[int] = set()
        postings = self._every
        if subject.label_id is not None:
            own = set(self._every.get(f"label:{subject.label_id}", ()))
            postings = self._unlabelled
        if not index.restates_unnumbered_only(position):
            return own.union(*[postings[key][-_RECENT:] for key in keys if key in postings])
        words = subject.words  # posting_keys lists the subject words first: their postings are theirs
        found: Iterable[int]
        if not subject.values:  # a restatement gives other values: without any, it restates nothing
            found = ()
        elif index.counters_change:
            rarest = sorted(words, key=lambda word: (len(postings.get(word, ())), word))
            rarest = rarest[: index.restating_words(position)]
            found = set().union(*[postings[word][-_RECENT:] for word in rarest if word in postings])
        else:  # the most recent few naming those values: the statement they restate is among them
            found = self._restating.get(subject.values - subject.scalars, ())[-_RECENT:]
        numbered = subject.label_id is not None  # then it restates only the unnumbered ones found
        return own | {
            p
            for p in found
            if not (numbered and subjects[p].label_id is not None)
            and index.could_restate(position, p, len(words & subjects[p].words))
        }


def _planned(item: Salient) -> bool:
    """``item`` is the agent's own task list or one task of it (:mod:`~ctxbudget.compaction._plans`)."""
    return item.key is not None and (item.key == PLAN_KEY or item.key.startswith(TASK_PREFIX))


def _keyed(items: list[Salient]) -> list[Salient]:
    """One bullet per key: a file's operations aggregated, a command's or call's latest outcome."""
    latest: dict[tuple[str, str], int] = {}
    out: list[Salient | None] = []
    same_file = canonical_paths(item.key for item in items if item.kind == "artifact" and item.key)
    for item in items:
        field = record_field(item.text) if item.kind == "figure" and item.key is None else None
        if field is not None:  # a field of a call's record: the same call run again says its latest value
            # ... and a value records share (the customer's address on the user and each of six orders) is shown
            # once, on the latest record; a number is each record's own (two orders of the same amount), and so is
            # a field that names the record or another (order_id, payment_method_id: what the record is about)
            name, value = field_parts(field[1])
            slots = [("field", f"{field[0].lower()}={name}")]
            if (_NAMED_VALUE.search(value) or _PLACE_FIELD.search(name)) and not _NAMING_FIELD.search(name):
                slots.append(("same value", field[1]))
            for slot in slots:
                if slot in latest:
                    out[latest[slot]] = None
                latest[slot] = len(out)
            out.append(item)
            continue
        planned = _planned(item)
        if item.key is None or (item.kind not in ("artifact", "command", "call", "error") and not planned):
            out.append(item)
            continue
        key = same_file.get(item.key, item.key) if item.kind == "artifact" else item.key
        slot = ("plan", key) if planned else (SECTION_OF[item.kind], key)  # a task done is a finding: the same task
        if slot in latest:
            earlier = out[latest[slot]]
            out[latest[slot]] = None
            if item.key.startswith(TASK_PREFIX) and earlier is not None:
                kind, text, _ = merge_task(earlier.text, item.text, key)  # its subject, and its latest status
                item = item._replace(kind=kind, text=text, tokens=informative_tokens(text))  # noqa: PLW2901
            elif item.kind == "artifact" and earlier is not None:
                item = merge_artifact(earlier, item, key)  # noqa: PLW2901  # the merged bullet takes its place
            elif item.kind == "error" and earlier is not None:
                item = repeated(earlier, item)  # noqa: PLW2901  # the same failure again: counted, not lost
            elif item.kind == "command" and earlier is not None:
                item = rerun(earlier, item)  # noqa: PLW2901  # a script's output before a fix and after it
        latest[slot] = len(out)
        out.append(item)
    return [item for item in out if item is not None]


def _latest_open(items: list[Salient]) -> list[Salient]:
    """Open items of the latest message that left any (an earlier "next step" was taken or replaced)."""
    opens = [item.order for item in items if item.kind == "open" and item.key == "open"]
    newest = max(opens, default=None)
    return [item for item in items if item.kind != "open" or item.key != "open" or item.order == newest]


def posting_keys(subject: Subject) -> list[str]:
    """What a statement can be found by as a candidate for supersession: its words, slots and value prefixes."""
    prefixes = {f"value:{value[:_VALUE_PREFIX]}" for value in subject.values if len(value) > _VALUE_PREFIX}
    label = [f"label:{subject.label_id}"] if subject.label_id else []
    # a value given alone ("Sure, it's a@b.com.") is found by a correction giving one of its kind ("My bad, try ...")
    bare = [f"bare:{kind}" for kind in bare_kinds(subject)] if subject.cue or not subject.words else []
    return [*subject.words, *(f"slot:{slot}" for slot in subject.slots), *prefixes, *label, *bare]
