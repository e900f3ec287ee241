"""``ContextSession``: a conversation that always knows how full the window is and stays inside it.

Adding a message costs O(that message): counts are cached by content and the running total is kept
incrementally. Before each request the session compacts when over threshold (see :mod:`ctxbudget.compaction.tiers`),
refuses past the hard stop with a typed :class:`~ctxbudget.errors.ContextOverflowError`, and returns a request
that every strict provider accepts. Nothing is ever lost: every original that leaves the prompt is in
:attr:`ContextSession.archive`, and :meth:`ContextSession.originals` reconstructs them all.
"""

from __future__ import annotations

import math
import operator
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import ValidationError

from ..archive.search import ArchiveHit
from ..archive.store import Archive
from ..cognitive import CognitiveContextSession, PackageBinding, check_providers, check_resume
from ..compaction.policy import CompactionPolicy
from ..compaction.summarize import AsyncSummarizer, ExtractiveSummarizer, Summarizer
from ..compaction.tiers import ARCHIVE_META
from ..context.evidence import excerpt
from ..context.items import ContextItem
from ..context.planner import PlannerConfig, PlanResult, plan_context
from ..errors import (
    CognitiveContextError,
    ContextOverflowError,
    InvalidMessageError,
    InvalidPolicyError,
    SnapshotFormatError,
    UsageError,
)
from ..messages._foreign import check_not_foreign
from ..messages._validation import to_usage_error
from ..messages.message import Message, ToolCall, ToolSchema
from ..messages.registry import DEFAULT_REGISTRY, ModelRegistry
from ..messages.tokens import TokenCounter
from ..providers import is_responses_item, messages_from_anthropic, messages_from_openai, messages_from_responses
from ..providers.usage import usage_figures
from . import _compaction, _snapshots
from ._args import (
    check_arguments,
    check_components,
    check_context,
    check_messages,
    check_subscription,
    check_text,
    check_tool_calls,
    check_type,
    check_window_fits,
    resolve_budget,
)
from .conversation import Conversation
from .events import (
    CognitiveContextBound,
    ContextCompacted,
    ContextUpdate,
    Event,
    EventBus,
    EventType,
    ToolOutputBounded,
    ToolResultUnsent,
)
from .live_history import UnsentResult
from .request import BuiltRequest, PreCompact
from .snapshot import SessionSnapshot
from .tracking import ContextState, ContextWindowTracker

__all__ = ["ContextSession"]

_THEN_ADD = " and pass that to add()"
"""How a framework message given to ``add_user``/``add_assistant``/``add_tool_result`` gets in instead."""


class ContextSession:
    """A framework-neutral conversation held inside a token budget.

    Args:
        model: model name for the window and counter (see :mod:`ctxbudget.messages.registry`; ``openai:gpt-4o``,
            ``openai/gpt-4o`` and Bedrock ids are accepted).
        max_tokens: the prompt budget; overrides the model's window minus its output reserve, and may not exceed
            the model's context window. One of ``model`` and ``max_tokens`` is required: there is no default window.
        counter: token counter; default: exact for OpenAI models, a calibrated estimate for others (and for a model
            the registry lacks, which then needs ``max_tokens``), exact ``o200k_base`` when no model is named.
        system_prompt: always sent first, never compacted; with ``tools`` it must fit ``max_tokens``.
        tools: tool schemas exposed to the model (counted in every request).
        policy: compaction policy.
        summarizer: sync or async summarizer; default :class:`ExtractiveSummarizer` (offline).
        session_id: stable id (default: random).
        compact_instructions: project "Compact Instructions" added to every compaction prompt.
        registry: model registry for ``model`` look-ups.
    """

    def __init__(
        self,
        *,
        model: str | None = None,
        max_tokens: int | None = None,
        counter: TokenCounter | None = None,
        system_prompt: str | None = None,
        tools: Sequence[ToolSchema] = (),
        policy: CompactionPolicy | None = None,
        summarizer: Summarizer | AsyncSummarizer | None = None,
        session_id: str | None = None,
        compact_instructions: str | None = None,
        registry: ModelRegistry = DEFAULT_REGISTRY,
        cognitive: CognitiveContextSession | None = None,
        providers: Sequence[object] = (),
    ) -> None:
        if cognitive is not None and not isinstance(cognitive, CognitiveContextSession):
            raise InvalidPolicyError(
                f"cognitive: expected a CognitiveContextSession, got {type(cognitive).__name__}", field="cognitive"
            )
        check_arguments(counter=counter, system_prompt=system_prompt, tools=tools, policy=policy, session_id=session_id)
        check_components(
            summarizer=summarizer, registry=registry, compact_instructions=compact_instructions, providers=providers
        )
        self.memory_recall_suppressed = check_providers(providers, bound=cognitive is not None)
        self.providers = tuple(providers)
        self.session_id = session_id or f"ses_{uuid.uuid4().hex}"
        self.model = model
        self.max_tokens, self.counter = resolve_budget(
            model=model,
            max_tokens=max_tokens,
            counter=counter,
            system_prompt=system_prompt,
            tools=tools,
            registry=registry,
        )
        self.policy = policy or CompactionPolicy()
        self.summarizer: Summarizer | AsyncSummarizer = summarizer or ExtractiveSummarizer(self.counter)
        self._offline = self.summarizer if isinstance(self.summarizer, ExtractiveSummarizer) else None
        self.compact_instructions = compact_instructions
        self.tracker = ContextWindowTracker(self.max_tokens)
        self.events = EventBus(self.session_id)
        self.pre_compact_hooks: list[Callable[[PreCompact], None]] = []
        self.post_compact_hooks: list[Callable[[ContextCompacted], None]] = []
        self._conv = Conversation(
            session_id=self.session_id,
            counter=self.counter,
            max_tokens=self.max_tokens,
            system_prompt=system_prompt,
            tools=tools,
            on_unsent=self._report_unsent,
        )
        self._lock = self._conv.lock
        self._last_built = 0
        self.log_seq = 0
        self.last_plan: PlanResult | None = None
        self.cognitive: CognitiveContextSession | None = None
        if cognitive is not None:
            self.cognitive = cognitive.with_event_callback(self._on_cognitive_event)
            self._on_cognitive_event(*cognitive.bound_event())

    # -- configuration -----------------------------------------------------------------------------------------
    @property
    def system_prompt(self) -> str | None:
        """The system prompt sent first in every request."""
        return self._conv.system_prompt

    @system_prompt.setter
    def system_prompt(self, value: str | None) -> None:
        check_arguments(counter=None, system_prompt=value, tools=(), policy=None, session_id=None)
        check_window_fits(self.counter, value, self._conv.tools, self.max_tokens)
        with self._lock:
            self._conv.set_system_prompt(value)
            self._emit_update()

    @property
    def tools(self) -> tuple[ToolSchema, ...]:
        """Tool schemas exposed to the model."""
        return self._conv.tools

    @tools.setter
    def tools(self, value: Sequence[ToolSchema]) -> None:
        check_arguments(counter=None, system_prompt=None, tools=value, policy=None, session_id=None)
        check_window_fits(self.counter, self._conv.system_prompt, value, self.max_tokens)
        with self._lock:
            self._conv.set_tools(value)
            self._emit_update()

    def set_threshold(self, threshold: float | Literal[False]) -> None:
        """Change the auto-compaction threshold on a live session, or pass ``False`` to turn auto-compaction off.

        A number must be a fraction in (0, 1]; the target and hard stop move with it when needed. Passing a number
        turns auto-compaction back on.
        """
        if threshold is False:
            self.policy = self.policy.with_changes(auto=False)
            return
        number = isinstance(threshold, (int, float)) and not isinstance(threshold, bool)
        target = min(self.policy.target, threshold) if number else self.policy.target
        hard = max(self.policy.hard_stop, threshold) if number else self.policy.hard_stop
        self.policy = self.policy.with_changes(threshold=threshold, target=target, hard_stop=min(1.0, hard), auto=True)

    def subscribe(self, listener: Callable[[Event], None], event_type: EventType | None = None) -> Callable[[], None]:
        """Receive events (all, or one type); returns an unsubscribe function."""
        check_subscription(listener, event_type)
        return self.events.subscribe(listener, event_type)

    def trace_events(self) -> list[dict[str, Any]]:
        """A compact runtime record of recent events."""
        return self.events.trace()

    # -- history -----------------------------------------------------------------------------------------------
    @property
    def conversation(self) -> Conversation:
        """The state object behind this session (history, summary, goal, pins, archive, accounting).

        For stores, snapshots and compaction; hold :attr:`Conversation.lock` while reading it from another thread.
        """
        return self._conv

    @property
    def archive(self) -> Archive:
        """Every original the session bounded, cleared, summarized or dropped, by handle."""
        return self._conv.archive

    @property
    def history(self) -> list[Message]:
        """The live history (a copy), without system prompt, summary or pinned messages."""
        return list(self._conv.live.messages)

    @property
    def summary(self) -> str | None:
        """The cumulative summary of everything compacted so far."""
        return self._conv.summary

    @property
    def offline_summarizer(self) -> ExtractiveSummarizer:
        """The offline ledger builder this session's extractive tiers use (the summarizer itself when it is one).

        It remembers what it has read, so each message is read once in the session's life.
        """
        if isinstance(self.summarizer, ExtractiveSummarizer):
            return self.summarizer
        if self._offline is None:
            self._offline = ExtractiveSummarizer(self.counter)
        return self._offline

    @property
    def goal(self) -> str | None:
        """The user's goal: the first user request, or what :meth:`pin_goal` set."""
        return self._conv.goal

    @property
    def goal_message_id(self) -> str | None:
        """The id of the message the goal was taken from (``None`` when pinned explicitly or unset)."""
        return self._conv.goal_id

    @property
    def pinned(self) -> tuple[Message, ...]:
        """Pinned messages sent after the summary in every request (from :meth:`pin`, and pinned history)."""
        return self._conv.pinned

    @property
    def pinned_ids(self) -> frozenset[str]:
        """Ids of history messages added with ``metadata={"pinned": True}``."""
        return self._conv.pinned_ids

    def pin_goal(self, text: str) -> None:
        """Pin the user's goal explicitly; it survives every compaction verbatim."""
        if not isinstance(text, str) or not text.strip():
            raise InvalidMessageError("goal: must be a non-empty string", field="goal")
        check_text("goal", text, InvalidMessageError)
        with self._lock:
            self._conv.set_goal(text)
            self._emit_update()

    def clear_goal(self) -> None:
        """Forget the pinned goal (e.g. when a new conversation replaces the history).

        The goal is taken again from the next user message added, or from the first user message still live.
        """
        with self._lock:
            first = self._conv.first_user_message()
            if first is None:
                self._conv.set_goal(None)
            else:
                self._conv.set_goal(first.text, first.id)
            self._emit_update()

    def pin(self, text: str, *, pin_id: str | None = None) -> Message:
        """Pin a fragment of text: sent in every request after the summary, never compacted."""
        if not isinstance(text, str) or not text.strip():
            raise InvalidMessageError("pin: text must be a non-empty string", field="text")
        if pin_id is not None:
            check_type("pin_id", pin_id, str, InvalidMessageError)
        message = Message(
            role="user", content=text, metadata={"ctxbudget": "pinned"}, **({"id": pin_id} if pin_id else {})
        )
        with self._lock:
            self._conv.add_pin(message)
            self._emit_update()
        return message

    def add(self, *messages: Message) -> None:
        """Append messages (O(their size)); oversized tool outputs are bounded as they arrive.

        A tool result that answers no open tool call (a framework may hand one over) is kept in the history and in
        :meth:`originals`, but no request carries it; a ``tool_result_unsent`` event says so.
        """
        with self._lock:
            for message in messages:
                self._add_one(message)
            self._emit_update()

    def add_openai(self, *messages: object) -> list[Message]:
        """Convert OpenAI messages and add them; return the converted messages.

        Takes Chat Completions messages (dicts, or ``response.choices[0].message``) or Responses items (dicts, or
        the items of ``response.output``), told apart by the ``type`` every Responses item has. What a message
        carries beyond our fields is kept in its metadata, so :meth:`BuiltRequest.to_openai` sends it back as given.

        Raises:
            InvalidMessageError: a message that is not of either format (naming its index and field); nothing is
                added.
        """
        listed = list(messages)
        responses = any(is_responses_item(item) for item in listed)
        converted = messages_from_responses(listed) if responses else messages_from_openai(listed)
        self.add(*converted)
        return converted

    def add_anthropic(self, *messages: object, system: object = None) -> list[Message]:
        """Convert Anthropic messages (dicts, or a response ``Message``) and add them; return the converted messages.

        Tool results become tool messages (one per ``tool_result`` block), thinking blocks are kept and counted.
        ``system`` (a string or text blocks) joins the leading system block, unless it is this session's
        ``system_prompt`` already; pass it once, when importing a conversation.

        Raises:
            InvalidMessageError: a message that is not an Anthropic message (naming its index and field); nothing is
                added.
        """
        if system == self._conv.system_prompt:
            system = None
        converted = messages_from_anthropic(messages, system=system)
        self.add(*converted)
        return converted

    def add_user(self, text: str, **metadata: Any) -> Message:
        """Append a user message and return it."""
        check_not_foreign("text", text, "a str", _THEN_ADD)
        message = Message(role="user", content=text, metadata=metadata)
        self.add(message)
        return message

    def add_assistant(
        self, text: str = "", *, tool_calls: Sequence[ToolCall] = (), interrupted: bool = False
    ) -> Message:
        """Append an assistant reply (``interrupted=True`` for a reply the user aborted) and return it."""
        check_type("interrupted", interrupted, bool, InvalidMessageError)
        check_not_foreign("text", text, "a str", _THEN_ADD)
        message = Message(
            role="assistant",
            content=text,
            tool_calls=check_tool_calls(tool_calls),
            state="interrupted" if interrupted else "complete",
        )
        self.add(message)
        return message

    def add_tool_result(self, tool_call_id: str, content: str, *, name: str | None = None) -> Message:
        """Append a tool result and return it as stored (bounded when oversized).

        Raises:
            InvalidMessageError: ``tool_call_id`` answers no open tool call of the latest assistant message (never
                made, or already answered); the message names the open calls.
        """
        check_not_foreign("content", content, "a str", _THEN_ADD)
        message = Message(role="tool", tool_call_id=tool_call_id, content=content, name=name)
        with self._lock:
            self._check_answers_open_call(message.tool_call_id or "")
            self.add(message)
            return self._conv.live.messages[-1]

    def _check_answers_open_call(self, call_id: str) -> None:
        open_ids = self._conv.live.open_calls
        if call_id in open_ids:
            return
        problem = "was already answered" if call_id in self._conv.live.run_calls else "answers no open tool call"
        listed = f"open calls: {', '.join(map(repr, open_ids))}" if open_ids else "no tool call is open"
        raise InvalidMessageError(f"tool_call_id: {call_id!r} {problem}; {listed}", field="tool_call_id")

    def _add_one(self, message: Message) -> None:
        if not isinstance(message, Message):
            check_not_foreign("message", message, "ctxbudget.Message", " and add that")
            raise InvalidMessageError(
                f"message: expected ctxbudget.Message, got {type(message).__name__}", field="message"
            )
        self._conv.register(message)
        if message.role == "system":
            # Providers accept system content only at the start: a system message added mid-conversation joins the
            # leading system block, in the order it arrived, and is never compacted away.
            self._conv.add_system(message)
            return
        if message.role == "tool" and self.policy.bound_tool_outputs_on_add:
            message = self._bound_on_arrival(message)
        self._conv.append(message)

    def _bound_on_arrival(self, message: Message) -> Message:
        limit = self.policy.tool_output_limit(self.max_tokens)
        before = self.counter.count_message(message)
        if before <= limit or message.metadata.get("pinned") is True or self._conv.original_of(message) is not None:
            return message
        handle = self.archive.put_message(message, "bounded")
        text = excerpt(message.text, max_tokens=limit, counter=self.counter, handle=handle)
        bounded = message.model_copy(update={"content": text, "metadata": {**message.metadata, ARCHIVE_META: handle}})
        after = self.counter.count_message(bounded)
        self.events.emit(
            ToolOutputBounded(
                session_id=self.session_id,
                seq=self.events.next_seq(),
                message_id=message.id,
                handle=handle,
                tokens_before=before,
                tokens_after=after,
            )
        )
        return bounded

    def _report_unsent(self, unsent: UnsentResult) -> None:
        """A tool result that answers no open call is kept but never sent: say so (once per message)."""
        self.events.emit(
            ToolResultUnsent(
                session_id=self.session_id,
                seq=self.events.next_seq(),
                message_id=unsent.message.id,
                tool_call_id=unsent.message.tool_call_id or "",
                reason=unsent.reason,
            )
        )

    def sync(self, messages: Sequence[Message]) -> None:
        """Make the live history equal ``messages`` (a framework's view of the conversation).

        * When ``messages`` extends the live history (the same messages, in order, then new ones), only the new ones
          are added: O(new) for the same message objects.
        * Otherwise the history is rebuilt in the order given. A known message keeps its live (possibly bounded)
          form; one whose content was edited under the same id replaces it, the old version archived as
          ``replaced``; live messages that disappear are archived as ``dropped``; messages already compacted away
          are not brought back; new messages are added where they stand.
        * System messages join the leading system block (see :meth:`add`).

        Raises:
            InvalidMessageError: ``messages`` is not a sequence of :class:`Message` (naming the index of the first
                item that is not); nothing changes.
        """
        messages = check_messages(messages)
        with self._lock:
            body = [message for message in messages if message.role != "system"]
            if len(body) != len(messages):
                for message in messages:
                    if message.role == "system" and not self._conv.knows(message.id):
                        self._add_one(message)
            live = self._conv.live.messages
            extends = len(body) >= len(live) and (
                all(map(operator.is_, body, live))  # the same objects: checked at C speed
                or all(self._same(b, m) for b, m in zip(body, live, strict=False))
            )
            if extends:
                for message in body[len(live) :]:
                    self._add_one(message)
                self._emit_update()
                return
            self._rebuild(body)
            self._emit_update()

    def _same(self, given: Message, live: Message) -> bool:
        """``given`` (from a framework) is the message ``live`` holds: same object, or same id and content.

        A message we bounded or cleared is the same when the ids match: its original is in the archive.
        """
        return given is live or (given.id == live.id and (given == live or self._conv.original_of(live) is not None))

    def _rebuild(self, body: list[Message]) -> None:
        live_by_id = {m.id: m for m in self._conv.live}
        wanted = {m.id for m in body}
        for message in self._conv.live:
            if message.id not in wanted:
                self._conv.archive.put_message(message, "dropped")
        self._conv.replace_history(())
        for message in body:
            current = live_by_id.get(message.id)
            if current is not None:
                if not self._same(message, current):  # edited under the same id
                    self._conv.archive.put_message(current, "replaced")
                    current = message
                self._conv.append_known(current)
            elif not self._conv.knows(message.id):
                self._add_one(message)
            # else: compacted away earlier; its original is in the archive and the summary stands for it

    # -- measuring ---------------------------------------------------------------------------------------------
    def counted_tokens(self) -> int:
        """Our own count of the request as it stands (system, tools, pinned, summary, history, notices)."""
        return self._conv.counted_tokens()

    @property
    def state(self) -> ContextState:
        """How full the window is now."""
        exact = getattr(self.counter, "exact", None)  # a counter of the caller's own may not say
        return self.tracker.state(self.counted_tokens(), exact=exact if isinstance(exact, bool) else None)

    def _emit_update(self) -> None:
        seq = self.events.next_seq()
        if self.events.wants("context_update"):
            self.events.emit(ContextUpdate(session_id=self.session_id, seq=seq, state=self.state))
        else:  # nobody listens: keep the trace, skip building the event (a per-turn hot path)
            self.events.record_usage(seq, self.tracker.used(self.counted_tokens()))

    def record_usage(self, prompt_tokens: int | object, completion_tokens: int | None = None) -> None:
        """Record the provider-reported usage of the last built request (calibrates the tracker).

        ``prompt_tokens`` is the billed prompt, or the SDK's usage object (or the response holding it): OpenAI's
        ``CompletionUsage``/``ResponseUsage``, Anthropic's ``Usage`` (input plus cache reads and writes); see
        :func:`ctxbudget.providers.usage_figures`.
        """
        if not isinstance(prompt_tokens, (int, float, str, bytes)) and prompt_tokens is not None:
            figures = usage_figures(prompt_tokens)
            prompt_tokens = figures.prompt_tokens
            completion_tokens = figures.completion_tokens if completion_tokens is None else completion_tokens
        if not isinstance(prompt_tokens, int) or isinstance(prompt_tokens, bool) or prompt_tokens < 0:
            raise InvalidPolicyError(
                f"prompt_tokens: must be an int >= 0, got {prompt_tokens!r}", field="prompt_tokens"
            )
        if completion_tokens is not None and (
            not isinstance(completion_tokens, int) or isinstance(completion_tokens, bool) or completion_tokens < 0
        ):
            raise InvalidPolicyError(
                f"completion_tokens: must be an int >= 0, got {completion_tokens!r}", field="completion_tokens"
            )
        with self._lock:
            self.tracker.report(counted=self._last_built or self.counted_tokens(), reported=prompt_tokens)
            self._emit_update()

    def set_usage_floor(self, tokens: int) -> None:
        """A caller-supplied minimum for used tokens (e.g. overhead a framework adds that we cannot see)."""
        with self._lock:
            self.tracker.set_floor(tokens)
            self._emit_update()

    # -- building requests -------------------------------------------------------------------------------------
    def _over(self, fraction: float) -> bool:
        return self.tracker.used(self.counted_tokens()) >= fraction * self.max_tokens

    def _finish_request(
        self, compaction: ContextCompacted | None, counted: int, used: int | None = None
    ) -> BuiltRequest:
        if used is None:
            used = self.tracker.used(counted)
        hard = math.floor(self.policy.hard_stop * self.max_tokens)
        if used > hard:
            raise ContextOverflowError(
                f"request: {used:,} tokens is over the hard stop of {hard:,} ({self.policy.hard_stop:.0%} of the "
                f"{self.max_tokens:,}-token window); compaction could not make room. Reduce the system prompt, "
                "tools or pinned content, raise max_tokens, or lower keep_recent_messages.",
                used_tokens=used,
                max_tokens=self.max_tokens,
                hard_stop_tokens=hard,
            )
        self._last_built = counted
        return BuiltRequest(
            messages=self._conv.request_messages(),
            tools=self._conv.tools,
            tokens=counted,
            used_tokens=used,
            max_tokens=self.max_tokens,
            compaction=compaction,
        )

    def _set_reserve(self, reserve_tokens: int) -> None:
        if isinstance(reserve_tokens, bool) or not isinstance(reserve_tokens, int) or reserve_tokens < 0:
            raise InvalidPolicyError(
                f"reserve_tokens: must be an int >= 0, got {reserve_tokens!r}", field="reserve_tokens"
            )
        if self._conv.set_reserve(reserve_tokens):
            self._emit_update()

    def build_request(self, *, reserve_tokens: int = 0) -> BuiltRequest:
        """Compact if over threshold, enforce the hard stop, and return the request to send.

        Args:
            reserve_tokens: tokens the caller adds around this request that the session cannot see (a framework's
                own prompt template, retrieved context it inserts itself). They count toward the threshold, the
                compaction target and the hard stop, and stay in :attr:`state` until the next request.
        """
        with self._lock:
            self._set_reserve(reserve_tokens)
            counted = self.counted_tokens()
            used = self.tracker.used(counted)
            if self.policy.auto and used >= self.policy.threshold * self.max_tokens:
                compaction = _compaction.compact_sync(self, "auto", None, force=False, raise_errors=False)
                if compaction is not None:
                    self._emit_update()
                return self._finish_request(compaction, self.counted_tokens())
            return self._finish_request(None, counted, used)

    async def abuild_request(self, *, reserve_tokens: int = 0) -> BuiltRequest:
        """Async :meth:`build_request` (uses the summarizer's ``asummarize`` when it has one)."""
        with self._lock:
            self._set_reserve(reserve_tokens)
        compaction = None
        if self.policy.auto and self._over(self.policy.threshold):
            compaction = await _compaction.compact_async(self, "auto", None, force=False, raise_errors=False)
            if compaction is not None:
                with self._lock:
                    self._emit_update()
        with self._lock:
            return self._finish_request(compaction, self.counted_tokens())

    # -- compaction --------------------------------------------------------------------------------------------
    def compact(self, instructions: str | None = None) -> ContextCompacted:
        """Compact now (manual trigger), summarizing the older safe prefix; ``instructions`` focus the summary."""
        if instructions is not None:
            check_text("instructions", instructions, InvalidMessageError)
        with self._lock:
            result = _compaction.compact_sync(self, "manual", instructions, force=True, raise_errors=True)
            self._emit_update()
            assert result is not None
            return result

    async def acompact(self, instructions: str | None = None) -> ContextCompacted:
        """Async :meth:`compact`."""
        if instructions is not None:
            check_text("instructions", instructions, InvalidMessageError)
        result = await _compaction.compact_async(self, "manual", instructions, force=True, raise_errors=True)
        with self._lock:
            self._emit_update()
        assert result is not None
        return result

    # -- cognitive bindings and planned context ----------------------------------------------------------------
    def _on_cognitive_event(self, name: str, payload: dict[str, Any]) -> None:
        binding = payload.get("binding")
        self.events.emit(
            CognitiveContextBound(
                session_id=self.session_id,
                seq=self.events.next_seq(),
                binding=binding if isinstance(binding, dict) else {},
            )
        )

    def retrieve_knowledge(self, query: str) -> list[ContextItem]:
        """Query the bound cognitive package for ``query``; fails closed (no fallback to other retrieval).

        Raises:
            CognitiveContextError: the session is not bound, or the provider/response broke the contract.
        """
        if self.cognitive is None:
            raise CognitiveContextError("retrieve_knowledge: this session is not bound to a cognitive package")
        return self.cognitive.retrieve(query, session_id=self.session_id)

    async def aretrieve_knowledge(self, query: str) -> list[ContextItem]:
        """Async :meth:`retrieve_knowledge`."""
        if self.cognitive is None:
            raise CognitiveContextError("retrieve_knowledge: this session is not bound to a cognitive package")
        return await self.cognitive.aretrieve(query, session_id=self.session_id)

    def set_context(self, items: Sequence[ContextItem], config: PlannerConfig | None = None) -> PlanResult:
        """Plan ``items`` (rank, dedupe, budget) and send the result with every request until changed.

        The rendered context is one user-role message of escaped ``<context>`` envelopes after the system prompt,
        summary and pinned content: it is data, counted in the same budget as everything else. Pass no items to
        clear it. Returns the plan (what was included, what was dropped and why).
        """
        items = check_context(items, config)
        plan = plan_context(items, config or PlannerConfig.balanced(), counter=self.counter)
        with self._lock:
            self.last_plan = plan
            self._conv.set_context(
                Message(
                    role="user",
                    content=plan.rendered,
                    id=f"ctxbudget-context-{self.session_id}",
                    metadata={"ctxbudget": "context"},
                )
                if plan.rendered
                else None
            )
            self._emit_update()
        return plan

    # -- snapshots ---------------------------------------------------------------------------------------------
    def snapshot(self) -> SessionSnapshot:
        """A resumable, versioned copy of this session (see :mod:`ctxbudget.session.snapshot`).

        Raises:
            SnapshotFormatError: a message built past validation (``Message.model_construct``) does not validate.
        """
        with self._lock:
            try:
                return _snapshots.take(self)
            except ValidationError as exc:
                raise to_usage_error(exc, SnapshotFormatError, f"snapshot of session {self.session_id!r}") from None

    @classmethod
    def restore(
        cls,
        snapshot: SessionSnapshot | str | bytes,
        *,
        counter: TokenCounter | None = None,
        summarizer: Summarizer | AsyncSummarizer | None = None,
        registry: ModelRegistry = DEFAULT_REGISTRY,
        cognitive: CognitiveContextSession | None = None,
        providers: Sequence[object] = (),
        archive: Archive | None = None,
    ) -> ContextSession:
        """Rebuild a session from :meth:`snapshot` output (a model or its JSON).

        A bound snapshot needs ``cognitive`` re-injected with the identical binding; see
        :func:`ctxbudget.cognitive.check_resume` for the errors a missing, different or new binding raises.
        A snapshot whose archive is kept in a store (``archive_in_store``) needs that ``archive`` passed (a
        :class:`~ctxbudget.shared_session.session.SharedSession` does), else it is refused
        (:class:`SnapshotFormatError`).
        """
        snap = snapshot if isinstance(snapshot, SessionSnapshot) else SessionSnapshot.from_json(snapshot)
        stored = PackageBinding.from_dict(snap.binding) if snap.binding is not None else None
        check_resume(stored, cognitive.binding if cognitive is not None else None)
        try:
            policy = CompactionPolicy(**snap.policy)
        except InvalidPolicyError as exc:
            raise SnapshotFormatError(f"snapshot.policy.{exc.field}: {exc}", field=f"policy.{exc.field}") from exc
        session = cls(
            model=snap.model,
            max_tokens=snap.max_tokens,
            counter=counter,
            system_prompt=snap.system_prompt,
            tools=snap.tools,
            policy=policy,
            summarizer=summarizer,
            session_id=snap.session_id,
            compact_instructions=snap.compact_instructions,
            registry=registry,
            cognitive=cognitive,
            providers=providers,
        )
        session.model = snap.model
        _snapshots.apply(session, snap, archive=archive)
        return session

    # -- reconstruction ----------------------------------------------------------------------------------------
    def originals(self) -> list[Message]:
        """Every message ever added, as it was given, in the order it was added (archive + live history)."""
        with self._lock:
            return self._conv.originals()

    def read_archived(self, handle: str, *, offset: int = 0, limit: int | None = 20_000) -> str:
        """Read an archived original back (what a model's read-back tool calls)."""
        check_type("handle", handle, str, UsageError)
        return self.archive.read(handle, offset=offset, limit=limit)

    def search_archive(self, query: str, k: int = 5) -> list[ArchiveHit]:
        """Rank every archived original for ``query``, best first: what a model's search tool calls.

        One hit per archived message (BM25 over identifier-aware tokens, see :mod:`ctxbudget.archive.search`); pass a
        hit's handle to :meth:`read_archived` for the full original.

        Raises:
            InvalidPolicyError: ``query`` is not a non-empty str, or ``k`` is not an int in 1..100.
        """
        return self.archive.search(query, k)
