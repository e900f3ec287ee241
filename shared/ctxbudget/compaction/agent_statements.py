"""What an assistant message says, as statements: its decisions, findings and open items; narration is nothing.

A **decision** is a choice made or a cause found ("going with", "instead of", "the fix is", "the root cause was"), or
a commitment to act for the user ("I will proceed with cancelling order #W7342738"); an **open item** is what is
still to do ("TODO", "still need to", "blocked on"); a **finding** is a sentence that states what the agent found,
with something specific in it (a path, an id, a number, code in backticks) or a reason with a result ("fails
because ..."). A sentence that only says more of what the finding before it named ("This order is already
cancelled.") is said with it. Narration ("Let me now read the key files"), questions and a table's rows yield
nothing; a message that reports its work done ("Done! Both flows now ...") is one finding, ``Done: ...``.
"""

from __future__ import annotations

import re

from ._prose import FENCE, LIST_MARKER, SCAN_HEAD, SCAN_TAIL, ends, is_prose, unbold, word_count
from .harness import strip_harness
from .statements import HEADING, Statement, label_of, statement_body
from .textscan import bounded, clip, content_words, sentences

__all__ = ["assistant_statements"]

_DONE = re.compile(r"^(?:done|fixed|implemented|all set|finished|completed?)[!.]+\s*", re.IGNORECASE)
"""An assistant message reporting its work finished: the sentence after it says what changed."""

_INTRODUCES = re.compile(r"\b(?:show|shows|display|displays|look|looks|like|print|prints|output|outputs|be|is|are)$")

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

_OPEN_LABELS = frozenset({"todo", "to-do", "to do", "pending", "next", "next step", "next steps", "remaining", "open"})
"""Labels that say the sentence after them is still to do ("TODO: fix the flaky test", "Pending: update the docs")."""

_INLINE_DECISION = re.compile(r"(?<=\s)(?:Decision|Plan|Decided|Conclusion):\s")
"""A decision's own label inside a sentence: what precedes it is another clause, left without its full stop."""

_OPEN = re.compile(
    r"\b(?:todo|to-do|next steps?:|next step is|still (?:need|have) to|remaining:|open question|follow[- ]up|"
    r"blocked (?:on|by)|not yet (?:done|fixed|implemented)|left to do|pending(?=:))\b",
    re.IGNORECASE,
)

_FILLER = re.compile(
    r"^(?:great|good|perfect|excellent|nice|ok(?:ay)?|sure|alright|ah|oh|got it)(?: (?:question|catch|point))?"
    r"[!.,]+\s+(?=\S)",
    re.IGNORECASE,
)
"""What an agent opens a sentence with before what it found ("Great question! `settings.local.json` overrides ..."):
not narration, and not part of the finding."""

_PLANNED_CHANGE = re.compile(
    r"^(?:so |then )?(?:i|we) (?:should|need to|must|have to) (?:also |first |now )?"
    r"(?:update|change|add|remove|replace|rename|fix|refactor|move|switch|implement|extend|support|drop|split)\b",
    re.IGNORECASE,
)
"""A change the agent concluded it must make ("I should update it to also support the `paths` glob pattern option,
matching the updated prompt template."): a decision, with its reason, not narration of the next step."""
_PLANNED_WORDS = 8

_WILL_CHANGE = re.compile(
    r"^(?:so |then |now )?(?:i|we)(?:'ll| will| am going to|'m going to)(?: now| then| also| first| just)? "
    r"(?:add|modify|change|update|remove|replace|rename|fix|refactor|move|switch|implement|batch|wrap|catch|set|cap|"
    r"limit|raise|lower|bump|pin|revert|drop|split|extract|inline|guard|skip)\b",
    re.IGNORECASE,
)
"""A change the agent says it makes, naming what ("I'll add `Hidden: true` to the command definition", "I'll batch at
20,000 for headroom"): with a value or code in it, a decision (with none, "I'll update the tests", narration)."""

_TOOL_FOR_STEP = re.compile(
    r"\b(?:i|we)(?:'ll| will| am going to|'m going to)(?: now| then| also| first)? use\s+"
    r"(?:`[^`\n]{1,40}`|(?:a |the )?(?:python |bash |shell |small )?(?:script|command|one-liner|tool)\b)"
    r"(?: command| tool)?\s+(?:again\s+)?to\b(?!\s+be\b)",  # "I'll use `getattr` to be safe" chose how the code works
    re.IGNORECASE,
)
"""How the agent says it will do the next step ("I'll use `sed` to perform this modification", "After creating the
script, I will use `curl` to upload it"): a command or a script and what it is for, not a choice."""

_ABOUT = re.compile(r"\s*(?:about|describing|describes|asking)\b", re.IGNORECASE)
"""What follows "the issue is" when the issue is the task's report, not a cause the agent found."""

_DEBUG_STEP = re.compile(
    r"\b(?:add(?:ing)? (?:a |some )?(?:debug(?:ging)?|print)|print debugging|debug prints?|to print)\b", re.IGNORECASE
)
"""A change that only instruments the code for a look ("I'll add a print statement in `code.py`", "modify it to
print `self._store`"): a step of the investigation, taken out again, not a decision about the work."""

_ASKS_USER = re.compile(r"^(?:please |kindly )?(?:let me know|tell me|confirm|share|provide)\b", re.IGNORECASE)
"""A sentence that asks the user for something ("Please let me know which red option you'd like to switch to."):
the user's answer is what counts, not the asking."""

_HYPOTHESIS = re.compile(r"^(?:if|suppose|assuming|what if|in case)\b", re.IGNORECASE)
"""A sentence that reasons about a case ("If `method` is `None`, it will crash."): a step of thinking, not a finding;
a decision or an open item it states is still one."""

_HEDGED = re.compile(
    r"^(?:(?:but|and|or|so|however),? )?"  # "But this might cause circular imports", "Or maybe they accept it"
    r"(?:(?:it|this|that|there) (?:might|may|could)|perhaps|possibly|probably|maybe|i (?:think|suspect|guess)"
    r"|it'?s possible)\b",
    re.IGNORECASE,
)
"""A sentence the agent hedges ("This might cause issues if ...", "I suspect the cache"): a guess it has not checked,
not a finding; a decision or an open item it states is still one. ("It seems the flight is not available" is how an
agent reports an error politely: a finding.)"""

_THINK = re.compile(r"^i think (?:that )?", re.IGNORECASE)

_LIMIT = re.compile(
    r"\b(?:(?:i|we)(?:['\u2019]m| am|['\u2019]re| are) (?:not able|unable) to"
    r"|(?:i|we) (?:can['\u2019]t|cannot|can not|won['\u2019]t be able to)"
    r"|(?:it|this|that)(?:['\u2019]s| is) not possible|(?:is|are) not (?:possible|allowed|permitted|eligible)"
    r"|(?:cannot|can['\u2019]t|can only) be|only (?:allows?|supports?|permits?|lets?)"
    r"|(?:does not|doesn['\u2019]t) (?:allow|permit))"
    r"\b(?! (?:find|see|tell|locate|seem|say|wait|help)\b)",
    re.IGNORECASE,
)
"""What the agent says cannot be done, or only one way ("I'm not able to remove just one passenger from an existing
reservation", "It is not possible to exchange a bookshelf for a camera", "Exchanges can only be made for delivered
orders"): a limit the rest of the work must keep to, a finding without any value in it. Not "I can't find ...",
which reports a search."""

_ANAPHOR = re.compile(r"^(?:this|that|these|those|it|they)\b(?!-)", re.IGNORECASE)
"""How a sentence opens that says more of what the sentence before it named ("This order is ...", "It fails ...")."""

_ASKED_WITH_CHOICES = re.compile(r"\?\s*\([^()\n]{1,30}\)[.!]?$")
"""A question that ends on the answers it offers ("Do you confirm to proceed with this modification? (yes/no)")."""

_MAX_SNIPPETS = 4

_SPECIFIC = re.compile(
    r"`[^`\n]{2,80}`|\b[\w.-]*\d[\w.-]*\b|[\w-]+/[\w./-]+|\b\w+\.(?:py|js|ts|go|rs|md|json|toml|yaml|yml)\b"
)

_RESULT = re.compile(
    r"\b(?:pass(?:es|ed)?|fail(?:s|ed)?|works?|fixed|broken|succeeds?|succeeded|confirm(?:s|ed))\b", re.I
)

_CHECKED = re.compile(
    r"\b(?:tests?|build|builds|lint|linters?|ci|checks|compiles?|compilation|type-?checks?|suite|reproduction)\b", re.I
)
"""What a verification ran ("All tests pass locally.", "Build, tests, and lint all pass."): with a result word, the
state of the work, a finding without any value in it."""

_EXPECTED = re.compile(r"\b(?:might|may|could|should|would|will|won't|wouldn't|shouldn't)\b", re.I)
"""A result expected, not seen ("The tests should pass now", "CI might fail on Windows")."""

_REASON = re.compile(
    r"\b(?:because|since the|which means|so that|caused by|due to|the reason|this means|that means|therefore)\b", re.I
)


def _commits(body: str) -> bool:
    """A commitment to act that names what it does ("I will proceed to add 3 checked bags").

    Not "I'll apply this change." (the change it means is the one said before it), nor "I'll use a safer way.".
    """
    found = _COMMITMENT.match(body)
    return found is not None and _names_what(body[found.end() :])


def _names_what(rest: str) -> bool:
    """What follows a decision's or a commitment's phrase says what: something specific, or three content words."""
    return _SPECIFIC.search(rest) is not None or len(content_words(rest)) >= 3


def _limits(body: str) -> bool:
    """``body`` says what cannot be done, or only one way, and what (:data:`_LIMIT`, two content words after it)."""
    limit = _LIMIT.search(body)
    return limit is not None and len(content_words(body[limit.end() :])) >= 2


def _checked(body: str) -> bool:
    """What a verification gave ("All tests pass locally."), not what one is expected to give ("should pass")."""
    return _CHECKED.search(body) is not None and _EXPECTED.search(body) is None


def _decides(body: str) -> bool:
    """A decision phrase ("the fix is", "going with") followed by what was decided (specific, or 3 content words).

    Not a status: "The fix is complete.", "The bug is confirmed."
    """
    found = _STRONG_DECISION.search(body)
    if found is None:
        return False
    rest = body[found.end() :]
    if _ABOUT.match(rest):
        return False  # "The issue is about removing a required column.": what the task says, not a cause found
    return _names_what(rest)


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
            snippet = " ; ".join(ln.strip() for ln in code)
            if 0 < len(code) <= 2 and sum(map(len, code)) <= 200 and _says_something(snippet):
                out.append(Statement("finding", clip(snippet, 220)))
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
        body = _FILLER.sub("", LIST_MARKER.sub("", statement_body(sentence).strip(), count=1), count=1)
        changes = _WILL_CHANGE.match(body) is not None and _SPECIFIC.search(body) is not None
        asks = not changes and (
            body.rstrip("*_ ").endswith(("?", ":"))  # "**Default behavior (`entire enable`):**" introduces
            or _ASKED_WITH_CHOICES.search(body) is not None  # "Do you confirm? (yes/no)"
            or _ASKS_USER.match(body) is not None
        )
        row = sentence.lstrip()[:1] == "|" or (" | " in body and body.rstrip().endswith("|"))
        # "### What changed since ...": a title; "## Root Cause: `gh auth` never runs" says what it found
        row = row or (HEADING.match(sentence.lstrip()) is not None and ": " not in sentence)
        if len(body.split()) < 4 or asks or not is_prose(body) or row:
            out.extend(_quoted_figure(sentence))  # "Total Cost: $239" says what it costs in three words
            continue  # a table's row ("| `explain.go` | Modify ... |") says nothing without its header and rows
        unhedged = _THINK.sub("", body, count=1)  # "I think I should move the check": a change it plans
        planned = (
            changes or (_PLANNED_CHANGE.match(unhedged) is not None and len(body.split()) >= _PLANNED_WORDS)
        ) and _DEBUG_STEP.search(body) is None  # instrumenting the code to look at it: a step, not a decision
        if _TOOL_FOR_STEP.search(body):
            continue  # "I'll use `sed` to perform this modification": how the next step is done, not a choice
        narration = _NARRATION.match(body) is not None and not planned
        label = (label_of(unbold(LIST_MARKER.sub("", sentence.strip(), count=1))) or "").lower()
        labelled = label in _DECISION_LABELS
        if _OPEN.search(body) or label in _OPEN_LABELS:
            out.append(Statement("open", clip(body, 240)))
        elif (
            labelled
            or planned
            or _commits(body)
            or (_decides(body) and not (narration and "instead" not in body.lower()))
        ):
            inline = _INLINE_DECISION.search(body)  # "... the tests pass Decision: we will ..." (no full stop)
            out.append(Statement("decision", clip(body[inline.start() :] if inline else body, 280)))
        elif (
            not narration
            and _HYPOTHESIS.match(body) is None
            and _HEDGED.match(body) is None
            and (
                _SPECIFIC.search(body)
                or (_RESULT.search(body) and (_REASON.search(body) or _checked(body)))
                or _limits(body)
            )
        ):
            # A list item's label is part of what it found ("Too long: `a1b2c3d4e5f6789` → returns found=false")
            full = unbold(LIST_MARKER.sub("", sentence.strip(), count=1)).strip()
            found = full if label_of(full) else body
            after = said[at + 1] if at + 1 < len(said) else ""
            carried = _says_more_of(after) and len(found) + len(after) < 280
            out.append(Statement("finding", clip(f"{found} {after.strip()}" if carried else found, 280)))
    if done is None:
        return out
    return [done, *(st for st in out if f"Done: {st.text}" != done.text)]  # the report is said once, as done


_CODE_MARK = re.compile(r"[()\[\]{}=<>]")

_HEADER = re.compile(r"^(?:async\s+)?(?:class|def)\s+\w+[^:]*:$")
"""A class's or function's first line alone, quoted in a message."""

_QUOTED_FIGURE = re.compile(
    r"^(?:[A-Za-z][\w -]{0,24} )?(?:total|balance|refund|difference|amount due|subtotal)s?\b"
    r"[\w -]{0,24}:\s*[-+]?[$\u20ac\u00a3]?\s?\d[\d,.]*(?:\s[^:]{0,60})?$",
    re.IGNORECASE,
)
"""A total the agent quotes ("Total Cost: $239", "Price difference: $499 - $139 = $360 per person"): what the user is
asked to agree to, said in a few words; one option's price among several ("Economy Price: $125") is not."""


def _quoted_figure(sentence: str) -> list[Statement]:
    """A figure the agent quotes in a few words ("- **Total Cost:** $239"), as a finding; nothing for other lines."""
    quoted = unbold(LIST_MARKER.sub("", sentence.strip(), count=1)).strip()
    return [Statement("finding", quoted)] if _QUOTED_FIGURE.match(quoted) else []


def _says_something(snippet: str) -> bool:
    """A short block says something alone: three words, or a value.

    Not a line introducing what follows ("Produces the following xml:"), nor an elided tag or two
    ("<plugin> ; <groupId>...").
    """
    if snippet.rstrip().endswith(":") and _CODE_MARK.search(snippet) is None:
        return False  # prose that introduces; "if parse(reqversion) > parse(extension.version):" is code
    if _HEADER.match(snippet.strip()):
        return False  # "class Figure(FigureBase):" opens a body it does not show
    return word_count(snippet) >= 3 or _SPECIFIC.search(snippet) is not None


def _says_more_of(sentence: str) -> bool:
    """``sentence`` says more of the thing the sentence before it named, and nothing a reader can place alone.

    "This order is already in a 'cancelled' status." names no order: said after "I've retrieved the details for
    order #W2586676." it is that order's status, so the two are one finding. A sentence that is a finding, decision,
    open item or question of its own is not carried.
    """
    body = LIST_MARKER.sub("", statement_body(sentence).strip(), count=1)
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
