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
* Views are cached per ``thread_id``, each with its own message converter (two threads may use the same message
  ids: nothing of one thread's messages is ever copied into another's); a run without one (no checkpointer, a
  stateless server) gets its own per-invocation id in ``ctxbudget_run`` (stamped with its first model call's reply),
  so concurrent threadless runs never share a view or a pending update, and its view is dropped when the run ends
  (``after_agent``). A state is
  recognised by its messages' ids, so a checkpointer's fresh objects cost nothing: a model call counts only the
  messages added since the last one, from their LangChain form; they are converted and added to the session only when
  it needs them (a compaction, the hard stop, a message the session shapes as it arrives).
* Events reach LangChain callbacks as custom events ``ctxbudget.<type>``; summarizer calls are tagged ``nostream``.

The window is ``max_tokens`` when given, else the model's ``profile["max_input_tokens"]``, else the ctxbudget model
registry by model name. Place this middleware last in ``middleware=[...]`` so it budgets the request the model
really receives.

This module holds the hooks and the state schema; the views per thread are ``_threads``'s, the messages a call sends
``_outgoing``'s, the reply handed back (call ids, calibration, the update beside it) ``_replies``'s, bounding on
arrival ``_bounding``'s, and the read-back and search tools ``_read_back``'s.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, cast

from ctxbudget import BuiltRequest, ContextSession
from ctxbudget.archive.search import ArchiveHit, render_hits
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.compaction.summarize import AsyncSummarizer, Summarizer
from ctxbudget.errors import ContextOverflowError, UsageError
from ctxbudget.messages import Message
from ctxbudget.messages.tokens import TiktokenCounter, TokenCounter
from ctxbudget.session.events import EventType
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
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage
from langchain_core.tools import BaseTool

from ._archive_store import GraphStore, is_ref
from ._archives import Archives
from ._bounding import bound_output
from ._checks import (
    check_bool,
    check_common,
    check_event_types,
    check_names,
    check_optional_str,
    check_positive_int,
)
from ._editing import ToolEdits
from ._outgoing import outgoing_messages, waiting_messages
from ._read_back import READ_TOOL_NAME, ArchiveReader, ReadArchivedArgs, archived_messages, read_tool
from ._replies import calibrate, with_call_ids, with_update
from ._search import SEARCH_TOOL_NAME, SearchArchiveArgs, search_tool
from ._threads import RUN_KEY, Views
from ._update import ARCHIVE_KEY, META_KEY, SUMMARY_KEY
from ._view import ThreadView
from .errors import LangChainContextOverflowError
from .events import DEFAULT_FORWARDED
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
        self.read_tool = read_tool(self.read_archived)
        self.search_tool = search_tool(lambda query, k: render_hits(self.search_archived(query, k=k), query))
        self.tools: Sequence[BaseTool] = [self.read_tool, self.search_tool] if read_back_tool else []
        self.archives = Archives(archive_store)
        self._views = Views(self, self.archives)
        self.reader = ArchiveReader(self, self.archives, self._views.lookup)

    # -- threads -------------------------------------------------------------------------------------------------
    def session(self, thread_id: str) -> ContextSession | None:
        """The live session of a thread (``None`` until its first model call in this process).

        Messages the thread's view holds waiting are added to it first: it holds every message the view has seen.
        """
        view = self._views.get(thread_id)
        if view is None:
            return None
        with view.lock:
            view.settle()
        return view.session

    # -- model calls ---------------------------------------------------------------------------------------------
    def _finish(self, view: ThreadView, built: BuiltRequest | None, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """The request the model receives for ``built`` (see :mod:`langchain_ctxbudget._outgoing`).

        ``built`` is ``None`` for a request sent with messages waiting (:meth:`ThreadView.waiting_request`).
        ``request`` itself when it sends the state's messages as they are.
        """
        given = cast("list[BaseMessage]", request.messages)
        if built is None:
            messages = waiting_messages(view, view.converter, self.edits, self.counter, given=given)
        else:
            messages = outgoing_messages(view, built, view.converter, self.edits, self.counter, given=given)
        return request if messages is given else request.override(messages=cast("list[AnyMessage]", messages))

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
        view, run = self._views.open(request)
        with view.lock:
            built = None
            if view.waiting_request() is None:
                view.settle()
                try:
                    built = view.session.build_request()
                except ContextOverflowError as exc:
                    view.forwarder.flush()
                    raise LangChainContextOverflowError.from_core(exc) from exc
            sent = self._finish(view, built, request)
        view.forwarder.flush()
        response = with_call_ids(handler(sent))
        with view.lock:
            calibrate(view, response)
            update = view.take_update()
        return with_update(response, update, run)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Async :meth:`wrap_model_call` (the summarizer's ``asummarize``, the archive store's async twins)."""
        view, run = await self._views.aopen(request)
        built = None
        if view.waiting_request() is None:
            view.settle()
            try:
                built = await view.session.abuild_request()
            except ContextOverflowError as exc:
                await view.forwarder.aflush()
                raise LangChainContextOverflowError.from_core(exc) from exc
        sent = self._finish(view, built, request)
        await view.forwarder.aflush()
        response = with_call_ids(await handler(sent))
        calibrate(view, response)
        return with_update(response, await view.atake_update(), run)

    def after_agent(self, state: ContextBudgetState, runtime: Any) -> dict[str, Any] | None:
        """Forget the view of a run without a ``thread_id``: no later call can extend it."""
        self._views.forget_run(state, runtime)
        return None

    async def aafter_agent(self, state: ContextBudgetState, runtime: Any) -> dict[str, Any] | None:
        """Async :meth:`after_agent` (no I/O)."""
        return self.after_agent(state, runtime)

    # -- tool calls ----------------------------------------------------------------------------------------------
    def _bound(self, result: Any, request: ToolCallRequest) -> Any:
        return bound_output(result, self._views.lookup(request.state, request.runtime), self.counter)

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        """Serve ``read_archived_output`` and ``search_archive`` from the state; bound oversized tool outputs."""
        if request.tool_call["name"] == READ_TOOL_NAME:
            return self.reader.serve_read(request.tool_call, request.state, request.runtime)
        if request.tool_call["name"] == SEARCH_TOOL_NAME and self.search_tool in self.tools:
            return self.reader.serve_search(request.tool_call, request.state, request.runtime)
        result = self._bound(handler(request), request)
        view = self._views.lookup(request.state, request.runtime)
        if view is not None:
            view.forwarder.flush()
        return result

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        """Async :meth:`wrap_tool_call` (reads the archive store with its async twins)."""
        if request.tool_call["name"] == READ_TOOL_NAME:
            return await self.reader.aserve_read(request.tool_call, request.state, request.runtime)
        if request.tool_call["name"] == SEARCH_TOOL_NAME and self.search_tool in self.tools:
            return await self.reader.aserve_search(request.tool_call, request.state, request.runtime)
        result = self._bound(await handler(request), request)
        view = self._views.lookup(request.state, request.runtime)
        if view is not None:
            await view.forwarder.aflush()
        return result

    # -- read-back -----------------------------------------------------------------------------------------------
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
        return self.reader.read(handle, offset=offset, limit=limit, state=state, runtime=runtime)

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
        return self.reader.search(query, k=k, state=state, runtime=runtime)

    def archived(self, state: Mapping[str, Any], runtime: Any = None) -> list[Message]:
        """Every archived original of an agent state (one per message id), read from the archive store."""
        return self.reader.archived(state, runtime)
