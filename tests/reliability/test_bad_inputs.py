"""The bad-input catalogue: one table, one row per user mistake, across the public API.

Each failing row names the exact error type and the offending field: the message must contain it and, for a
:class:`~ctxbudget.errors.UsageError`, ``exc.field`` must equal it. Nothing may surface as a raw pydantic
``ValidationError`` or a bare ``ValueError``/``TypeError``/``KeyError``. Rows with ``error=None`` are inputs that look
dangerous but are valid (special-token strings, huge texts) and must succeed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from ctxbudget.cognitive import BindingLimits, PackageBinding
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.compaction.summarize import render_transcript
from ctxbudget.context.assembly import assemble_context_plan, assemble_fragments
from ctxbudget.context.evidence import excerpt
from ctxbudget.context.fragments import Fragment
from ctxbudget.context.items import ContextItem
from ctxbudget.context.planner import PlannerConfig, plan_context
from ctxbudget.errors import (
    ArchiveError,
    BudgetExceededError,
    DuplicateFragmentError,
    FragmentLimitError,
    InvalidBinding,
    InvalidFragmentError,
    InvalidLimits,
    InvalidMessageError,
    InvalidPolicyError,
    PlanAuditError,
    SnapshotFormatError,
    TranscriptError,
    UnknownModelError,
    UsageError,
)
from ctxbudget.messages import Message, ToolCall, ToolSchema
from ctxbudget.messages.toolpairs import validate_tool_sequence
from ctxbudget.session import ContextSession
from ctxbudget.session.snapshot import SessionSnapshot
from ctxbudget.shared_session import SharedSession
from ctxbudget.stores import InMemorySnapshotStore
from ctxbudget.transcripts import load_transcript, parse_transcript
from pydantic import ValidationError

from .faults import COUNTER, assert_valid_request

SPECIAL = "<|endoftext|> <|im_start|>system<|im_end|> <|fim_prefix|>"
NAN = float("nan")


@dataclass(frozen=True)
class Case:
    """One row: what to call, and either the error (type + field) or, for ``error=None``, a check of the result."""

    id: str
    call: Callable[[], Any]
    error: type[BaseException] | None
    field: str = ""
    check: Callable[[Any], object] | None = None
    names: str | None = None
    """What the message must contain, when it names the culprit differently from ``field``."""


def with_open_call(target: ContextSession, call_id: str) -> ContextSession:
    """``target`` with an assistant message whose call ``call_id`` is open (a tool result must answer a call)."""
    target.add_user("run it")
    target.add_assistant(tool_calls=[ToolCall(id=call_id, name="cat", args={})])
    return target


def session(**kwargs: Any) -> ContextSession:
    return ContextSession(**{"counter": COUNTER, "session_id": "bad", "max_tokens": 8_000, **kwargs})


def snapshot_dict() -> dict[str, Any]:
    live = session(system_prompt="sys")
    live.add_user("hello")
    live.add_assistant("hi")
    return json.loads(live.snapshot().to_json())  # type: ignore[no-any-return]


def restore(mutate: Callable[[dict[str, Any]], object]) -> ContextSession:
    data = snapshot_dict()
    data.pop("digest")  # an edited snapshot with its digest is refused as edited; these cases test the content
    mutate(data)
    return ContextSession.restore(json.dumps(data), counter=COUNTER)


def binding_json(**changes: Any) -> str:
    binding = PackageBinding.create(
        package_id="acme/docs",
        package_version="1.0.0",
        lifecycle_generation=1,
        generation_digest="sha256:" + "a" * 64,
        surface_id="domain-knowledge",
        format_version="0.2",
        content_digest="sha256:" + "b" * 64,
    )
    return json.dumps({**binding.to_dict(), **changes})


def frag(fid: str = "a", value: str = "text", **kwargs: Any) -> Fragment:
    return Fragment(**{"id": fid, "source_id": "src", "trust": "retrieved", "value": value, **kwargs})


def call(tool_id: str = "c1") -> Message:
    return Message(role="assistant", tool_calls=(ToolCall(id=tool_id, name="ls"),), id=f"a-{tool_id}")


def result(tool_id: str = "c1", mid: str = "r1") -> Message:
    return Message(role="tool", tool_call_id=tool_id, content="ok", id=mid)


def shared(store: InMemorySnapshotStore | None = None, **kwargs: Any) -> SharedSession:
    store = store or InMemorySnapshotStore()
    if store.load("bad") is None:
        SharedSession.create(store, session())
    return SharedSession(store, "bad", counter=COUNTER, **kwargs)


def corrupt_log(record: str) -> SharedSession:
    handle = shared()
    handle.store.append("bad", [record])
    return handle


def twice(messages: list[Message]) -> ContextSession:
    live = session()
    live.add(*messages)
    return live


def counted_build(text: str) -> int:
    live = session(system_prompt="sys")
    live.add_user(text)
    assert_valid_request(live)
    return live.build_request().tokens


CASES: list[Case] = [
    # -- Message / ToolCall / ToolSchema construction ---------------------------------------------------------------
    Case("message-unknown-role", lambda: Message(role="admin", content="x"), InvalidMessageError, "role"),
    Case("message-role-none", lambda: Message(role=None, content="x"), InvalidMessageError, "role"),
    Case("message-content-int", lambda: Message(role="user", content=5), InvalidMessageError, "content.str"),
    Case("message-empty-id", lambda: Message(role="user", content="x", id=""), InvalidMessageError, "id"),
    Case("message-unknown-state", lambda: Message(role="user", state="paused"), InvalidMessageError, "state"),
    Case("message-unknown-key", lambda: Message(role="user", colour="red"), InvalidMessageError, "colour"),
    Case(
        "tool-message-without-call-id", lambda: Message(role="tool", content="x"), InvalidMessageError, "tool_call_id"
    ),
    Case(
        "user-message-with-call-id", lambda: Message(role="user", tool_call_id="c"), InvalidMessageError, "tool_call_id"
    ),
    Case(
        "user-message-with-tool-calls",
        lambda: Message(role="user", tool_calls=(ToolCall(id="c", name="ls"),)),
        InvalidMessageError,
        "tool_calls",
    ),
    Case(
        "duplicate-call-ids-in-one-message",
        lambda: Message(role="assistant", tool_calls=(ToolCall(id="c", name="a"), ToolCall(id="c", name="b"))),
        InvalidMessageError,
        "tool_calls",
    ),
    Case("tool-call-empty-name", lambda: ToolCall(id="c", name=""), InvalidMessageError, "name"),
    Case("tool-call-empty-id", lambda: ToolCall(id="", name="ls"), InvalidMessageError, "id"),
    Case("tool-call-args-list", lambda: ToolCall(id="c", name="ls", args=[1, 2]), InvalidMessageError, "args"),
    Case("tool-schema-empty-name", lambda: ToolSchema(name=""), InvalidMessageError, "name"),
    # -- ContextSession arguments -----------------------------------------------------------------------------------
    Case("session-negative-budget", lambda: session(max_tokens=-1), InvalidPolicyError, "max_tokens"),
    Case("session-zero-budget", lambda: session(max_tokens=0), InvalidPolicyError, "max_tokens"),
    Case("session-nan-budget", lambda: session(max_tokens=NAN), InvalidPolicyError, "max_tokens"),
    Case("session-bool-budget", lambda: session(max_tokens=True), InvalidPolicyError, "max_tokens"),
    Case("session-str-budget", lambda: session(max_tokens="8000"), InvalidPolicyError, "max_tokens"),
    Case("session-float-budget", lambda: session(max_tokens=8000.5), InvalidPolicyError, "max_tokens"),
    Case(
        "session-unknown-model",
        lambda: ContextSession(model="no-such-model-9000", counter=COUNTER),
        UnknownModelError,
        "model",
    ),
    Case("session-policy-as-dict", lambda: session(policy={"threshold": 0.5}), InvalidPolicyError, "policy"),
    Case("session-counter-as-str", lambda: session(counter="tiktoken"), InvalidPolicyError, "counter"),
    Case("session-tools-of-str", lambda: session(tools=["ls"]), InvalidMessageError, "tools[0]"),
    Case("session-system-prompt-int", lambda: session(system_prompt=5), InvalidMessageError, "system_prompt"),
    Case("session-id-int", lambda: session(session_id=5), InvalidPolicyError, "session_id"),
    # -- CompactionPolicy and set_threshold -------------------------------------------------------------------------
    Case("policy-threshold-zero", lambda: CompactionPolicy(threshold=0), InvalidPolicyError, "threshold"),
    Case("policy-threshold-above-one", lambda: CompactionPolicy(threshold=1.5), InvalidPolicyError, "threshold"),
    Case("policy-threshold-nan", lambda: CompactionPolicy(threshold=NAN), InvalidPolicyError, "threshold"),
    Case("policy-threshold-bool", lambda: CompactionPolicy(threshold=True), InvalidPolicyError, "threshold"),
    Case(
        "policy-target-above-threshold",
        lambda: CompactionPolicy(threshold=0.7, target=0.8),
        InvalidPolicyError,
        "target",
    ),
    Case(
        "policy-hard-stop-below-threshold",
        lambda: CompactionPolicy(threshold=0.9, hard_stop=0.85),
        InvalidPolicyError,
        "hard_stop",
    ),
    Case(
        "policy-keep-zero", lambda: CompactionPolicy(keep_recent_messages=0), InvalidPolicyError, "keep_recent_messages"
    ),
    Case(
        "policy-timeout-zero", lambda: CompactionPolicy(summarizer_timeout=0), InvalidPolicyError, "summarizer_timeout"
    ),
    Case("policy-unknown-key", lambda: CompactionPolicy(thresold=0.5), InvalidPolicyError, "thresold"),
    Case("set-threshold-above-one", lambda: session().set_threshold(2.0), InvalidPolicyError, "threshold"),
    Case("set-threshold-str", lambda: session().set_threshold("high"), InvalidPolicyError, "threshold"),
    Case("set-threshold-nan", lambda: session().set_threshold(NAN), InvalidPolicyError, "threshold"),
    # -- record_usage, pins, archive --------------------------------------------------------------------------------
    Case("usage-negative", lambda: session().record_usage(-1), InvalidPolicyError, "prompt_tokens"),
    Case("usage-bool", lambda: session().record_usage(True), InvalidPolicyError, "prompt_tokens"),
    Case("usage-float", lambda: session().record_usage(10.5), InvalidPolicyError, "prompt_tokens"),
    Case("usage-completion-bool", lambda: session().record_usage(10, True), InvalidPolicyError, "completion_tokens"),
    Case("usage-completion-negative", lambda: session().record_usage(10, -3), InvalidPolicyError, "completion_tokens"),
    Case("pin-blank", lambda: session().pin("   "), InvalidMessageError, "text"),
    Case("goal-blank", lambda: session().pin_goal(""), InvalidMessageError, "goal"),
    Case("archive-unknown-handle", lambda: session().read_archived("ctx://archive/nope"), ArchiveError, "handle"),
    Case(
        "archive-negative-offset",
        lambda: session().read_archived("ctx://archive/x", offset=-1),
        InvalidPolicyError,
        "offset",
    ),
    # -- history: duplicates, wrong types, tool pairing -------------------------------------------------------------
    Case(
        "duplicate-message-id",
        lambda: twice([Message(role="user", content="a", id="m1"), Message(role="user", content="b", id="m1")]),
        InvalidMessageError,
        "id",
    ),
    Case("add-a-dict", lambda: session().add({"role": "user", "content": "x"}), InvalidMessageError, "message"),
    Case("add-user-int", lambda: session().add_user(42), InvalidMessageError, "content.str"),
    Case(
        "add-tool-result-empty-call-id", lambda: session().add_tool_result("", "x"), InvalidMessageError, "tool_call_id"
    ),
    Case("orphaned-tool-result", lambda: validate_tool_sequence([result()]), InvalidMessageError, "messages"),
    Case(
        "unanswered-tool-call",
        lambda: validate_tool_sequence([call(), Message(role="user", content="next")]),
        InvalidMessageError,
        "messages",
    ),
    Case(
        "tool-result-answered-twice",
        lambda: validate_tool_sequence([call(), result(), result(mid="r2")]),
        InvalidMessageError,
        "messages",
    ),
    # -- malformed snapshots ----------------------------------------------------------------------------------------
    Case("snapshot-broken-json", lambda: ContextSession.restore('{"schema": '), SnapshotFormatError, "snapshot"),
    Case("snapshot-not-an-object", lambda: ContextSession.restore("[1, 2]"), SnapshotFormatError, "snapshot"),
    Case(
        "snapshot-wrong-schema",
        lambda: restore(lambda d: d.update(schema="ctxbudget.session.v0")),
        SnapshotFormatError,
        "schema",
    ),
    Case(
        "snapshot-missing-session-id", lambda: restore(lambda d: d.pop("session_id")), SnapshotFormatError, "session_id"
    ),
    Case("snapshot-missing-tracker", lambda: restore(lambda d: d.pop("tracker")), SnapshotFormatError, "tracker"),
    Case(
        "snapshot-budget-str", lambda: restore(lambda d: d.update(max_tokens="lots")), SnapshotFormatError, "max_tokens"
    ),
    Case(
        "snapshot-budget-negative",
        lambda: restore(lambda d: d.update(max_tokens=-5)),
        SnapshotFormatError,
        "max_tokens",
    ),
    Case("snapshot-log-seq-negative", lambda: restore(lambda d: d.update(log_seq=-1)), SnapshotFormatError, "log_seq"),
    Case("snapshot-unknown-key", lambda: restore(lambda d: d.update(extra=1)), SnapshotFormatError, "extra"),
    Case(
        "snapshot-bad-message-role",
        lambda: restore(lambda d: d["history"][0].update(role="root")),
        SnapshotFormatError,
        "history.0",
    ),
    Case("snapshot-order-missing-ids", lambda: restore(lambda d: d.update(order={})), SnapshotFormatError, "order"),
    Case(
        "snapshot-policy-out-of-range",
        lambda: restore(lambda d: d["policy"].update(threshold=3)),
        SnapshotFormatError,
        "policy.threshold",
    ),
    Case(
        "snapshot-invalid-utf8",
        lambda: SessionSnapshot.from_json(b'{"schema": "ctxbudget.session.v1", "session_id": "\xff\xfe"}'),
        SnapshotFormatError,
        "snapshot",
    ),
    Case("restore-an-int", lambda: ContextSession.restore(5), SnapshotFormatError, "snapshot"),
    # -- transcripts (what the CLI reads) -----------------------------------------------------------------------------
    Case(
        "transcript-invalid-utf8",
        lambda: parse_transcript(b'{"role": "user", "content": "\xff\xfe"}\n'),
        TranscriptError,
        "encoding",
        names="invalid UTF-8 at byte offset 29 (line 1)",
    ),
    Case(
        "transcript-unknown-role",
        lambda: parse_transcript(b'{"role": "admin", "content": "x"}\n'),
        TranscriptError,
        "role",
    ),
    Case(
        "transcript-broken-json-line",
        lambda: parse_transcript(b'{"role": "user", "content": "a"}\n{oops\n'),
        TranscriptError,
        "json",
        names="line 2: invalid JSON",
    ),
    Case("transcript-empty", lambda: parse_transcript(b"[]"), TranscriptError, "messages"),
    Case(
        "transcript-tool-without-call-id",
        lambda: parse_transcript(b'{"messages": [{"role": "tool", "content": "x"}]}'),
        TranscriptError,
        "tool_call_id",
    ),
    Case(
        "transcript-missing-file",
        lambda: load_transcript("/nonexistent/chat.jsonl"),
        TranscriptError,
        "path",
        names="/nonexistent/chat.jsonl",
    ),
    # -- cognitive binding JSON -------------------------------------------------------------------------------------
    Case("binding-unknown-key", lambda: PackageBinding.from_json(binding_json(bogus=1)), InvalidBinding, "bogus"),
    Case(
        "binding-forged-digest",
        lambda: PackageBinding.from_json(binding_json(capabilitySnapshotDigest="sha256:" + "0" * 64)),
        InvalidBinding,
        "capabilitySnapshotDigest",
    ),
    Case(
        "binding-malformed-digest",
        lambda: PackageBinding.from_json(binding_json(generationDigest="md5:1")),
        InvalidBinding,
        "generationDigest",
    ),
    Case("limits-zero", lambda: BindingLimits(max_results=0), InvalidLimits, "maxResults"),
    Case(
        "limits-duplicate-key",
        lambda: BindingLimits.from_json('{"maxResults":1,"maxResults":2}'),
        InvalidLimits,
        "maxResults",
    ),
    Case("limits-invalid-utf8", lambda: BindingLimits.from_json(b"\xff\xfe"), InvalidLimits, "UTF-8"),
    # -- fragments and assembly -------------------------------------------------------------------------------------
    Case("fragment-duplicate-ids", lambda: assemble_fragments([frag("a"), frag("a")]), DuplicateFragmentError, "id"),
    Case(
        "fragment-over-own-max-chars",
        lambda: assemble_fragments([frag(value="x" * 50, max_chars=10)]),
        FragmentLimitError,
        "max_chars",
    ),
    Case(
        "assembly-over-budget",
        lambda: assemble_fragments([frag(value="x" * 50)], max_chars=10),
        BudgetExceededError,
        "max_chars",
    ),
    Case(
        "assembly-negative-budget", lambda: assemble_fragments([frag()], max_chars=-1), InvalidPolicyError, "max_chars"
    ),
    Case("assembly-nan-budget", lambda: assemble_fragments([frag()], max_tokens=NAN), InvalidPolicyError, "max_tokens"),
    Case("fragment-unknown-trust", lambda: frag(trust="root"), InvalidFragmentError, "trust"),
    Case("fragment-data-as-system", lambda: frag(role="system"), InvalidFragmentError, "role"),
    Case("fragment-blank-id", lambda: frag(" "), InvalidFragmentError, "id"),
    Case("fragment-max-chars-bool", lambda: frag(max_chars=True), InvalidFragmentError, "max_chars"),
    Case(
        "plan-drops-a-non-mutable-fragment",
        lambda: assemble_context_plan(
            fragments=[], original_fragments=[frag()], mutable_fragment_ids=[], max_input_chars=100
        ),
        PlanAuditError,
        "fragments",
        names="fragment 'a'",
    ),
    # -- planner ----------------------------------------------------------------------------------------------------
    Case("planner-negative-items", lambda: PlannerConfig(max_items=-1), InvalidPolicyError, "max_items"),
    Case("planner-float-tokens", lambda: PlannerConfig(max_tokens=1.5), InvalidPolicyError, "max_tokens"),
    Case("planner-unknown-key", lambda: PlannerConfig(max_itemz=3), InvalidPolicyError, "max_itemz"),
    Case(
        "context-item-relevance-above-one",
        lambda: ContextItem(id="i", source="s", content="x", relevance=3),
        InvalidFragmentError,
        "relevance",
    ),
    Case(
        "context-item-empty-source", lambda: ContextItem(id="i", source="", content="x"), InvalidFragmentError, "source"
    ),
    Case(
        "excerpt-bound-too-small",
        lambda: excerpt("word " * 500, max_tokens=1, counter=COUNTER),
        InvalidPolicyError,
        "max_tokens",
    ),
    # -- stores and shared sessions ---------------------------------------------------------------------------------
    Case("store-empty-session-id", lambda: InMemorySnapshotStore().load(""), UsageError, "session_id"),
    Case(
        "store-negative-version",
        lambda: InMemorySnapshotStore().save("s", "{}", expected_version=-1),
        UsageError,
        "expected_version",
    ),
    Case(
        "store-bool-version",
        lambda: InMemorySnapshotStore().save("s", "{}", expected_version=True),
        UsageError,
        "expected_version",
    ),
    Case(
        "store-data-not-json",
        lambda: InMemorySnapshotStore().save("s", "{oops", expected_version=None),
        SnapshotFormatError,
        "data",
    ),
    Case("store-read-negative-after", lambda: InMemorySnapshotStore().read_log("s", after=-1), UsageError, "after"),
    Case("store-trim-past-head", lambda: InMemorySnapshotStore().trim_log("s", upto=3), UsageError, "upto"),
    Case("store-append-a-str", lambda: InMemorySnapshotStore().append("s", "{}"), SnapshotFormatError, "records"),
    Case("shared-empty-session-id", lambda: SharedSession(InMemorySnapshotStore(), ""), UsageError, "session_id"),
    Case("shared-zero-attempts", lambda: shared(max_attempts=0), InvalidPolicyError, "max_attempts"),
    Case(
        "shared-session-never-created",
        lambda: SharedSession(InMemorySnapshotStore(), "ghost").load(),
        UsageError,
        "session_id",
    ),
    Case("shared-add-a-dict", lambda: shared().add({"role": "user"}), InvalidMessageError, "message"),
    Case(
        "shared-add-same-id-twice",
        lambda: shared().add(Message(role="user", id="m"), Message(role="user", id="m")),
        InvalidMessageError,
        "id",
    ),
    # a log record that cannot be replayed is skipped and counted, never raised (it would wedge every worker)
    Case(
        "shared-log-record-not-json-object",
        lambda: corrupt_log("[1]").load(),
        None,
        check=lambda loaded: (loaded.invalid, loaded.replayed) == (1, 0),
    ),
    Case(
        "shared-log-record-bad-message",
        lambda: corrupt_log('{"schema": "ctxbudget.log.v1", "message": {"role": "root"}}').load(),
        None,
        check=lambda loaded: (loaded.invalid, loaded.replayed) == (1, 0),
    ),
    # -- dangerous-looking but valid text: must be counted, never raise ---------------------------------------------
    Case("special-tokens-counted", lambda: COUNTER.count_text(SPECIAL), None, check=lambda n: n > 10),
    Case("special-tokens-in-a-session", lambda: counted_build(SPECIAL * 50), None, check=lambda n: n > 500),
    Case(
        "special-tokens-in-a-fragment",
        lambda: assemble_fragments([frag(value=SPECIAL)], max_tokens=1_000),
        None,
        check=lambda built: built.total_tokens > 10,
    ),
    Case(
        "special-tokens-in-the-planner",
        lambda: plan_context([ContextItem(id="i", source="s", content=SPECIAL)], PlannerConfig.balanced()),
        None,
        check=lambda plan: len(plan.included) == 1,
    ),
    Case(
        "special-tokens-in-a-transcript",
        lambda: render_transcript([Message(role="tool", tool_call_id="c", content=SPECIAL)]),
        None,
        check=lambda text: "&lt;|endoftext|&gt;" in text and text.count("<message") == 1,
    ),
    Case(
        "oversized-tool-output-is-bounded",
        lambda: with_open_call(session(), "c1").add_tool_result("c1", "line\n" * 200_000),
        None,
        check=lambda message: "ctxbudget_archived" in message.metadata,
    ),
    Case(
        # compaction fits the window it is given: a user message larger than the window is folded into the summary
        # (archived whole, shown as an excerpt beside its handle), never a refusal to build
        "oversized-user-text-is-folded-and-fits",
        lambda: counted_build("word " * 20_000),
        None,
        check=lambda tokens: tokens <= 8_000,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input(case: Case) -> None:
    if case.error is None:
        outcome = case.call()
        assert case.check is not None
        assert case.check(outcome), f"{case.id}: unexpected result {outcome!r}"
        return
    with pytest.raises(case.error) as caught:
        case.call()
    error = caught.value
    assert type(error) is case.error, f"{case.id}: {type(error).__name__}: {error}"
    assert not isinstance(error, ValidationError), "a raw pydantic error reached the caller"
    names = case.names or case.field
    assert names in str(error), f"{case.id}: {error!s} does not name {names!r}"
    if isinstance(error, UsageError):
        assert error.field == case.field, f"{case.id}: exc.field is {error.field!r}"


def test_the_catalogue_is_wide() -> None:
    assert len(CASES) >= 60
    assert len({case.id for case in CASES}) == len(CASES)
