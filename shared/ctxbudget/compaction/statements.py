"""What a person said, as statements: facts, constraints, preferences, requests, questions; an assistant's decisions.

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

An assistant message yields only **decisions** (a choice made, a root cause found: "going with", "instead of",
"the fix is") and **open items** (what is still to do); narration ("Let me now read the key files") yields nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ._prose import FENCE, LIST_MARKER, SCAN_HEAD, SCAN_TAIL, continued, ends, is_prose, prose_of
from .harness import strip_harness
from .textscan import bounded, clip, content_words, sentences

__all__ = [
    "Statement",
    "StatementKind",
    "assistant_statements",
    "classify",
    "label_of",
    "says_yes",
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
    r"(?:that|this|it)(?:'s| is)? (?:sounds (?:good|great)|looks good|works|fine|great|perfect|correct|right))"
)
_SAYS_YES = re.compile(rf"^(?!no\b|nope\b)(?:please\s+)?{_ASSENT}\b", re.IGNORECASE)
_CHITCHAT = re.compile(  # "Yes, that sounds good.", "Okay, thanks again!"
    rf"^{_ASSENT}(?:[ ,]+(?:{_ASSENT}|thanks?|please|again|then|so|there|now))*[\s.!,:)]*$", re.IGNORECASE
)
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
_DONE = re.compile(r"^(?:done|fixed|implemented|all set|finished|completed?)[!.]+\s*", re.IGNORECASE)
"""An assistant message reporting its work finished: the sentence after it says what changed."""
_INTRODUCES = re.compile(r"\b(?:show|shows|display|displays|look|looks|like|print|prints|output|outputs|be|is|are)$")
_ASSENTED = r"(?:(?:ok(?:ay)?|yes|yeah|yep|sure|fine|no|nah|alright|great)\b[,.!]?\s+)"
_CHOICE = re.compile(
    rf"^{_ASSENTED}*(?:let'?s go with|i'?ll (?:go|stick) with|i'?ll take|we'?ll go with|go with|i (?:choose|pick)\b|"
    r"(?:option|choice|approach|plan) (?:[0-9a-d]|one|two|three)\b"
    r"(?=\s*(?:[,.!;:)-]|$|(?:please|then|for now|it is)\b)))"
    rf"|^{_ASSENTED}+[\w\s'-]{{1,60}}\bis fine\b",
    re.IGNORECASE,
)
"""A reply choosing among what was offered: the user's decision, not a fact ("I'll go with Option 1.")."""
_STRONG_DECISION = re.compile(
    r"\b(?:decided|decision|chose|choose to|opted|settled on|going with|go with|root cause|instead of|rather than|"
    r"the fix (?:is|was)|the (?:issue|problem|bug|cause) (?:is|was)|turns out|switch(?:ed|ing)? to|we will use|"
    r"i will use|i'll use|we'll use|the plan is|plan:)\b",
    re.IGNORECASE,
)
_COMMITMENT = re.compile(
    r"^(?:ok(?:ay)?,? |great,? |perfect,? |thanks?,? )?(?:i|we)(?:'ll| will| am going to|'m going to| shall) "
    r"(?:now |then |also |go ahead and )?(?:proceed|go ahead|process|book|cancel|refund|issue|apply|downgrade|upgrade|"
    r"transfer|submit|deploy|merge|switch|use|keep|drop|replace|revert|roll back|ship)\b",
    re.IGNORECASE,
)
"""A commitment to act on the user's behalf ("I will proceed with downgrading all your reservations"), not narration
of what the agent is about to look at ("I'll read the key files")."""
_NARRATION = re.compile(
    r"^(?:let me|let's|i'll|i will|i'm going to|i am going to|i need to|i should|i want to|now|next|first|then|"
    r"okay|ok|great|perfect|alright|good|sure|excellent|looking|checking|reading|running|searching|wait|hmm|"
    r"unless|maybe|perhaps|so let me|but wait)\b",
    re.IGNORECASE,
)
_DECISION_LABELS = frozenset({"decision", "decided", "plan", "conclusion", "resolution"})
"""Labels that say the sentence after them is a decision ("Decision: we will version the schema ...")."""
_INLINE_DECISION = re.compile(r"(?<=\s)(?:Decision|Plan|Decided|Conclusion):\s")
"""A decision's own label inside a sentence: what precedes it is another clause, left without its full stop."""
_OPEN = re.compile(
    r"\b(?:todo|to-do|next steps?:|next step is|still (?:need|have) to|remaining:|open question|follow[- ]up|"
    r"blocked (?:on|by)|not yet (?:done|fixed|implemented)|left to do|pending)\b",
    re.IGNORECASE,
)
_ANAPHOR = re.compile(r"^(?:this|that|these|those|it|they)\b(?!-)", re.IGNORECASE)
"""How a sentence opens that says more of what the sentence before it named ("This order is ...", "It fails ...")."""
_ASKED_WITH_CHOICES = re.compile(r"\?\s*\([^()\n]{1,30}\)[.!]?$")
"""A question that ends on the answers it offers ("Do you confirm to proceed with this modification? (yes/no)")."""
_MAX_SNIPPETS = 4
_HEADING = re.compile(r"^#{1,6}\s")
_HAS_VALUE = re.compile(r"\d|[A-Z][a-z]+ [A-Z][a-z]+|\b[\w-]+[./@][\w./-]+|\b[A-Z]{2,}\b|\w+_\w+")
_SPECIFIC = re.compile(
    r"`[^`\n]{2,80}`|\b[\w.-]*\d[\w.-]*\b|[\w-]+/[\w./-]+|\b\w+\.(?:py|js|ts|go|rs|md|json|toml|yaml|yml)\b"
)
_RESULT = re.compile(
    r"\b(?:pass(?:es|ed)?|fail(?:s|ed)?|works?|fixed|broken|succeeds?|succeeded|confirm(?:s|ed))\b", re.I
)
_REASON = re.compile(
    r"\b(?:because|since the|which means|so that|caused by|due to|the reason|this means|that means|therefore)\b", re.I
)


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


def _body(sentence: str) -> str:
    """The sentence without its list marker, Markdown emphasis and label: what is classified."""
    sentence = LIST_MARKER.sub("", sentence, count=1).replace("**", "").replace("__", "")
    label = _LABEL.match(sentence)
    return sentence[label.end() :] if label else sentence


def classify(sentence: str) -> StatementKind | None:  # noqa: PLR0911  # one answer per kind, in priority order
    """The kind of one user sentence, or ``None`` for chit-chat, markers and fragments."""
    body = " ".join(_body(sentence).split())[:_CLASSIFY_CHARS]
    words = body.split()
    if not body or _ONLY_MARKER.match(body) or _CHITCHAT.match(body) or _HEADING.match(sentence.strip()):
        return None
    if body.rstrip("*_`) ").endswith(":") and not any(ch.isdigit() for ch in body):
        if _POLITE_REQUEST.match(body) or _IMPERATIVE.match(body):
            return "request"  # "Implement this spec:" asks for what follows
        return None  # it introduces what follows ("Consider the following model:"), which is read on its own
    if body.endswith("?") or (_QUESTION_START.match(body) and len(words) < 30):
        return "question" if not _POLITE_REQUEST.match(body) else "request"
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
    if len(content_words(body)) < 2 and not _HAS_VALUE.search(body):
        return None  # "Yes, that sounds good.": nothing in it a summary could keep
    return "fact"


def user_statements(text: str) -> list[Statement]:
    """The statements of a user message, in order (harness text and examples removed; a paste is one statement)."""
    text = strip_harness(bounded(text))
    if not text:
        return []
    prose, pasted = prose_of(text)
    classified = [
        (kind, s, first)
        for line in continued(prose.splitlines())
        for first, s in enumerate(sentences(line))
        if (kind := classify(s)) is not None
    ]
    out = _group([(kind, s, first == 0) for kind, s, first in classified])
    if pasted:
        lines = text.count("\n") + 1
        first = next((line for line in text.splitlines() if line.strip()), "")
        out.append(Statement("paste", f"pasted {lines:,} lines, {len(text):,} chars, starting: {clip(first, 100)}"))
    return out


def _group(classified: list[tuple[StatementKind, str, bool]]) -> list[Statement]:
    """Sentences to statements: each is one, and a sentence that qualifies the one before it on its line joins it.

    A sentence that starts a line (a list item, the next line of a list without markers) is never joined to the
    line before: "- MODIFY: source files" and "- DO NOT MODIFY: tests" are two rules.
    """
    out: list[Statement] = []
    for kind, given, starts_line in classified:
        sentence = LIST_MARKER.sub("", given, count=1)
        previous = out[-1] if out else None
        dependent = _DEPENDENT.match(_body(sentence)) is not None
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


def _decides(body: str) -> bool:
    """A decision phrase ("the fix is", "going with") followed by what was decided (specific, or 3 content words).

    Not a status: "The fix is complete.", "The bug is confirmed."
    """
    found = _STRONG_DECISION.search(body)
    if found is None:
        return False
    rest = body[found.end() :]
    return _SPECIFIC.search(rest) is not None or len(content_words(rest)) >= 3


def assistant_statements(text: str) -> list[Statement]:
    """The decisions, findings and open items of an assistant message; narration yields nothing.

    A **finding** is a sentence that states what the agent found, with something specific in it (a path, an id, a
    number, code in backticks) or a reason ("because", "which means", "caused by"); "Let me check the logs" is not.
    """
    text = strip_harness(bounded(text))
    out: list[Statement] = []
    if FENCE in text:
        parts = text.split(FENCE)
        for block in parts[1::2][:_MAX_SNIPPETS]:  # a one- or two-line block is a command or value given to use
            code = [ln for ln in block.splitlines()[1:] if ln.strip()] if "\n" in block else [block]
            if 0 < len(code) <= 2 and sum(map(len, code)) <= 200:
                out.append(Statement("finding", clip(" ; ".join(ln.strip() for ln in code), 220)))
        text = "\n".join(parts[0::2])  # longer code blocks are not statements
    if len(text) > SCAN_HEAD + SCAN_TAIL:
        text = ends(text)
    said = sentences(text)
    done = _done_report(said)
    carried = False  # the sentence was said with the finding before it
    for at, sentence in enumerate(said):
        if carried:
            carried = False
            continue
        body = LIST_MARKER.sub("", _body(sentence).strip(), count=1)
        asks = body.endswith(("?", ":")) or _ASKED_WITH_CHOICES.search(body) is not None  # "Do you confirm? (yes/no)"
        if len(body.split()) < 4 or asks or not is_prose(body) or sentence.lstrip()[:1] == "|":
            continue  # a table's row ("| `explain.go` | Modify ... |") says nothing without its header and rows
        narration = _NARRATION.match(body) is not None
        labelled = (label_of(LIST_MARKER.sub("", sentence.strip(), count=1)) or "").lower() in _DECISION_LABELS
        if _OPEN.search(body):
            out.append(Statement("open", clip(body, 240)))
        elif (
            labelled
            or _COMMITMENT.match(body)
            or (_decides(body) and not (narration and "instead" not in body.lower()))
        ):
            inline = _INLINE_DECISION.search(body)  # "... the tests pass Decision: we will ..." (no full stop)
            out.append(Statement("decision", clip(body[inline.start() :] if inline else body, 280)))
        elif not narration and (_SPECIFIC.search(body) or (_REASON.search(body) and _RESULT.search(body))):
            # A list item's label is part of what it found ("Too long: `a1b2c3d4e5f6789` → returns found=false")
            full = LIST_MARKER.sub("", sentence.strip(), count=1).replace("**", "").replace("__", "").strip()
            found = full if label_of(full) else body
            after = said[at + 1] if at + 1 < len(said) else ""
            carried = _says_more_of(after) and len(found) + len(after) < 280
            out.append(Statement("finding", clip(f"{found} {after.strip()}" if carried else found, 280)))
    if done is None:
        return out
    return [done, *(st for st in out if f"Done: {st.text}" != done.text)]  # the report is said once, as done


def _says_more_of(sentence: str) -> bool:
    """``sentence`` says more of the thing the sentence before it named, and nothing a reader can place alone.

    "This order is already in a 'cancelled' status." names no order: said after "I've retrieved the details for
    order #W2586676." it is that order's status, so the two are one finding. A sentence that is a finding, decision,
    open item or question of its own is not carried.
    """
    body = LIST_MARKER.sub("", _body(sentence).strip(), count=1)
    return (
        _ANAPHOR.match(body) is not None
        and len(body.split()) >= 4
        and not body.endswith(("?", ":"))
        and _SPECIFIC.search(body) is None
        and _OPEN.search(body) is None
        and _STRONG_DECISION.search(body) is None
        and is_prose(body)
    )


def _done_report(said: list[str]) -> Statement | None:
    """What a message reporting finished work says changed ("Done! Now both flows use the dynamic agent name:")."""
    done = _DONE.match(said[0]) if said else None
    if done is None:
        return None
    report = (said[0][done.end() :].strip() or (said[1] if len(said) > 1 else "")).rstrip(":").strip()
    if len(report.split()) < 4 or _INTRODUCES.search(report):
        return None  # "Now the editor flow will show:" stands for the block after it
    return Statement("finding", clip(f"Done: {report}", 280))
