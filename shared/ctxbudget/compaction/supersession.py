"""When a later statement replaces an earlier one: same subject, a new value.

A statement's :class:`Subject` is read from its structure (:mod:`ctxbudget.compaction.textscan`): its content words
without the leading label ("FACT:", "Constraint:", "Note:" are never the subject) and without words that only announce a
change; its typed values; whether it announces a change (update, now, changed, moved, switched, rotated, instead,
actually, no longer, from now on, rather, new ...). A later statement supersedes an earlier one when

* it restates it with other values: the same subject words (nearly all of them) and different values, or
* it announces a change and shares subject words with it (the best-matching earlier statement, weighted by how rare
  the shared words are in the session), with values of compatible types (a date for a date, an amount for an
  amount; a bare number goes with anything), or
* both carry the same numbered label ("FACT-7:", then "FACT-7 update:"); numbered items with different numbers
  never replace each other, whatever they say, or
* both set a value that a session holds one of at a time: a time zone; the style of the assistant's answers (a
  preference about answers, replies, responses or tone that shares another word with the earlier one).

Two statements that only look alike ("Project spending ceiling is $500", "Conference spending ceiling is $300") have
words the other lacks on both sides and announce no change: both stay.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

from ._needles import Needled
from .statements import label_of
from .textscan import scan, stem

_VALUE_PARTS = re.compile(r"[:/=@]")
"""Where a value splits into parts (a host and its port, a path's directories, a key and its value)."""

__all__ = ["PREFIX", "Subject", "SupersessionIndex", "bare_kinds", "subject_of"]

_CUE_NEEDLES = (
    "update", "chang", "now", "moved", "switch", "rotat", "rebased", "replaced", "instead", "actually", "correct",
    "revised", "no longer", "anymore", "retired", "going forward", "rather", "renamed", "new", "not ", "scratch that",
    "make it", "my bad", "my mistake", "i meant", "oops", "typo",
)  # fmt: skip
"""What every match of :data:`_CUE` holds, one at least (a sentence without any announces no change)."""
_CUE = Needled(
    re.compile(
        r"\b(?:update[ds]?|changed|"
        r"(?<!for )(?<!right )(?<!just )(?<!until )(?<!by )(?<!from )(?<!i will )(?<!i'll )(?<!let me )now(?! that)|"
        r"chang(?:e|ed|ing) (?:\w+ ){0,2}to|moved|switched|switching to|rotated|rotation is done|rebased|replaced|"
        r"instead|actually|correction|corrected|the correct|revised|no longer|anymore|retired|from now on|"
        r"going forward|rather|renamed|"
        r"(?:^|(?<=[:;,.!] ))(?:(?:the|our|my|its|a) )?new(?=(?: [\w-]+){1,4}(?: (?:is|are|will be)\b| ?[:=]|$))|"
        r"new value|"
        r"not \S+ but|scratch that|make it|my bad|my mistake|i meant|oops|typo)\b",
        re.IGNORECASE,
    ),
    _CUE_NEEDLES,
)
"""Words that announce a change of something already said (a past "changed", "moved", "switched", or "change ...
to"), not the wish to change something ("I'd like to change my flight" is the request itself). "New" announces one
only where a clause starts with it ("The new budget is $700", "New budget cap: $700"), not inside a noun phrase
("The feature flag for the new refund flow is ..."). The assistant's own next step ("I will now proceed with
updating the reservations") announces none: "updating" is an action, and "I will now" / "let me now" say what
comes next."""
_CUE_WORDS = frozenset(
    stem(w)
    for w in [
        "update",
        "updated",
        "updates",
        "updating",
        "changed",
        "change",
        "changing",
        "moved",
        "move",
        "switched",
        "switch",
        "switching",
        "rotated",
        "rebased",
        "rebase",
        "replaced",
        "replace",
        "instead",
        "actually",
        "correction",
        "corrected",
        "revised",
        "revise",
        "retired",
        "renamed",
        "rename",
        "new",
        "rather",
        "longer",
        "anymore",
        "forward",
    ]
)
_NUMBERED_LABEL = re.compile(r"(?:^|:\s)([A-Za-z][A-Za-z_]*[- ]?\d+)(?:\s+(?:update|correction|change|fix|amended))?:")
"""A numbered label near the start ("FACT-7:"): the item's own id, whatever the labels around it."""
_WEAK = frozenset(
    stem(w)
    for w in [
        "think",
        "want",
        "need",
        "try",
        "make",
        "get",
        "use",
        "know",
        "see",
        "look",
        "seem",
        "feel",
        "say",
        "tell",
        "ask",
        "put",
        "take",
        "give",
        "keep",
        "help",
        "work",
        "come",
        "find",
        "show",
        "mean",
        "start",
        "thing",
        "way",
        "something",
        "anything",
        "everything",
        "also",
        "still",
        "maybe",
        "probably",
        "really",
    ]
)
"""Verbs and fillers too common to tie two statements to one subject."""
_TIME_WORDS = frozenset(
    stem(w)
    for w in ["time", "times", "timezone", "zone", "clock", "clocks", "timestamp", "timestamps", "report", "show"]
)
_STYLE_WORDS = frozenset(
    stem(w) for w in ["answer", "answers", "reply", "replies", "response", "responses", "tone", "style", "wording"]
)
_ANY = "number"
_EQUIVALENT = {"hostport": "host", "path": "identifier", "url": "host"}
_SCALAR = frozenset({"money", "date", "number", "version", "timezone", "hostport", "host", "url"})
"""Value kinds that set something (an amount, a date, a port): a statement restated with another one updates it.
Paths, identifiers and names are the things a statement is about: "never modify a.py" and "never modify b.py" are
two rules."""
_STRONG = frozenset({"money", "date", "person", "timezone", "identifier", "host", "email", "version"})
PREFIX = 4
"""Two values sharing a prefix this long (``spike/abc-12``, ``spike/xyz-34``) name the same kind of thing."""
_TEMPLATE = 0.8
_SLOTTED = frozenset({"timezone", "style"})


@dataclass(frozen=True)
class Subject:
    """What a statement is about: subject words (stemmed), typed values, slots, and whether it announces a change."""

    words: frozenset[str]
    values: frozenset[str]
    kinds: frozenset[str]
    strong: frozenset[str]
    scalars: frozenset[str]
    slots: frozenset[str]
    cue: bool
    label_id: str | None = None


_REASON_CLAUSE = Needled(
    re.compile(r"[,;]?\s+(?:because|since|so that|as it|which keeps|which matches)\s", re.IGNORECASE),
    ("because", "since", "so that", "as it", "which keeps", "which matches"),
)


def subject_of(text: str) -> Subject:
    """The :class:`Subject` of one statement."""
    label = label_of(text)
    body = text[len(label) + 1 :] if label else text
    numbered = _NUMBERED_LABEL.search(text[:80])  # "FACT-7:", "FACT-7 update:", "For the record: FACT-7:"
    label_id = numbered.group(1).lower() if numbered else None
    lower = body.lower()  # read by the cue, the reason clause and the time-zone slot: lower-cased once
    reason = _REASON_CLAUSE.search(body, lower)
    if reason is not None and len(body[: reason.start()].split()) >= 3:
        body = body[: reason.start()]  # what is stated, not why ("because the team operates it")
        lower = body.lower()
    read = scan(body)
    every = frozenset(read.words)
    words = frozenset(w for w in every if w not in _CUE_WORDS and w not in _WEAK)
    kinds = frozenset(_EQUIVALENT.get(v.kind, v.kind) for v in read.values)
    slots = set()
    if "timezone" in kinds and (every & _TIME_WORDS or "timezone" in lower):
        slots.add("timezone")  # a statement about the time zone to use, not a time that names one ("03:00 EST")
    if words & _STYLE_WORDS:
        slots.add("style")
    cue = _CUE.search(body, lower) is not None or (label is not None and _CUE.search(label) is not None)
    named = [v for v in read.values if v.kind != "identifier" or any(c.isdigit() for c in v.text)]
    values = frozenset(v.text.lower() for v in named)
    strong = frozenset(_EQUIVALENT.get(v.kind, v.kind) for v in named) & _STRONG
    scalars = frozenset(v.text.lower() for v in named if v.kind in _SCALAR)
    return Subject(
        words=words,
        values=values,
        kinds=kinds,
        strong=strong,
        scalars=scalars,
        slots=frozenset(slots),
        cue=cue,
        label_id=label_id,
    )


def _shared_prefix(new: Subject, old: Subject) -> bool:
    """A value of each that differ but share a prefix of :data:`PREFIX` characters or more."""
    return any(
        a != b and len(a) > PREFIX and a[:PREFIX] == b[:PREFIX] and not a.isdigit()
        for a in new.values
        for b in old.values
    )


def _corrects_part(new: Subject, old: Subject) -> bool:
    """``new`` names a part of one of ``old``'s values and gives another value besides.

    "Actually use port 5434 for staging, 5433 is the old replica" names the port of "db-stg-4.internal:5433".
    """
    parts = {part for value in old.values for part in _VALUE_PARTS.split(value) if part}
    named = new.values & parts
    return bool(named) and bool(new.values - parts - old.values)


def _named(values: frozenset[str]) -> bool:
    """Some of ``values`` name something (an id, an amount, a date), not a bare count ("question 3", "step 4")."""
    return any(not value.replace(",", "").replace(".", "").isdigit() for value in values)


def bare_kinds(subject: Subject) -> frozenset[str]:
    """The strong kind of a statement's one value (an email, an amount, a date), or none: what a correction links by."""
    return subject.strong if len(subject.values) == 1 and len(subject.strong) == 1 else frozenset()


def _corrects_bare(new: Subject, old: Subject) -> bool:
    """``old`` only gave a value (no subject word) and ``new`` gives another of its kind: the bare answer corrected."""
    return not old.words and bool(bare_kinds(old)) and bare_kinds(new) == bare_kinds(old) and new.values != old.values


def _compatible(new: Subject, old: Subject) -> bool:
    if not new.kinds or not old.kinds or _ANY in new.kinds or _ANY in old.kinds:
        return True
    return bool(new.kinds & old.kinds)


class SupersessionIndex:
    """Decides, for statements in conversation order, which earlier statement each later one replaces.

    Args:
        subjects: every statement's subject, in conversation order (their words' rarity is measured over them).
        counters_change: a statement restated with another bare number replaces the earlier one (requests: "go on
            with step 4" after "go on with step 3"); for facts a bare number is a count, and "question 4" is not a
            new value of "question 3".
    """

    def __init__(self, subjects: Sequence[Subject], *, counters_change: bool = False) -> None:
        self.subjects = list(subjects)
        self.counters_change = counters_change
        self._df = Counter(chain.from_iterable(subject.words for subject in self.subjects))
        self._idf: dict[str, float] = {}  # a word's rarity, worked out when a pair that scores first needs it

    def may_replace(self, index: int) -> bool:
        """Statement ``index`` can replace some earlier one at all (a quick test before :meth:`replaced_by`).

        Only a statement with a value, a change cue, a numbered label or a time-zone or style slot ever scores
        above zero against another (see :meth:`replaced_by`): the rest need not look at candidates.
        """
        new = self.subjects[index]
        return bool(new.values or new.cue or new.label_id is not None or new.slots & _SLOTTED)

    def restatements_only(self, index: int) -> bool:
        """Statement ``index`` can replace another only by restating it with other values.

        It announces no change and has no numbered label and no time-zone or style slot, so only the template
        test of :meth:`replaced_by` applies: the earlier statement shares at least :data:`_TEMPLATE` of the words
        of both (see :meth:`could_restate`).
        """
        return self.restates_unnumbered_only(index) and self.subjects[index].label_id is None

    def restates_unnumbered_only(self, index: int) -> bool:
        """Statement ``index`` can replace an earlier one *without* a numbered label only by restating it.

        It announces no change and has no time-zone or style slot (it may have a numbered label: that replaces
        only a statement of the same number, :meth:`replaced_by`'s first test).
        """
        new = self.subjects[index]
        return not new.cue and not new.slots & _SLOTTED

    def could_restate(self, index: int, earlier: int, shared: int) -> bool:
        """Statement ``index`` sharing ``shared`` subject words with ``earlier`` passes the template's word test."""
        union = len(self.subjects[index].words) + len(self.subjects[earlier].words) - shared
        return shared > 0 and shared / max(1, union) >= _TEMPLATE

    def restating_words(self, index: int) -> int:
        """How many of statement ``index``'s words suffice to find every statement that could restate it.

        One that passes :meth:`could_restate` holds all but a fifth of them at most, so it holds one of any this
        many (a fifth, rounded up, and one more): it is found by the postings of the rarest that many.
        """
        return math.floor(len(self.subjects[index].words) * (1 - _TEMPLATE) + 0.5) + 1

    def _one_word_link(self, shared: frozenset[str], new: Subject, old: Subject) -> bool:
        """One shared word links a change to an earlier statement that it gives a value of every strong kind of.

        "Bo Chen now owns the pager this week" (a name) links "The on-call owner this week is Ana Silva" (a name);
        "a good date for the departure" (a date) does not link "Passenger Three: ... Sarah Johnson, Date of Birth
        1995-07-15" (a name and a date). A corrected part of a value (the port of a host) links when the shared word
        is said in these two statements alone.
        """
        if old.strong and old.strong <= new.strong:
            return True
        return _corrects_part(new, old) and all(self._df.get(word, 0) <= 2 for word in shared)

    def keeps_values(self, index: int, earlier: int) -> bool:
        """Statement ``earlier``, replaced by ``index``, holds a value of a kind ``index`` does not restate.

        "The staging db lives at db-stg-4.internal:5433" corrected by "Actually use port 5434 for staging": the
        port is replaced, the host is not, so the earlier statement is kept, marked superseded, rather than lost.
        """
        new, old = self.subjects[index], self.subjects[earlier]
        left = old.kinds - new.kinds - {_ANY}
        return bool(left) and not old.values <= new.values

    def replaced_by(self, index: int, candidates: Sequence[int]) -> int | None:
        """The earlier statement (one of ``candidates``, indexes before ``index``) statement ``index`` replaces."""
        new = self.subjects[index]
        best: tuple[float, int] | None = None
        for earlier in candidates:
            score = self._score(new, self.subjects[earlier])
            if score > 0 and (best is None or score >= best[0]):
                best = (score, earlier)
        return None if best is None else best[1]

    def _score(self, new: Subject, old: Subject) -> float:
        if new.label_id is not None and old.label_id is not None:  # numbered items: the same number, the same item
            return 20.0 if new.label_id == old.label_id else 0.0
        shared = new.words & old.words
        changed = new.values ^ old.values
        if new.values and old.values and changed and shared:
            restated = new.values - new.scalars == old.values - old.scalars and new.scalars != old.scalars
            template = self.counters_change or (restated and _named(changed))
            if template and len(shared) / max(1, len(new.words | old.words)) >= _TEMPLATE:
                return 10.0 + self._weight(shared)  # the same statement restated with other values
        # A change announced about the same subject: two subject words in common, or one and a value of the same
        # strong type (an amount for an amount, a name for a name), or values that differ after a common prefix.
        # Or the correction of a value given alone: "Sure, it's silva7872@example.com." by "My bad, try amelia...".
        if new.cue and (
            (
                (new.values != old.values or not new.values)
                and (
                    len(shared) >= 2
                    or (len(shared) == 1 and self._one_word_link(shared, new, old))
                    or _shared_prefix(new, old)
                )
                and _compatible(new, old)
            )
            or _corrects_bare(new, old)
        ):
            return self._weight(shared) + 0.5
        if "timezone" in new.slots & old.slots and new.values != old.values:
            return 1.0 + self._weight(shared)
        if "style" in new.slots & old.slots and (shared - _STYLE_WORDS or new.cue):
            return 1.0 + self._weight(shared)
        return 0.0

    def _weight(self, shared: frozenset[str]) -> float:
        """How much the words two statements share say (their rarity), the same whatever order the set holds."""
        return math.fsum(self._rarity(word) for word in shared)

    def _rarity(self, word: str) -> float:
        """``log(statements / statements with word) + 0.5`` (0.5 for a word no statement has)."""
        found = self._idf.get(word)
        if found is None:
            count = self._df.get(word, 0)
            found = math.log((len(self.subjects) + 1) / count) + 0.5 if count else 0.5
            self._idf[word] = found
        return found
