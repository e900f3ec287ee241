"""``ContextBudgetMiddleware``: every model call of a ``create_agent`` graph fits the window, and nothing is lost.

* ``wrap_model_call``: the request (system prompt + messages + tool schemas, by our counter) is compacted when over
  the threshold (bound -> clear -> summarize -> truncate), always a valid provider sequence, and refused past the
  hard stop with :class:`~langchain_ctxbudget.errors.LangChainContextOverflowError`. Cost per call: O(new messages).
* In the same model node, the provider's ``usage_metadata`` calibrates the tracker, and compaction results are
  written to the state (``RemoveMessage`` by id, in-place replacements, ``ctxbudget_summary``, ``ctxbudget_meta``),
  returned beside the reply as a ``Command``: no extra graph step, so no extra checkpoint. They survive any
  checkpointer and are not recomputed next turn. The originals compaction archived go to the archive store first
  (see below); the state's ``ctxbudget_archive`` holds only a reference to them (a few dozen bytes), so a checkpoint
  does not grow with the conversation's past.
* ``wrap_tool_call``: a tool output over the per-output limit is bounded to head + tail as it arrives; the full text
  travels with the message until it is archived at the next model call. The ``read_archived_output`` tool (added
  unless ``read_back_tool=False``) lets the model read any archived original back; beside it, ``search_archive``
  ranks every archived original of the state for a query and names their handles. Both read the archive the
  state's reference names, through the store.
* The archive store: ``archive_store`` when given (a :class:`~ctxbudget.stores.SnapshotStore`: SQLite, Redis for
  many workers, or a LangGraph ``BaseStore``); else the agent's own store (``create_agent(..., store=...)``); else the
  process's in-memory SQLite database, which lives as long as the process. With a checkpointer that outlives the
  process, give the agent a store or pass one: a state whose archive is not in the store reads back as an error
  naming it. A state written by an earlier version, with its archive inline, keeps working: its entries are moved
  to the store at its next model call.
* Views are cached per ``thread_id``; a run without one (no checkpointer, a stateless server) gets its own
  per-invocation id in ``ctxbudget_run`` (stamped with its first model call's reply), so concurrent threadless runs
  never share a view or a pending update, and its view is dropped when the run ends (``after_agent``). A state is
  recognised by its messages' ids, so a checkpointer's fresh objects cost nothing: a model call converts and counts
  only the messages added since the last one.
* Events reach LangChain callbacks as custom events ``ctxbudget.<type>``; summarizer calls are tagged ``nostream``.

The window is ``max_tokens`` when given, else the model's ``profile["max_input_tokens"]``, else the ctxbudget model
registry by model name. Place this middleware last in ``middleware=[...]`` so it budgets the request the model
really receives.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, cast

from ctxbudget import BuiltRequest, ContextSession
from ctxbudget.archive import HANDLE_PREFIX, Archive
from ctxbudget.archive.search import ArchiveHit, check_search_args, render_hits
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.compaction.summarize import AsyncSummarizer, Summarizer
from ctxbudget.context.evidence import excerpt
from ctxbudget.errors import ArchiveError, ContextOverflowError, InvalidPolicyError, UsageError
from ctxbudget.messages import Message
from ctxbudget.messages._validation import describe_error, to_usage_error
from ctxbudget.messages.tokens import BoundedCounter, TiktokenCounter, TokenCounter
from ctxbudget.session.events import EventType, ToolOutputBounded
from ctxbudget.stores.base import SnapshotStore
from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    OmitFromSchema,
    ToolCallRequest,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langchain_core.runnables.config import ensure_config
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.types import Command  # what ExtendedModelResponse.command is (langchain depends on langgraph)
from pydantic import BaseModel, Field, ValidationError

from ._archive_store import GraphStore, is_ref
from ._archives import Archives
from ._checks import (
    check_bool,
    check_common,
    check_event_types,
    check_names,
    check_optional_str,
    check_positive_int,
)
from ._editing import ToolEdits
from ._search import SEARCH_TOOL_NAME, SearchArchiveArgs, search_message, search_tool
from ._summary import fold_summary, is_summary, sent_summary
from ._thread_archive import ThreadArchive
from ._view import ARCHIVE_KEY, META_KEY, SUMMARY_KEY, ThreadView, live_handles, restore_session, state_archive
from ._window import resolve_window
from .convert import CTXBUDGET_KEY, MessageConverter, lacks_tool_call_ids, tool_schemas, usage_of, with_tool_call_ids
from .errors import LangChainContextOverflowError
from .events import DEFAULT_FORWARDED, EventForwarder
from .summarizer import LangChainSummarizer

__all__ = [
    "ARCHIVE_KEY",
    "META_KEY",
    "READ_TOOL_NAME",
    "RUN_KEY",
    "SEARCH_TOOL_NAME",
    "SUMMARY_KEY",
    "ContextBudgetMiddleware",
    "ContextBudgetState",
    "ReadArchivedArgs",
    "SearchArchiveArgs",
    "archived_messages",
    "merge_archive",
]

READ_TOOL_NAME = "read_archived_output"
"""Name of the read-back tool the middleware adds."""

RUN_KEY = "ctxbudget_run"
"""State field: a per-invocation id, set only for runs without a ``thread_id`` (their views are keyed by it)."""

_PRIVATE = OmitFromSchema(input=True, output=True)
_OUTPUT_ONLY = OmitFromSchema(input=True, output=False)


def merge_archive(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer of ``ctxbudget_archive``: a reference to the store replaces what was there (inline entries included).

    Inline entries (written by an earlier version) are only ever added, as before.
    """
    if is_ref(right):
        return dict(right or {})
    return {**(left or {}), **(right or {})}


class ContextBudgetState(AgentState[Any], total=False):
    """The agent state plus what compaction must persist (all optional)."""

    ctxbudget_summary: Annotated[str | None, _OUTPUT_ONLY]
    ctxbudget_meta: Annotated[dict[str, Any], _PRIVATE]
    ctxbudget_archive: Annotated[dict[str, Any], _PRIVATE, merge_archive]
    ctxbudget_run: Annotated[str | None, _PRIVATE]


class ReadArchivedArgs(BaseModel):
    """Arguments of the ``read_archived_output`` tool (validated before any read; the model fills them in)."""

    handle: str = Field(min_length=1, description="The handle shown in the marker; it starts with ctx://archive/.")
    offset: int = Field(default=0, ge=0, description="First character to return (0 = the start).")
    limit: int = Field(default=20_000, ge=1, description="Most characters to return.")


def _thread_id(runtime: Any) -> str | None:
    thread = getattr(getattr(runtime, "execution_info", None), "thread_id", None)
    if thread is None:
        config = getattr(runtime, "config", None) or ensure_config()
        thread = (config.get("configurable") or {}).get("thread_id")
    return None if thread is None else str(thread)


_RUN_PREFIX = "\x00run:"


def _view_key(state: Any, runtime: Any) -> str | None:
    """The key of the view a call belongs to: its thread, else its own invocation (never shared between runs).

    ``None`` when there is neither (a threadless call outside an agent run): such calls get an uncached view.
    """
    thread = _thread_id(runtime)
    if thread is not None:
        return thread
    run = state.get(RUN_KEY) if isinstance(state, Mapping) else None
    return f"{_RUN_PREFIX}{run}" if isinstance(run, str) and run else None


def _session_id(key: str | None) -> str:
    if key is None:
        return f"lc-call-{uuid.uuid4().hex}"
    if key.startswith(_RUN_PREFIX):
        return f"lc-run-{key.removeprefix(_RUN_PREFIX)}"
    return f"lc-{key}"


class ContextBudgetMiddleware(AgentMiddleware[ContextBudgetState, Any]):
    """Keep every model call of an agent inside its context window.

    Args:
        max_tokens: the prompt budget; default: the model's ``profile["max_input_tokens"]``.
        counter: token counter (default exact ``o200k_base``); provider usage calibrates it.
        policy: compaction policy (threshold, target, hard stop, tail to keep, tool-output limits).
        summarizer: a chat model (wrapped in :class:`LangChainSummarizer`, ``nostream``), a ctxbudget summarizer,
            or ``None`` for the offline extractive summarizer.
        compact_instructions: project "Compact Instructions" added to every summary prompt.
        read_back_tool: add the ``read_archived_output`` and ``search_archive`` tools.
        forward_events: ctxbudget event types dispatched as LangChain custom events.
        max_threads: conversation threads (and threadless runs in flight) kept in memory; others are rebuilt from
            their state on demand.
        exclude_tools: tools whose results are never cleared (as ``ClearToolUsesEdit.exclude_tools``; added to the
            policy's ``never_clear_tools``): the clear tier leaves them whole; an oversized one is still bounded, and
            they are summarized with their turn like the rest, so they never pile up to the hard stop.
        clear_tool_inputs: send a call whose result was cleared with empty arguments (as
            ``ClearToolUsesEdit.clear_tool_inputs``).
        archive_store: where archived originals are kept: a :class:`~ctxbudget.stores.SnapshotStore`
            (``SQLiteSnapshotStore(path)``, ``RedisSnapshotStore`` for many workers) or a LangGraph ``BaseStore``;
            default: the agent's store when it has one (``create_agent(..., store=...)``), else the process's in-memory
            SQLite database (gone with the process, like an ``InMemorySaver``).
        placeholder: the text a cleared result is sent as (as ``ClearToolUsesEdit.placeholder``), followed by where
            its full text is archived; our marker (which keeps the output's key lines) when ``None``, or when the
            placeholder would be longer than it.

    Raises:
        UsageError: an argument of the wrong type or out of range (``InvalidPolicyError`` naming the field).
    """

    state_schema = ContextBudgetState

    def __init__(
        self,
        *,
        max_tokens: int | None = None,
        counter: TokenCounter | None = None,
        policy: CompactionPolicy | None = None,
        summarizer: BaseChatModel | Summarizer | AsyncSummarizer | None = None,
        compact_instructions: str | None = None,
        read_back_tool: bool = True,
        forward_events: frozenset[EventType] = DEFAULT_FORWARDED,
        max_threads: int = 1024,
        exclude_tools: Sequence[str] = (),
        clear_tool_inputs: bool = False,
        placeholder: str | None = None,
        archive_store: SnapshotStore | GraphStore | None = None,
    ) -> None:
        super().__init__()
        if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)):
            raise UsageError(f"max_tokens: must be an int > 0 or None, got {max_tokens!r}", field="max_tokens")
        if max_tokens is not None and max_tokens <= 0:
            raise UsageError(f"max_tokens: must be > 0, got {max_tokens}", field="max_tokens")
        check_common(counter=counter, policy=policy, summarizer=summarizer)
        check_optional_str("compact_instructions", compact_instructions)
        check_bool("read_back_tool", read_back_tool)
        check_positive_int("max_threads", max_threads)
        check_bool("clear_tool_inputs", clear_tool_inputs)
        check_optional_str("placeholder", placeholder)
        if archive_store is not None and not isinstance(archive_store, (SnapshotStore, GraphStore)):
            raise UsageError(
                "archive_store: must be a ctxbudget SnapshotStore or a LangGraph BaseStore, got "
                f"{type(archive_store).__name__}",
                field="archive_store",
            )
        self.edits = ToolEdits(
            exclude_tools=check_names("exclude_tools", exclude_tools),
            clear_tool_inputs=clear_tool_inputs,
            placeholder=placeholder,
        )
        forward_events = check_event_types(forward_events)
        self.max_tokens = max_tokens
        self.counter: TokenCounter = counter or TiktokenCounter()
        self.policy = policy or CompactionPolicy()
        if self.edits.exclude_tools:  # the clear tier leaves their results whole; they are still summarized
            excluded = set(self.policy.never_clear_tools) | self.edits.exclude_tools
            self.policy = self.policy.with_changes(never_clear_tools=tuple(sorted(excluded)))
        self.summarizer = LangChainSummarizer(summarizer) if isinstance(summarizer, BaseChatModel) else summarizer
        self.compact_instructions = compact_instructions
        self.forward_events = forward_events
        self.max_threads = max_threads
        self.converter = MessageConverter()
        self.read_tool = self._read_tool()
        self.search_tool = search_tool(lambda query, k: render_hits(self.search_archived(query, k=k), query))
        self.tools: Sequence[BaseTool] = [self.read_tool, self.search_tool] if read_back_tool else []
        self.archives = Archives(archive_store)
        self._views: OrderedDict[str, ThreadView] = OrderedDict()
        self._lock = threading.Lock()

    # -- threads -------------------------------------------------------------------------------------------------
    def session(self, thread_id: str) -> ContextSession | None:
        """The live session of a thread (``None`` until its first model call in this process)."""
        view = self._views.get(thread_id)
        return view.session if view is not None else None

    def _new_session(self, model: BaseChatModel, session_id: str) -> ContextSession:
        return ContextSession(
            max_tokens=resolve_window(model, self.max_tokens),
            counter=self.counter,
            policy=self.policy,
            summarizer=self.summarizer,
            session_id=session_id,
            compact_instructions=self.compact_instructions,
        )

    def _lookup_view(self, state: Any, runtime: Any) -> ThreadView | None:
        key = _view_key(state, runtime)
        return self._views.get(key) if key is not None else None

    def _cached_view(self, request: ModelRequest[Any]) -> tuple[str, ThreadView | None, str | None]:
        """The view key of a call, its cached view (when its messages are where the state has them), and a new run id.

        The run id is for a call with neither a thread nor a run id: it is stamped into the state with the reply.
        """
        key = _view_key(request.state, request.runtime)
        run = None
        if key is None:
            run = uuid.uuid4().hex
            key = f"{_RUN_PREFIX}{run}"
        view = self._views.get(key)
        if view is not None and not view.extends(request.messages):
            view = None
        return key, view, run

    def _new_view(self, request: ModelRequest[Any], key: str, archive: ThreadArchive) -> ThreadView:
        session_id = _session_id(key)
        session = restore_session(
            request.state, request.messages, lambda: self._new_session(request.model, session_id), session_id, archive
        )
        view = ThreadView(session, self.converter, EventForwarder(self.forward_events), archive)
        with self._lock:
            self._views[key] = view
            while len(self._views) > self.max_threads:
                self._views.popitem(last=False)
        return view

    def _ready(self, view: ThreadView, key: str, request: ModelRequest[Any]) -> ThreadView:
        with self._lock:
            if key in self._views:
                self._views.move_to_end(key)
        view.extend(request.messages[len(view.ids) :])
        self._configure(view, request)
        return view

    def _view(self, request: ModelRequest[Any]) -> tuple[ThreadView, str | None]:
        key, view, run = self._cached_view(request)
        if view is None:
            archive, ref = self.archives.new(key, request.state, request.runtime)
            if ref is not None:
                archive.load(ref)
                archive.prefetch(live_handles(request.messages))
            view = self._new_view(request, key, archive)
        return self._ready(view, key, request), run

    async def _aview(self, request: ModelRequest[Any]) -> tuple[ThreadView, str | None]:
        key, view, run = self._cached_view(request)
        if view is None:
            archive, ref = self.archives.new(key, request.state, request.runtime)
            if ref is not None:
                await archive.aload(ref)
                await archive.aprefetch(live_handles(request.messages))
            view = self._new_view(request, key, archive)
        return self._ready(view, key, request), run

    def _configure(self, view: ThreadView, request: ModelRequest[Any]) -> None:
        session = view.session
        system = request.system_message.text if request.system_message is not None else None
        if system != session.system_prompt:
            session.system_prompt = system
        key = tuple(id(tool) for tool in request.tools)
        if key != view.tool_key:
            session.tools = tool_schemas(request.tools)
            view.tool_key = key
        if isinstance(self.summarizer, LangChainSummarizer):
            session.summarizer = self.summarizer.with_parent(ensure_config())

    # -- model calls ---------------------------------------------------------------------------------------------
    def _messages(self, view: ThreadView, built: BuiltRequest) -> list[BaseMessage]:
        sent = built.messages
        if view.session.system_prompt:
            # The session's copy of the agent's system prompt, always first when it has one: the agent sends its own
            # SystemMessage, ours only measured it. Recognised by what we set, never by an id a caller could choose.
            sent = sent[1:]
        prefix = len(sent) - len(view.msgs)
        if prefix >= 0 and sent[prefix:] == tuple(view.msgs):  # identical objects: compared in C
            head = [sent_summary(m) or self.converter.to_langchain(m) for m in sent[:prefix]]
            if not any(is_summary(m) for m in head):
                return [*head, *view.body()]
            body = view.body()  # the summary folds into the human message next to it: only the first few change
            return [*fold_summary([*head, *body[:1]]), *body[1:]]
        return fold_summary([sent_summary(m) or self.converter.to_langchain(m) for m in sent])

    def _finish(self, view: ThreadView, built: BuiltRequest) -> list[BaseMessage]:
        if built.compaction is not None:
            view.absorb()
        messages = self._messages(view, built)
        if self.edits.active and view.cleared:
            return self.edits.apply(messages, view.cleared, self.counter)
        return messages

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Fit the request to the budget (compacting if needed), call the model, and persist what changed.

        What compaction changed (removals, replacements, summary, meta, the archive's reference; the originals are
        written to the archive store first) and the calibration from the reply's ``usage_metadata`` are applied in
        the model node itself, as a ``Command`` beside the reply: no extra graph step, so no extra checkpoint.
        """
        view, run = self._view(request)
        with view.lock:
            try:
                built = view.session.build_request()
            except ContextOverflowError as exc:
                view.forwarder.flush()
                raise LangChainContextOverflowError.from_core(exc) from exc
            messages = self._finish(view, built)
        view.forwarder.flush()
        response = _with_call_ids(handler(request.override(messages=cast("list[AnyMessage]", messages))))
        with view.lock:
            _calibrate(view, response)
            update = view.take_update()
        return _extended(response, update, run)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Async :meth:`wrap_model_call` (the summarizer's ``asummarize``, the archive store's async twins)."""
        view, run = await self._aview(request)
        try:
            built = await view.session.abuild_request()
        except ContextOverflowError as exc:
            await view.forwarder.aflush()
            raise LangChainContextOverflowError.from_core(exc) from exc
        messages = self._finish(view, built)
        await view.forwarder.aflush()
        response = _with_call_ids(await handler(request.override(messages=cast("list[AnyMessage]", messages))))
        _calibrate(view, response)
        return _extended(response, await view.atake_update(), run)

    def after_agent(self, state: ContextBudgetState, runtime: Any) -> dict[str, Any] | None:
        """Forget the view of a run without a ``thread_id``: no later call can extend it."""
        key = _view_key(state, runtime)
        if key is not None and key.startswith(_RUN_PREFIX):
            with self._lock:
                self._views.pop(key, None)
        return None

    async def aafter_agent(self, state: ContextBudgetState, runtime: Any) -> dict[str, Any] | None:
        """Async :meth:`after_agent` (no I/O)."""
        return self.after_agent(state, runtime)

    # -- tool calls ----------------------------------------------------------------------------------------------
    def _bound(self, result: Any, request: ToolCallRequest) -> Any:
        view = self._lookup_view(request.state, request.runtime)
        if view is None or not isinstance(result, ToolMessage) or not isinstance(result.content, str):
            return result  # the session bounds it on arrival at the next model call instead
        session = view.session
        limit = session.policy.tool_output_limit(session.max_tokens)
        if self._surely_within(result.content, limit):
            return result  # counted once, by the session, when the next model call adds it
        before = self.counter.count_text(result.content)
        if before <= limit:
            return result
        message_id = result.id or f"lc_{uuid.uuid4().hex}"
        handle = f"{HANDLE_PREFIX}{message_id}.bounded"
        text = excerpt(result.content, max_tokens=limit, counter=self.counter, handle=handle)
        marks = {"handle": handle, "original": result.content}
        bounded = result.model_copy(
            update={
                "content": text,
                "id": message_id,
                "response_metadata": {**result.response_metadata, CTXBUDGET_KEY: marks},
            }
        )
        event = ToolOutputBounded(
            session_id=session.session_id,
            seq=session.events.next_seq(),
            message_id=message_id,
            handle=handle,
            tokens_before=before,
            tokens_after=self.counter.count_text(text),
        )
        session.events.emit(event)
        return bounded

    def _surely_within(self, text: str, limit: int) -> bool:
        """Whether the counter's upper bound (UTF-8 bytes for tiktoken) already shows ``text`` within ``limit``."""
        if not isinstance(self.counter, BoundedCounter):
            return False
        bound = self.counter.bound_message(Message(role="tool", content=text, tool_call_id="bound"))
        return bound is not None and bound <= limit

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        """Serve ``read_archived_output`` and ``search_archive`` from the state; bound oversized tool outputs."""
        if request.tool_call["name"] == READ_TOOL_NAME:
            return self._serve_read(request)
        if request.tool_call["name"] == SEARCH_TOOL_NAME and self.search_tool in self.tools:
            return self._serve_search(request)
        result = self._bound(handler(request), request)
        view = self._lookup_view(request.state, request.runtime)
        if view is not None:
            view.forwarder.flush()
        return result

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        """Async :meth:`wrap_tool_call` (reads the archive store with its async twins)."""
        if request.tool_call["name"] == READ_TOOL_NAME:
            return await self._aserve_read(request)
        if request.tool_call["name"] == SEARCH_TOOL_NAME and self.search_tool in self.tools:
            return await self._aserve_search(request)
        result = self._bound(await handler(request), request)
        view = self._lookup_view(request.state, request.runtime)
        if view is not None:
            await view.forwarder.aflush()
        return result

    # -- read-back -----------------------------------------------------------------------------------------------
    def _read_tool(self) -> BaseTool:
        def read_archived_output(handle: str, offset: int = 0, limit: int = 20_000) -> str:
            return self.read_archived(handle, offset=offset, limit=limit)

        return StructuredTool.from_function(
            read_archived_output,
            name=READ_TOOL_NAME,
            description=(
                "Read back the full text of a tool output or earlier message that was shortened or archived to save "
                "context. Pass the handle shown in the marker (it starts with ctx://archive/); use offset and limit "
                "(characters) to page through long text."
            ),
            args_schema=ReadArchivedArgs,
        )

    def _read_args(self, request: ToolCallRequest) -> ReadArchivedArgs | ToolMessage:
        """The read-back call's arguments, or the error answering it (the tool itself never runs: validated here)."""
        try:
            return ReadArchivedArgs.model_validate(request.tool_call.get("args") or {})
        except ValidationError as exc:
            details = "; ".join(describe_error(error) for error in exc.errors(include_url=False))
            return _read_error(request.tool_call["id"] or "", f"invalid arguments for {READ_TOOL_NAME}: {details}")

    def _read_reply(
        self, request: ToolCallRequest, args: ReadArchivedArgs, full: str | None, view: ThreadView | None
    ) -> ToolMessage:
        call_id = request.tool_call["id"] or ""
        if full is None:
            return _read_error(
                call_id, f"handle: no archived output with handle {args.handle!r}; handles start with {HANDLE_PREFIX}"
            )
        return ToolMessage(
            content=self._page(full, args.offset, args.limit, view),
            tool_call_id=call_id,
            name=READ_TOOL_NAME,
            response_metadata={CTXBUDGET_KEY: {"kind": "read_back"}},
        )

    def _serve_read(self, request: ToolCallRequest) -> ToolMessage:
        """Answer a read-back call; bad arguments and unknown handles come back as an error for the model."""
        args = self._read_args(request)
        if isinstance(args, ToolMessage):
            return args
        state = request.state if isinstance(request.state, Mapping) else None
        view = self._lookup_view(state, request.runtime)
        try:
            full = self._lookup(args.handle, state, self.archives.of_state(state, request.runtime, view))
        except ArchiveError as exc:
            return _read_error(request.tool_call["id"] or "", str(exc))
        return self._read_reply(request, args, full, view)

    async def _aserve_read(self, request: ToolCallRequest) -> ToolMessage:
        """Async :meth:`_serve_read`."""
        args = self._read_args(request)
        if isinstance(args, ToolMessage):
            return args
        state = request.state if isinstance(request.state, Mapping) else None
        view = self._lookup_view(state, request.runtime)
        try:
            archive = await self.archives.aof_state(state, request.runtime, view)
            if isinstance(archive, ThreadArchive) and args.handle in archive.known:
                await archive.aget(args.handle)  # into the cache: the lookup below does no I/O
            full = self._lookup(args.handle, state, archive)
        except ArchiveError as exc:
            return _read_error(request.tool_call["id"] or "", str(exc))
        return self._read_reply(request, args, full, view)

    def read_archived(
        self,
        handle: str,
        *,
        offset: int = 0,
        limit: int = 20_000,
        state: Mapping[str, Any] | None = None,
        runtime: Any = None,
    ) -> str:
        """Read an archived original of the thread's state (or live session), bounded to one tool output.

        The original comes from the archive store the state's reference names (or, for an output bounded since the
        last model call, from the state's message). Returns the text slice followed by a line saying where the next
        page starts; an unknown handle returns a message naming it (for the model), never an exception.

        Raises:
            InvalidPolicyError: ``handle``, ``offset`` or ``limit`` is invalid (the error names it).
            ArchiveError: the state names an archive the store does not hold.
        """
        try:
            args = ReadArchivedArgs(handle=handle, offset=offset, limit=limit)
        except ValidationError as exc:
            raise to_usage_error(exc, InvalidPolicyError, READ_TOOL_NAME) from None
        view = self._lookup_view(state, runtime)
        full = self._lookup(args.handle, state, self.archives.of_state(state, runtime, view))
        if full is None:
            return f"[no archived output with handle {args.handle!r}; handles start with {HANDLE_PREFIX}]"
        return self._page(full, args.offset, args.limit, view)

    def search_archived(
        self, query: str, *, k: int = 5, state: Mapping[str, Any] | None = None, runtime: Any = None
    ) -> list[ArchiveHit]:
        """Rank every archived original of a state for ``query``: its archive in the store.

        Without a state, the live session's archive of the thread ``runtime`` names is searched. One hit per
        archived message, best first, each with the handle :meth:`read_archived` reads back. Only the
        entries of the state's own archive are searched: another branch's or another agent's never are.

        Raises:
            InvalidPolicyError: ``query`` is not a non-empty str or ``k`` is not an int in 1..100 (the error names it).
            ArchiveError: the state names an archive the store does not hold.
        """
        try:
            args = SearchArchiveArgs(query=query, k=k)
        except ValidationError as exc:
            raise to_usage_error(exc, InvalidPolicyError, SEARCH_TOOL_NAME) from None
        check_search_args(args.query, args.k)
        archive = self.archives.of_state(state, runtime, self._lookup_view(state, runtime))
        return archive.search(args.query, args.k) if archive is not None else []

    def _search_args(self, request: ToolCallRequest) -> SearchArchiveArgs | ToolMessage:
        try:  # the tool's args_schema: the tool itself never runs, so its validation must happen here
            return SearchArchiveArgs.model_validate(request.tool_call.get("args") or {})
        except ValidationError as exc:
            details = "; ".join(describe_error(error) for error in exc.errors(include_url=False))
            message = f"invalid arguments for {SEARCH_TOOL_NAME}: {details}"
            return search_message(request.tool_call["id"] or "", message, error=True)

    def _search_reply(
        self, request: ToolCallRequest, args: SearchArchiveArgs, archive: Archive | None, view: ThreadView | None
    ) -> ToolMessage:
        """Hits that fit one tool output."""
        call_id = request.tool_call["id"] or ""
        try:
            check_search_args(args.query, args.k)
            hits = archive.search(args.query, args.k) if archive is not None else []
        except UsageError as exc:  # a blank query
            return search_message(call_id, f"invalid arguments for {SEARCH_TOOL_NAME}: {exc}", error=True)
        budget = self.policy.tool_output_limit(view.session.max_tokens if view else self.max_tokens or 128_000) - 64
        text = render_hits(hits, args.query, max_tokens=max(1, budget), counter=self.counter)
        return search_message(call_id, text, max_tokens=max(1, budget), counter=self.counter)

    def _serve_search(self, request: ToolCallRequest) -> ToolMessage:
        """Answer a search call over the state's own archive, or an error naming the bad argument."""
        args = self._search_args(request)
        if isinstance(args, ToolMessage):
            return args
        state = request.state if isinstance(request.state, Mapping) else None
        view = self._lookup_view(state, request.runtime)
        try:
            archive = self.archives.of_state(state, request.runtime, view)
        except ArchiveError as exc:
            return search_message(request.tool_call["id"] or "", str(exc), error=True)
        return self._search_reply(request, args, archive, view)

    async def _aserve_search(self, request: ToolCallRequest) -> ToolMessage:
        """Async :meth:`_serve_search` (entries not yet indexed are read with the store's async twins)."""
        args = self._search_args(request)
        if isinstance(args, ToolMessage):
            return args
        state = request.state if isinstance(request.state, Mapping) else None
        view = self._lookup_view(state, request.runtime)
        try:
            archive = await self.archives.aof_state(state, request.runtime, view)
            if isinstance(archive, ThreadArchive):
                await archive.aindex()
        except ArchiveError as exc:
            return search_message(request.tool_call["id"] or "", str(exc), error=True)
        return self._search_reply(request, args, archive, view)

    def _page(self, full: str, offset: int, limit: int, view: ThreadView | None) -> str:
        chunk = full[offset : offset + limit]
        budget = self.policy.tool_output_limit(view.session.max_tokens if view else self.max_tokens or 128_000) - 64
        while chunk and self.counter.count_text(chunk) > budget:
            chunk = chunk[: int(len(chunk) * 0.8)]
        end = offset + len(chunk)
        footer = f"\n[chars {offset:,}-{end:,} of {len(full):,}" + (
            f"; continue with offset={end}]" if end < len(full) else "; end]"
        )
        return chunk + footer

    @staticmethod
    def _lookup(handle: str, state: Mapping[str, Any] | None, archive: Archive | None) -> str | None:
        """The original under ``handle``: in the state's archive, else in a message bounded since the last call."""
        if archive is not None and handle in archive:
            return archive.get(handle).readable_text
        for message in reversed((state or {}).get("messages") or []):
            marks = message.response_metadata.get(CTXBUDGET_KEY)
            if isinstance(marks, dict) and marks.get("handle") == handle and "original" in marks:
                return str(marks["original"])
        return None

    def archived(self, state: Mapping[str, Any], runtime: Any = None) -> list[Message]:
        """Every archived original of an agent state (one per message id), read from the archive store."""
        archive = self.archives.of_state(state, runtime, self._lookup_view(state, runtime))
        return archive.messages() if archive is not None else []


def _calibrate(view: ThreadView, response: ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]) -> None:
    """Calibrate the session's tracker from the reply's ``usage_metadata``."""
    inner = response.model_response if isinstance(response, ExtendedModelResponse) else response
    messages = inner.result if isinstance(inner, ModelResponse) else [inner]
    usage = usage_of(messages[-1]) if messages and isinstance(messages[-1], AIMessage) else None
    if usage is not None:
        view.session.record_usage(*usage)


def _extended(
    response: ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any],
    update: dict[str, Any] | None,
    run: str | None,
) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
    """The reply, with the state update beside it as a ``Command`` (merged with one an inner handler returned)."""
    if run is not None:
        update = {**(update or {}), RUN_KEY: run}
    if not update:
        return response
    if isinstance(response, ExtendedModelResponse):
        inner, command = response.model_response, response.command
        if command is not None and isinstance(command.update, dict):
            merged = {**command.update, **update}
            if "messages" in command.update and "messages" in update:
                merged["messages"] = [*command.update["messages"], *update["messages"]]
            update = merged
    else:
        inner = response if isinstance(response, ModelResponse) else ModelResponse(result=[response])
    return ExtendedModelResponse(model_response=inner, command=Command(update=update))


def _with_call_ids(
    response: ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any],
) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
    """The model's reply with an id on every tool call, so the tool node can answer each call by its id."""
    if isinstance(response, AIMessage):
        return cast("AIMessage", with_tool_call_ids(response))
    inner = response.model_response if isinstance(response, ExtendedModelResponse) else response
    if any(lacks_tool_call_ids(m) for m in inner.result):
        inner.result = [with_tool_call_ids(m) for m in inner.result]
    return response


def _read_error(call_id: str, message: str) -> ToolMessage:
    return ToolMessage(
        content=f"Error: {message}",
        tool_call_id=call_id,
        name=READ_TOOL_NAME,
        status="error",
        response_metadata={CTXBUDGET_KEY: {"kind": "read_back"}},
    )


def archived_messages(state: Mapping[str, Any], *, store: SnapshotStore | GraphStore | None = None) -> list[Message]:
    """Every archived original of an agent state (one per message id).

    Args:
        state: the agent state (``agent.get_state(config).values``).
        store: the archive store the state's reference names: the middleware's ``archive_store`` or the agent's
            store (``create_agent(..., store=...)``); ``None``: the middleware's default, the process's in-memory
            store. Not read for a state written by an earlier version, which holds its archive inline.

    Raises:
        ArchiveError: the store does not hold the archive the state names (the message says which to pass).
    """
    ref, inline = state_archive(state)
    if ref is None:
        return Archive(inline).messages()
    return Archives(store).of_state(state, None, None).messages()  # type: ignore[union-attr]  # a state is given
