"""What a person said, as statements: facts, constraints, preferences, requests, questions and choices.

The user's words are the first source of what a compacted session must keep, and they stay the user's words: a
statement is a whole sentence of a message, never cut mid-word, and a sentence that only qualifies the one before
it ("Never exceed without explicit approval.", "Use it in confirmations.") stays with it. Each statement
gets a kind from its structure:

* a **question** ends with ``?`` or opens with a question word; a **request** opens with an imperative verb (or
  "please", "can you", "let's"). Neither is a constraint, whatever words it holds;
* a **constraint** states a rule (never, always, must, do not, only, at most, without approval, ...) and a
  **preference** a wish about how to work or answer (prefer, rather, I want, please keep ...);
* a short reply choosing what was offered ("ok, option 2", "I'll go with Option 1.", "yes, X is fine") is the
  user's **decision**;
* any other declarative sentence of three words or more is a **fact**: a fact needs no digit.

Chit-chat ("thanks!", "ok"), list markers and harness text are not statements. A long paste is not read sentence by
sentence: its opening prose is, and the paste itself is one statement pointing to its full text.

What an assistant message says is read by :mod:`~ctxbudget.compaction.agent_statements`, with the same
:class:`Statement`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ._prose import LIST_MARKER, continued, prose_of, unbold, word_count
from .harness import strip_comments, strip_harness
from .textscan import bounded, clip, content_words, sentences

__all__ = [
    "HEADING",
    "Statement",
    "StatementKind",
    "classify",
    "label_of",
    "says_yes",
    "statement_body",
    "user_statements",
]

StatementKind = Literal[
    "fact", "constraint", "preference", "request", "question", "decision", "finding", "open", "paste"
]

_CLASSIFY_CHARS = 1_000
"""Characters of a sentence its kind is read from (a kind shows in how a sentence starts and what it says first)."""
"""A message whose kept sentences fit in this many characters is one statement (its sentences qualify each other)."""

_ONLY_MARKER = re.compile(r"^(?:[-*•>#|`~=_]+|\d{1,3}[.)]?|[a-z][.)])$")
_NOT_LABEL = r"(?!(?:is|are|was|were|has|have|had|be|been|will|can|must|should|do|does|did)\b)"
_LABEL = re.compile(
    rf"^({_NOT_LABEL}[A-Za-z][\w'-]{{0,30}}(?: {_NOT_LABEL}[A-Za-z][\w'-]{{0,30}}){{0,2}}):\s+(?=\S)",
    re.IGNORECASE,
)
_ASSENT = (
    r"(?:thanks?(?: you)?(?: so much| a lot)?|thx|ty|great|cool|nice|perfect|awesome|excellent|sounds (?:good|great)|"
    r"looks good|lgtm|yes|yep|yeah|no|nope|sure|ok|okay|k|got it|understood|hi|hello|hey|good morning|"
    r"go ahead|continue|proceed|done|right|correct|exactly|agreed|fine|alright|all right|makes sense|"
    r"(?:that|this|it)(?:'s| is)? (?:(?:sounds|looks) (?:good|great|perfect|fine|wonderful|excellent)|works|fine|great"
    r"|perfect|correct|right))"
)
_THANKS = re.compile(
    r"^(?:(?:i see|oh|ah|ok|okay|alright|got it|understood)[,.!]?\s+)?"
    r"(?:thanks?(?: you)?|many thanks|i appreciate (?:it|that|this|your help))\b[\s,!]*",
    re.IGNORECASE,
)
"""Gratitude: with little after it ("Thank you for finding this solution.", "I see, thanks for letting me know.") the
sentence says nothing to keep."""
_REACTION = re.compile(
    r"^(?:that|this|(?:all of )?(?:those|these)(?: \w+)?)(?:'s| is| was| are| were| sounds| seems| looks)"
    r"(?: (?:much|a lot|way|far|really|very|quite|so|too|a bit|even|still|definitely|actually))*"
    r" (?:more|less|better|worse|great|good|perfect|reasonable|expensive|cheap|helpful|fine|ok|okay|acceptable"
    r"|wonderful|fantastic|excellent|amazing|unfortunate|disappointing|surprising)\b",
    re.IGNORECASE,
)
"""A reaction to what was just offered ("That's much more reasonable!"): with little after it, nothing to keep."""
_NEGATION = re.compile(r"\b(?:not|no|never|wrong|incorrect|isn't|wasn't|aren't|doesn't|didn't)\b|n't\b", re.IGNORECASE)
"""A reaction that objects ("That's not what I asked.") is a correction, whatever else it says."""
_SAYS_YES = re.compile(rf"^(?!no\b|nope\b)(?:please\s+)?{_ASSENT}\b", re.IGNORECASE)
_CHITCHAT = re.compile(  # "Yes, that sounds good.", "Okay, thanks again!"
    rf"^{_ASSENT}(?:[ ,]+(?:{_ASSENT}|thanks?|please|again|then|so|there|now))*[\s.!,:)]*$", re.IGNORECASE
)
_CONFUSION = re.compile(
    r"^(?:(?:i think|i believe|it seems(?: like)?|it looks like|sorry,?|hmm,?|oh,?|wait,?)\s+)?"
    r"(?:there(?:'s| is| was| (?:might|may|must|seems to|could) (?:have been|be))"
    r"|we(?:'re| are) (?:encountering|having))\s*(?:(?:a|some|slight|a bit of|an?)\s+)*"
    r"(?:misunderstanding|confusion|mix-?up)\b",
    re.IGNORECASE,
)
"""A sentence that says only that the conversation went wrong ("I think there might be some mix-up.", "I believe
there is some confusion regarding my itinerary."), whatever words follow it to say about what."""
_SUBJECT_WORD = r"(?:you|we|they|i|he|she|it|there|the|this|that|these|those|any|my|our|your|its|their)"
_QUESTION_START = re.compile(
    rf"^(?:(?:is|are|was|were|does|do|did|has|have|had|will|would|should|shall|can|could|may|might)\s+{_SUBJECT_WORD}"
    r"|(?:what|why|how|when|where|which|who|whom|whose)(?:'s|\s+(?:is|are|was|were|does|do|did|has|have|had|will|"
    r"would|should|can|could|about|if|many|much|long|often|exactly)))\b",
    re.IGNORECASE,
)
_LEAD = re.compile(
    r"^(?:(?:now|also|then|next|and|so|ok|okay|first|finally|just|please|pls|yes|yeah|sure|great|thanks|right|"
    r"in that case|if so|if possible|instead|meanwhile|in the meantime),?\s+)"
    r"{1,4}",
    re.IGNORECASE,
)
_FINITE = re.compile(
    r"^\S+ (?:\w+ed|is|are|was|were|has|have|had|does|did)\b"
    r"|^\S+ (?!(?:the|a|an|all|this|that|these|those|my|our|your|some|any|each|every|its|their|with|in|on|for|to|of|"
    r"from|into|up|out|and|or)\b)\S+ (?:\w+s|\w+ed|is|are|was|were|has|have|had)\b",
    re.IGNORECASE,
)
"""A verb in second or third place: "Load test peaked ..." is a statement about a load test, not an order to load."""
_POLITE_REQUEST = re.compile(
    r"^(?:please|pls|can you|could you|would you|will you|can we|could we|let'?s|lets)\b", re.I
)
_PLEASE = re.compile(r"\b(?:please|pls)\b", re.IGNORECASE)
_CLAUSE_THEN_ASK = re.compile(r"^[^,?]{3,120},\s*(?:then\s+|so\s+)?(?:can|could|would|will) (?:you|we)\b", re.I)
"""A polite request after the clause that says why or when ("Since I can't remove just Sophia, can we downgrade all
passengers to economy instead?", "If that's not possible, could you cancel it?"): a request, not a question."""
_IMPERATIVE = re.compile(
    r"^(?:add|analy[sz]e|apply|audit|benchmark|build|bump|change|check|clean|commit|compare|continue|convert|copy|"
    r"create|debug|delete|deploy|describe|document|do|download|drop|edit|ensure|explain|extract|find|finish|fix|"
    r"generate|get|give|go|help|implement|improve|include|inline|install|investigate|list|load|look|make|measure|"
    r"merge|migrate|modify|move|open|optimi[sz]e|patch|port|print|profile|push|put|read|rebase|rebuild|refactor|"
    r"remove|rename|replace|reproduce|rerun|restart|retry|revert|review|rewrite|run|save|search|send|set|setup|"
    r"ship|show|simplify|split|start|stop|summari[sz]e|switch|tell|test|trace|try|type-annotate|undo|update|"
    r"upgrade|verify|wire|write)\b",
    re.IGNORECASE,
)
_STANDING = re.compile(
    r"^(?:use|keep|stick|avoid|prefer|report|respond|reply|answer|format|always|never|only|don'?t|do not|"
    r"from now on|going forward)\b",
    re.IGNORECASE,
)
_CONSTRAINT = re.compile(
    r"\b(?:never|always|must|mustn'?t|do not|don'?t|dont|cannot|can'?t|may not|avoid|make sure|ensure|"
    r"only (?:use|run|call|allow|deploy|push|write|read|touch|edit|change|accept|support|ship|target)|use only|"
    r"(?:you|we) (?:can|may) only|"
    r"required?|requirement|at most|at least|no more than|not allowed|forbidden|prohibited|under no circumstances|"
    r"without (?:\w+ ){0,2}(?:approval|consent|permission|review|asking)|until|no later than|no external|"
    r"shouldn'?t|should not)\b",
    re.IGNORECASE,
)
_CONDITIONAL = re.compile(
    rf"^(?:if|when|whenever|before|after|once|unless)\b[^,]{{3,120}},\s*(?:then\s+)?(?:please\s+)?"
    rf"(?:{_IMPERATIVE.pattern[4:-3]}|stop|escalate|ask|refuse|wait|notify|alert|tell)\b",
    re.IGNORECASE,
)
"""A conditional instruction ("If a request could harm a third party, stop and escalate") is a rule."""
_PREFERENCE = re.compile(
    r"\b(?:prefers?|preferred|preference|rather|wants?|wanted|i'?d like|i would like|i like|i'?d prefer|"
    r"\b\w+, not \w+|"
    r"please (?:keep|use|make|stick|write|answer|reply|respond|format)|in (?:\w+ ){0,2}style|tone)\b",
    re.IGNORECASE,
)
_DEPENDENT = re.compile(
    r"^(?:never|always|don'?t|do not|only|otherwise|unless|except|but|and|also|so|then|or|it|its|it's|this|that|"
    r"these|those|they|them|their|such|which|both|neither|either)\b|^\w+ (?:it|them|this|that|these|those)\b",
    re.IGNORECASE,
)
_PRIORITY: dict[str, int] = {"constraint": 3, "preference": 2, "fact": 1}
_ASSENTED = r"(?:(?:ok(?:ay)?|yes|yeah|yep|sure|fine|no|nah|alright|great)\b[,.!]?\s+)"
_CHOICE = re.compile(
    rf"^{_ASSENTED}*(?:let'?s go with|i'?ll (?:go|stick) with|i'?ll take|we'?ll go with|go with|i (?:choose|pick)\b|"
    r"(?:option|choice|approach|plan) (?:[0-9a-d]|one|two|three)\b"
    r"(?=\s*(?:[,.!;:)-]|$|(?:please|then|for now|it is)\b)))"
    rf"|^{_ASSENTED}+[\w\s'-]{{1,60}}\bis fine\b",
    re.IGNORECASE,
)
"""A reply choosing among what was offered: the user's decision, not a fact ("I'll go with Option 1.")."""
HEADING = re.compile(r"^#{1,6}\s")
"""A Markdown heading's marker: the line is the title of what follows, not a statement."""
_HAS_VALUE = re.compile(r"\d|[A-Z][a-z]+ [A-Z][a-z]+|\b[\w-]+[./@][\w./-]+|\b[A-Z]{2,}\b|\w+_\w+")


@dataclass(frozen=True)
class Statement:
    """One statement: its kind and its text (whole sentences in the speaker's words, on one line)."""

    kind: StatementKind
    text: str


def says_yes(text: str) -> bool:
    """``text`` opens by agreeing ("Yes, please proceed ...", "yeah check what's triggering gc", "Go ahead.")."""
    return _SAYS_YES.match(text) is not None


def label_of(text: str) -> str | None:
    """A leading label of at most four words and a colon ("HARD CONSTRAINT:", "Quick update:"), or ``None``."""
    match = _LABEL.match(text)
    return match.group(1).strip() if match else None


def statement_body(sentence: str) -> str:
    """The sentence without its list marker, Markdown emphasis and label: what is classified."""
    sentence = unbold(LIST_MARKER.sub("", sentence, count=1))
    label = _LABEL.match(sentence)
    return sentence[label.end() :] if label else sentence


def _says_little(rest: str) -> bool:
    """``rest`` of a sentence names nothing specific: no digit, three content words at most ("regarding my trip")."""
    return not any(ch.isdigit() for ch in rest) and len(content_words(rest)) <= 3


def classify(sentence: str) -> StatementKind | None:  # noqa: PLR0911  # one answer per kind, in priority order
    """The kind of one user sentence, or ``None`` for chit-chat, markers and fragments."""
    body = " ".join(statement_body(sentence).split())[:_CLASSIFY_CHARS]
    words = body.split()
    if not body or _ONLY_MARKER.match(body) or _CHITCHAT.match(body) or HEADING.match(sentence.strip()):
        return None
    if (thanks := _THANKS.match(body)) and _says_little(body[thanks.end() :]):
        return None  # "Thanks for your help!", "Thank you for making these changes."
    if (
        (reaction := _REACTION.match(body))
        and _says_little(rest := body[reaction.end() :])
        and not _NEGATION.search(rest)
    ):
        return None  # "That's much more reasonable!", "All of those options are more expensive than I expected."
    if (confused := _CONFUSION.match(body)) and _says_little(body[confused.end() :]):
        return None  # "I think there might be some mix-up.": the sentences after it say what was mixed up
    if body.rstrip("*_`) ").endswith(":") and not any(ch.isdigit() for ch in body):
        if _POLITE_REQUEST.match(body) or _IMPERATIVE.match(body):
            return "request"  # "Implement this spec:" asks for what follows
        return None  # it introduces what follows ("Consider the following model:"), which is read on its own
    if body.endswith("?") or (_QUESTION_START.match(body) and len(words) < 30):
        asks = _POLITE_REQUEST.match(_LEAD.sub("", body)) or _CLAUSE_THEN_ASK.match(body)  # "Yes, can you cancel it?"
        return "request" if asks else "question"
    if _CHOICE.match(body) and len(words) <= 16:
        return "decision"  # the user picks what was offered: "ok, option 2, detail view only for now"
    if _STANDING.match(body) or _CONSTRAINT.search(body) or _CONDITIONAL.match(body):
        return "preference" if _PREFERENCE.search(body) and not _CONSTRAINT.search(body) else "constraint"
    if _PREFERENCE.search(body):
        return "preference"
    label = _LABEL.match(LIST_MARKER.sub("", sentence.strip(), count=1))
    labelled = label is not None and label.group(1).isupper()  # "GOAL STATE:" types a statement; "Step 3:" does not
    verb = _LEAD.sub("", body)  # "now also add a replica": the request starts at "add"
    # "Please proceed with ...", "Yes, please proceed ...": asks, whatever the verb
    polite = _POLITE_REQUEST.match(verb) or _PLEASE.search(body[: len(body) - len(verb)])
    if polite or (_IMPERATIVE.match(verb) and not labelled and not _FINITE.match(verb)):
        return "request"
    if (len(content_words(body)) < 2 or word_count(body) < 3) and not _HAS_VALUE.search(body):
        return None  # "Yes, that sounds good.", "I already removed": nothing in it a summary could keep alone
    return "fact"


_INTRODUCING = re.compile(r"(?<=\w)\s*:\s*$")
"""The colon a sentence ends on when it introduces what follows it (a paste, an example, a list)."""


def user_statements(text: str) -> list[Statement]:
    """The statements of a user message, in order (harness text, HTML comments and examples removed).

    A paste is one statement. A template's guidance in comments (``<!-- Please be sure to check out our contributing
    guidelines``) is no one's statement: its author never saw it once rendered.
    """
    text = strip_comments(strip_harness(bounded(text)))
    if not text:
        return []
    prose, pasted = prose_of(text)
    classified: list[tuple[StatementKind, str, bool]] = []
    for line in continued(_without_headings(prose.splitlines())):
        starts = True  # the sentence starts its line: only a list marker ("1.", "-") may stand before it
        for sentence in sentences(line):
            if (kind := classify(sentence)) is not None:
                # "copy pasting claude output leaves weird line breaks:" introduced what followed it, which a summary
                # does not show beside it: the colon would leave it reading as a fragment
                classified.append((kind, _INTRODUCING.sub("", sentence), starts))
            starts = starts and _ONLY_MARKER.match(" ".join(statement_body(sentence).split())) is not None
    out = _group(classified)
    if pasted:
        lines = text.count("\n") + 1
        first = next((line for line in text.splitlines() if line.strip()), "")
        out.append(Statement("paste", f"pasted {lines:,} lines, {len(text):,} chars, starting: {clip(first, 100)}"))
    return out


_HEADING_WORDS = 4


def _without_headings(lines: list[str]) -> list[str]:
    """``lines`` without the short titles between paragraphs ("Medium Severity" in a pasted review finding).

    A line of at most :data:`_HEADING_WORDS` words, with no digit and no closing punctuation, that would read as a fact,
    between blank lines (or the text's ends) of a text that says more: it names what follows. A one-line reply ("Mia
    Kim") is no title, nor an order ("Use PostgreSQL").
    """
    if sum(1 for line in lines if line.strip()) < 2:
        return lines

    def blank(index: int) -> bool:
        return not 0 <= index < len(lines) or not lines[index].strip()

    return [
        line
        for index, line in enumerate(lines)
        if not (
            line.strip()
            and len(line.split()) <= _HEADING_WORDS
            and line.rstrip()[-1] not in ".!?:;,"
            and not any(ch.isdigit() for ch in line)
            and blank(index - 1)
            and blank(index + 1)
            and classify(line) == "fact"  # "Use PostgreSQL" between paragraphs is an order, not a title
        )
    ]


def _group(classified: list[tuple[StatementKind, str, bool]]) -> list[Statement]:
    """Sentences to statements: each is one, and a sentence that qualifies the one before it on its line joins it.

    A sentence that starts a line (a list item, the next line of a list without markers) is never joined to the
    line before: "- MODIFY: source files" and "- DO NOT MODIFY: tests" are two rules.
    """
    out: list[Statement] = []
    for kind, given, starts_line in classified:
        sentence = LIST_MARKER.sub("", given, count=1)
        previous = out[-1] if out else None
        dependent = _DEPENDENT.match(statement_body(sentence)) is not None
        joins = (
            not starts_line
            and previous is not None
            and previous.kind in _PRIORITY
            and (kind in _PRIORITY or (dependent and kind == "request"))
            and (dependent or len(sentence.split()) < 4)
            and len(previous.text) + len(sentence) < 400
        )
        sentence = LIST_MARKER.sub("", sentence, count=1)
        if previous is not None and joins:
            merged: StatementKind = max(
                previous.kind, kind if kind in _PRIORITY else previous.kind, key=_PRIORITY.__getitem__
            )
            out[-1] = Statement(merged, f"{previous.text} {clip(sentence, 300)}")
        else:
            out.append(Statement(kind, clip(sentence, 300)))
    return out
