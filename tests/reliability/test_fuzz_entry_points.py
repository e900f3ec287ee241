"""Any value at any public entry point: a typed ctxbudget error (or success), never a raw exception, never a hang.

Hypothesis draws arbitrary JSON-ish and Python values (``None``, bools, huge ints, NaN/inf, bytes, text with lone
surrogates and special-token strings, nested lists/dicts with non-string keys, deep nesting, plain objects) and
feeds one of them into one argument slot of one public entry point per example. The only acceptable outcomes are a
return value or a :class:`~ctxbudget.errors.CtxBudgetError`; ``pydantic.ValidationError`` only from pydantic's own
``model_validate`` (documented by pydantic). Whatever a session accepted must also survive
``snapshot().to_json()`` and a restore. Every call runs under an alarm on the CPU time it burns (every entry point
is synchronous computation, so a hang is a loop that spins), so a hang fails the example instead of the suite,
however busy the machine is: no wall-clock limit, no hypothesis deadline.

Values that once raised raw exceptions (issue 14 item 16) are tried first at their entry point on every run, as
regression seeds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from ctxbudget import cognitive
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.compaction.summarize import render_transcript
from ctxbudget.context.assembly import assemble_fragments
from ctxbudget.context.evidence import excerpt
from ctxbudget.context.fragments import Fragment
from ctxbudget.context.items import ContextItem
from ctxbudget.context.planner import PlannerConfig, plan_context
from ctxbudget.context.render import render_items
from ctxbudget.errors import CtxBudgetError
from ctxbudget.messages import Message, ToolCall, ToolSchema
from ctxbudget.messages._validation import short_repr
from ctxbudget.messages.tokens import CharCounter, TiktokenCounter, count_request
from ctxbudget.messages.toolpairs import find_tool_pair_problems, repair_tool_pairs, safe_cut_points
from ctxbudget.providers.counting import counter_for_model
from ctxbudget.session import ContextSession
from ctxbudget.session.snapshot import SessionSnapshot
from ctxbudget.transcripts import load_transcript, parse_transcript
from hypothesis import given, settings
from pydantic import ValidationError

from .fuzzing import DEEP_VALUES, VALUES, Deep, DeepText, Entry, Hang, Huge, alarm, check, round_trips

TIKTOKEN = TiktokenCounter()
MAX_EXAMPLES = 25


def survives_snapshot(session: ContextSession) -> None:
    """What a session accepted must serialize and restore (typed errors only, checked by the caller)."""
    text = session.snapshot().to_json()
    ContextSession.restore(text, counter=session.counter)


def session(**kwargs: Any) -> ContextSession:
    return ContextSession(max_tokens=kwargs.pop("max_tokens", 4_000), counter=CharCounter(), **kwargs)


def with_session(action: Callable[[ContextSession, Any], object]) -> Callable[[Any], object]:
    def call(value: Any) -> object:
        active = session()
        active.add_user("first question")
        result = action(active, value)
        survives_snapshot(active)
        return result

    return call


def with_call(action: Callable[[ContextSession, Any], object]) -> Callable[[Any], object]:
    """A session whose last message is an assistant tool call ``c1`` (so a result may answer it)."""

    def call(value: Any) -> object:
        active = session()
        active.add_user("look it up")
        active.add_assistant(tool_calls=[ToolCall(id="c1", name="lookup")])
        result = action(active, value)
        survives_snapshot(active)
        return result

    return call


# -- the entry points ------------------------------------------------------------------------------------------------
def _message_entries() -> list[Entry]:
    base = {"role": "user", "content": "x"}
    entries = [
        Entry(f"Message({name}=v)", lambda v, name=name: Message(**{**base, name: v}))
        for name in ("role", "content", "name", "tool_call_id", "state", "metadata", "id")
    ]
    entries += [
        Entry("Message(assistant, tool_calls=v)", lambda v: Message(role="assistant", tool_calls=v)),
        Entry("Message(tool, tool_call_id=v)", lambda v: Message(role="tool", tool_call_id=v, content="r")),
        Entry("Message.model_validate(v)", Message.model_validate, (CtxBudgetError, ValidationError)),
        Entry("Message(content=[block v])", lambda v: Message(role="user", content=[{"type": "x", "data": v}])),
        Entry("Message(metadata={'k': v})", lambda v: Message(role="user", metadata={"k": v})),
        Entry("Message.with_content(v)", lambda v: Message(role="user").with_content(v)),
    ]
    entries += [
        Entry(f"ToolCall({name}=v)", lambda v, name=name: ToolCall(**{"id": "c", "name": "n", name: v}))
        for name in ("id", "name", "args")
    ]
    entries.append(Entry("ToolCall(args={'a': v})", lambda v: ToolCall(id="c", name="n", args={"a": v})))
    entries += [
        Entry(f"ToolSchema({name}=v)", lambda v, name=name: ToolSchema(**{"name": "n", name: v}))
        for name in ("name", "description", "parameters")
    ]
    entries.append(Entry("ToolSchema.from_openai(v)", ToolSchema.from_openai))
    return entries


def _session_entries() -> list[Entry]:
    kwargs = ("model", "max_tokens", "counter", "system_prompt", "tools", "policy", "summarizer", "session_id")
    window = {"max_tokens": 8_000}  # there is no default window; "model" alone gives one or a typed error
    entries = [
        Entry(
            f"ContextSession({name}=v)",
            lambda v, name=name: survives_snapshot(ContextSession(**{**({} if name == "model" else window), name: v})),
        )
        for name in (*kwargs, "compact_instructions", "providers", "cognitive")
    ]
    entries += [
        Entry("session.add(v)", with_session(lambda s, v: s.add(v))),
        Entry("session.add(*v)", with_session(lambda s, v: s.add(*v) if isinstance(v, (list, tuple)) else None)),
        Entry("session.add_user(v)", with_session(lambda s, v: s.add_user(v))),
        Entry("session.add_user(metadata v)", with_session(lambda s, v: s.add_user("x", k=v))),
        Entry("session.add_assistant(v)", with_session(lambda s, v: s.add_assistant(v))),
        Entry("session.add_assistant(tool_calls=v)", with_session(lambda s, v: s.add_assistant("x", tool_calls=v))),
        Entry("session.add_assistant(interrupted=v)", with_session(lambda s, v: s.add_assistant("x", interrupted=v))),
        Entry("session.add_tool_result(v, ...)", with_call(lambda s, v: s.add_tool_result(v, "out"))),
        Entry("session.add_tool_result(..., v)", with_call(lambda s, v: s.add_tool_result("c1", v))),
        Entry("session.add_tool_result(name=v)", with_call(lambda s, v: s.add_tool_result("c1", "out", name=v))),
        Entry("session.sync(v)", with_session(lambda s, v: s.sync(v))),
        Entry("session.pin(v)", with_session(lambda s, v: s.pin(v))),
        Entry("session.pin(pin_id=v)", with_session(lambda s, v: s.pin("keep", pin_id=v))),
        Entry("session.pin_goal(v)", with_session(lambda s, v: s.pin_goal(v))),
        Entry("session.compact(v)", with_session(lambda s, v: s.compact(v))),
        Entry("session.record_usage(v)", with_session(lambda s, v: s.record_usage(v))),
        Entry("session.record_usage(..., v)", with_session(lambda s, v: s.record_usage(100, v))),
        Entry("session.set_usage_floor(v)", with_session(lambda s, v: s.set_usage_floor(v))),
        Entry("session.set_threshold(v)", with_session(lambda s, v: s.set_threshold(v))),
        Entry("session.read_archived(v)", with_session(lambda s, v: s.read_archived(v))),
        Entry(
            "session.read_archived(offset=v)", with_session(lambda s, v: s.read_archived("ctx://archive/x", offset=v))
        ),
        Entry("session.read_archived(limit=v)", with_session(lambda s, v: s.read_archived("ctx://archive/x", limit=v))),
        Entry("session.system_prompt = v", with_session(lambda s, v: setattr(s, "system_prompt", v))),
        Entry("session.tools = v", with_session(lambda s, v: setattr(s, "tools", v))),
        Entry("session.build_request(reserve_tokens=v)", with_session(lambda s, v: s.build_request(reserve_tokens=v))),
        Entry("session.set_context(v)", with_session(lambda s, v: s.set_context(v))),
        Entry("session.search_archive(v)", with_session(lambda s, v: s.search_archive(v))),
        Entry("SessionSnapshot.from_json(v)", SessionSnapshot.from_json),
        Entry("ContextSession.restore(v)", ContextSession.restore),
    ]
    entries += [
        Entry(f"CompactionPolicy({name}=v)", lambda v, name=name: CompactionPolicy(**{name: v}))
        for name in CompactionPolicy.model_fields
    ]
    return entries


def _not_persisted(_result: object) -> None:
    """For a model that never reaches a snapshot: nothing to round-trip."""


def _context_entries() -> list[Entry]:
    fragment = {"id": "f", "source_id": "s", "trust": "user", "value": "text"}
    entries = [
        Entry("assemble_fragments(v)", assemble_fragments),
        Entry("assemble_fragments([fragment v])", lambda v: assemble_fragments([v]) if isinstance(v, dict) else None),
        Entry("assemble_fragments(max_chars=v)", lambda v: assemble_fragments([fragment], v)),
        Entry("assemble_fragments(max_tokens=v)", lambda v: assemble_fragments([fragment], max_tokens=v)),
    ]
    entries += [
        Entry(f"Fragment({name}=v)", lambda v, name=name: Fragment(**{**fragment, name: v}))
        for name in Fragment.model_fields
    ]
    item = {"id": "i", "source": "s", "content": "c"}
    entries += [  # an item's metadata is free-form (a retriever's document metadata) and never persisted
        Entry(f"ContextItem({name}=v)", lambda v, name=name: ContextItem(**{**item, name: v}), then=_not_persisted)
        for name in ContextItem.model_fields
    ]
    entries += [
        Entry(f"PlannerConfig({name}=v)", lambda v, name=name: PlannerConfig(**{name: v}))
        for name in PlannerConfig.model_fields
    ]
    entries += [
        Entry("plan_context(v)", lambda v: plan_context(v, PlannerConfig())),
        Entry("plan_context(config=v)", lambda v: plan_context([ContextItem(**item)], v)),
        Entry("render_items(v)", render_items),
        Entry("excerpt(v)", lambda v: excerpt(v, max_tokens=20, counter=TIKTOKEN)),
        Entry("excerpt(max_tokens=v)", lambda v: excerpt("some text " * 50, max_tokens=v, counter=TIKTOKEN)),
    ]
    return entries


def _counting_entries() -> list[Entry]:
    message = Message(role="user", content="x")
    entries = []
    for counter in (TIKTOKEN, CharCounter()):
        kind = type(counter).__name__
        entries += [
            Entry(f"{kind}.count_text(v)", counter.count_text),
            Entry(f"{kind}.count_message(v)", counter.count_message),
            Entry(f"{kind}.count_tools(v)", counter.count_tools),
            Entry(f"count_request({kind}, v)", lambda v, c=counter: count_request(c, v)),
            Entry(f"count_request({kind}, tools=v)", lambda v, c=counter: count_request(c, [message], v)),
        ]
    entries += [
        Entry("counter_for_model(v)", counter_for_model),
        Entry("TiktokenCounter(v)", TiktokenCounter),
        Entry("find_tool_pair_problems(v)", find_tool_pair_problems),
        Entry("repair_tool_pairs(v)", repair_tool_pairs),
        Entry("safe_cut_points(v)", safe_cut_points),
        Entry("render_transcript(v)", render_transcript),
    ]
    return entries


def _parse_text(value: Any) -> object:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):  # not JSON: parse its (bounded) repr, not JSON either
        text = short_repr(value)
    return parse_transcript(text)


def _transcript_entries() -> list[Entry]:
    return [
        Entry("parse_transcript(v)", parse_transcript),
        Entry("parse_transcript(json of v)", _parse_text),
        Entry("parse_transcript(jsonl=v)", lambda v: parse_transcript('{"role": "user", "content": "a"}', jsonl=v)),
        Entry("parse_transcript(key=v)", lambda v: parse_transcript('{"store": {"k": [{"role": "user"}]}}', key=v)),
        # Strings and paths are left out: a generated path could name a device that never ends (/dev/zero).
        Entry("load_transcript(non-path v)", lambda v: None if isinstance(v, (str, bytes)) else load_transcript(v)),
    ]


_GOLDEN = {
    "package_id": "contra-sense/handbook",
    "package_version": "0.1.0",
    "lifecycle_generation": 7,
    "generation_digest": "sha256:aa0beeb62f1b7b21bf70f21e6f0e858a1e4b720d313f0907209b5b9dad2eeb20",
    "surface_id": "domain-knowledge",
    "format_version": "0.2",
    "content_digest": "sha256:1def786da6d190b7b3ce0176e71d99ff1cac3f8c8cc7c0f8b76a893c544e7a90",
}


def _cognitive_entries() -> list[Entry]:
    binding = cognitive.PackageBinding.create(**_GOLDEN)
    request = cognitive.ContextRequest.create("s", "q", binding)
    evidence = [cognitive.sha256_digest(b"x")]
    citation = cognitive.Citation.create(binding, document_path="a.md", heading="H", evidence_ids=evidence)
    document = cognitive.CitedDocument.create(citation, "x")
    entries = [
        Entry(
            f"PackageBinding.create({name}=v)",
            lambda v, name=name: cognitive.PackageBinding.create(**_GOLDEN | {name: v}),
        )
        for name in (*_GOLDEN, "limits")
    ]
    entries += [
        Entry(f"{model.__name__}.{method}(v)", getattr(model, method))
        for model in (cognitive.PackageBinding, cognitive.ContextRequest, cognitive.ContextResponse, cognitive.Citation)
        for method in ("from_dict", "from_json")
    ]
    entries += [
        Entry(f"BindingLimits({name}=v)", lambda v, name=name: cognitive.BindingLimits(**{name: v}))
        for name in ("max_results", "max_document_bytes", "max_total_bytes")
    ]
    entries += [
        Entry("ContextRequest.create(session_id=v)", lambda v: cognitive.ContextRequest.create(v, "q", binding)),
        Entry("ContextRequest.create(query=v)", lambda v: cognitive.ContextRequest.create("s", v, binding)),
        Entry("ContextRequest.create(binding=v)", lambda v: cognitive.ContextRequest.create("s", "q", v)),
        Entry(
            "Citation.create(document_path=v)",
            lambda v: cognitive.Citation.create(binding, document_path=v, heading="H", evidence_ids=evidence),
        ),
        Entry(
            "Citation.create(evidence_ids=v)",
            lambda v: cognitive.Citation.create(binding, document_path="a.md", heading="H", evidence_ids=v),
        ),
        Entry("CitedDocument.create(content=v)", lambda v: cognitive.CitedDocument.create(citation, v)),
        Entry("ContextResponse.create(documents=v)", lambda v: cognitive.ContextResponse.create(request, v)),
        Entry("canonical_digest(v, [])", lambda v: cognitive.canonical_digest(v, [])),
        Entry("canonical_digest('d', v)", lambda v: cognitive.canonical_digest("d", v)),
        Entry("canonical_json(v)", cognitive.canonical_json),
        Entry("sha256_digest(v)", cognitive.sha256_digest),
        Entry("relevance_at(v)", cognitive.relevance_at),
        Entry("citation_marker(v)", cognitive.citation_marker),
        Entry("render_document(v, 0)", lambda v: cognitive.render_document(v, 0)),
        Entry("render_document(doc, v)", lambda v: cognitive.render_document(document, v)),
        Entry("render_response(v)", cognitive.render_response),
        Entry("check_resume(v, binding)", lambda v: cognitive.check_resume(v, binding)),
        Entry("check_providers(v)", lambda v: cognitive.check_providers(v, bound=False)),
        Entry("provider_kind(v)", cognitive.provider_kind),
        Entry("validate_provider_name(v)", cognitive.validate_provider_name),
    ]
    entries += [
        Entry(f"{name}(v)", getattr(cognitive, name))
        for name in (
            "validate_binding",
            "validate_citation",
            "validate_document",
            "validate_knowledge",
            "validate_limits",
            "validate_request",
            "validate_response",
        )
    ]
    return entries


# Slots that take a JSON payload: they also get a value nested past Python's recursion limit.
DEEP = {
    "Message(content=v)",
    "Message(metadata=v)",
    "Message(assistant, tool_calls=v)",
    "Message.model_validate(v)",
    "Message(content=[block v])",
    "Message(metadata={'k': v})",
    "ToolCall(args=v)",
    "ToolCall(args={'a': v})",
    "ToolSchema(parameters=v)",
    "ToolSchema.from_openai(v)",
    "session.add_user(metadata v)",
    "parse_transcript(json of v)",
}

_BIG = 10**400
# Values that raised raw exceptions before issue 14 item 16 was fixed, tried first at their entry point on every
# run (regression seeds; the entry point's fix is named for the reader).
PENDING: dict[str, tuple[str, tuple[Any, ...]]] = {
    "assemble_fragments(v)": ("assembly.py", (None, 2, [{1: "x"}])),
    "assemble_fragments([fragment v])": ("fragments.py", ({1: "x"}, {None: None})),
    "assemble_fragments(max_chars=v)": ("assembly.py", (_BIG,)),
    "assemble_fragments(max_tokens=v)": ("assembly.py", (_BIG,)),
    "render_transcript(v)": ("summarize.py", (None,)),
    "PackageBinding.from_dict(v)": ("cognitive/models.py", ({1: "x"},)),
    "ContextRequest.from_dict(v)": ("cognitive/models.py", ({1: "x"},)),
    "ContextResponse.from_dict(v)": ("cognitive/models.py", ({1: "x"},)),
    "Citation.from_dict(v)": ("cognitive/models.py", ({1: "x"},)),
    "ContextResponse.create(documents=v)": ("cognitive/models.py", ([{1: "x"}],)),
    "relevance_at(v)": ("cognitive/rendering.py", (_BIG,)),
    "render_document(doc, v)": ("cognitive/rendering.py", (_BIG,)),
    "check_providers(v)": ("cognitive/rules.py", (None,)),
}


JSON_LIMIT_SEEDS = (Deep(3000), Huge(5_000), DeepText(50_000), float("nan"), [float("inf")])
"""Tried first at every JSON payload slot (issue 26 finding 7: each was accepted, or raised raw, somewhere)."""


def _finished(entry: Entry) -> Entry:
    """``entry`` with its depth flag and the seeds tried first: the JSON-limit ones, and a known defect's."""
    deep = entry.name in DEEP
    seeds = JSON_LIMIT_SEEDS if deep else ()
    if entry.name in PENDING:
        seeds += PENDING[entry.name][1]
    return replace(entry, deep=deep, seeds=seeds, then=entry.then or round_trips)


ENTRIES = [
    _finished(entry)
    for entry in (
        *_message_entries(),
        *_session_entries(),
        *_context_entries(),
        *_counting_entries(),
        *_transcript_entries(),
        *_cognitive_entries(),
    )
]


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name, marks=e.marks) for e in ENTRIES])
def test_any_value_at_any_entry_point_is_a_typed_error_or_a_result(entry: Entry) -> None:
    for seed in entry.seeds:  # the known failing values first: deterministic, whatever hypothesis draws
        check(entry, seed)

    @settings(max_examples=MAX_EXAMPLES)
    @given(value=DEEP_VALUES if entry.deep else VALUES)
    def any_value(value: Any) -> None:
        check(entry, value)

    any_value()


def test_the_tables_name_real_entry_points() -> None:
    names = [entry.name for entry in ENTRIES]
    assert len(names) == len(set(names))
    assert set(PENDING) <= set(names)
    assert set(DEEP) <= set(names)


def test_the_alarm_fires_on_cpu_time_spent_not_on_time_waited() -> None:
    with alarm(0.2):
        time.sleep(0.4)  # waiting burns no CPU: no hang, however long the machine keeps this process waiting
    with pytest.raises(Hang, match=r"no result after 0\.2 s of CPU time"), alarm(0.2):
        _spin_forever()


def _spin_forever() -> None:
    while True:
        pass
