"""The middleware's views, one per conversation: found by ``thread_id`` (or a threadless run's own id), kept LRU.

A call's view is keyed by its thread; a run without one (no checkpointer, a stateless server) gets its own
per-invocation id in ``ctxbudget_run`` (:data:`RUN_KEY`, stamped into the state with its first model call's reply),
so concurrent threadless runs never share a view, and its view is dropped when the run ends. A cached view serves a
call only when the call's messages extend what it mirrors; otherwise (and on a cache miss) the view is rebuilt from
the state: its summary and meta, and its archive, loaded from the store its reference names. At most
``max_threads`` views are kept, least recently used first out.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.compaction.summarize import AsyncSummarizer, Summarizer
from ctxbudget.messages.tokens import TokenCounter
from ctxbudget.session import ContextSession
from ctxbudget.session.events import EventType
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.runnables.config import ensure_config
from langchain_core.tools import BaseTool

from ._archives import Archives
from ._restore import live_handles, restore_session
from ._thread_archive import ThreadArchive
from ._view import ThreadView
from ._window import resolve_window
from .convert import MessageConverter, tool_schemas
from .events import EventForwarder
from .summarizer import LangChainSummarizer

__all__ = ["RUN_KEY", "ModelCall", "ThreadSettings", "Views", "session_id", "thread_id", "view_key"]

RUN_KEY = "ctxbudget_run"
"""State field: a per-invocation id, set only for runs without a ``thread_id`` (their views are keyed by it)."""

_RUN_PREFIX = "\x00run:"


def thread_id(runtime: Any) -> str | None:
    """The ``thread_id`` of a call's runtime (else of the config it runs in), as a str; ``None`` without one."""
    thread = getattr(getattr(runtime, "execution_info", None), "thread_id", None)
    if thread is None:
        config = getattr(runtime, "config", None) or ensure_config()
        thread = (config.get("configurable") or {}).get("thread_id")
    return None if thread is None else str(thread)


def view_key(state: Any, runtime: Any) -> str | None:
    """The key of the view a call belongs to: its thread, else its own invocation (never shared between runs).

    ``None`` when there is neither (a threadless call outside an agent run): such calls get an uncached view.
    """
    thread = thread_id(runtime)
    if thread is not None:
        return thread
    run = state.get(RUN_KEY) if isinstance(state, Mapping) else None
    return f"{_RUN_PREFIX}{run}" if isinstance(run, str) and run else None


def session_id(key: str | None) -> str:
    """The session id of the view under ``key`` (a fresh one for an uncached call)."""
    if key is None:
        return f"lc-call-{uuid.uuid4().hex}"
    if key.startswith(_RUN_PREFIX):
        return f"lc-run-{key.removeprefix(_RUN_PREFIX)}"
    return f"lc-{key}"


class ThreadSettings(Protocol):
    """What a view's session is built and configured from, read at every call: the middleware's settings."""

    @property
    def max_tokens(self) -> int | None:
        """The window; ``None``: the model's."""

    @property
    def counter(self) -> TokenCounter:
        """The token counter."""

    @property
    def policy(self) -> CompactionPolicy:
        """The compaction policy."""

    @property
    def summarizer(self) -> LangChainSummarizer | Summarizer | AsyncSummarizer | None:
        """The summarizer (a :class:`LangChainSummarizer` runs under each call's config)."""

    @property
    def compact_instructions(self) -> str | None:
        """Instructions added to every summary prompt."""

    @property
    def forward_events(self) -> frozenset[EventType]:
        """The event types dispatched as LangChain custom events."""

    @property
    def max_threads(self) -> int:
        """How many views are kept."""


class ModelCall(Protocol):
    """What a model call's view is found and brought up to date from: a ``ModelRequest``'s fields."""

    @property
    def model(self) -> BaseChatModel:
        """The chat model (its profile or name gives the window)."""

    @property
    def messages(self) -> Sequence[BaseMessage]:
        """The state's messages, without the agent's system message."""

    @property
    def system_message(self) -> SystemMessage | None:
        """The agent's system message."""

    @property
    def tools(self) -> Sequence[BaseTool | dict[str, Any]]:
        """The tools the request carries."""

    @property
    def state(self) -> Any:
        """The agent state."""

    @property
    def runtime(self) -> Any:
        """The graph runtime."""


class Views:
    """The views of the threads (and threadless runs in flight) a middleware serves, least recently used first.

    Args:
        settings: the middleware, whose settings every view's session is built and configured with.
        archives: the archive stores the states' references name.
    """

    def __init__(self, settings: ThreadSettings, archives: Archives) -> None:
        self.settings = settings
        self.archives = archives
        self._views: OrderedDict[str, ThreadView] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._views)

    def get(self, key: str) -> ThreadView | None:
        """The view cached under ``key`` (a ``thread_id``), if any."""
        return self._views.get(key)

    def lookup(self, state: Any, runtime: Any) -> ThreadView | None:
        """The cached view a call (its state and runtime) belongs to, if any."""
        key = view_key(state, runtime)
        return self._views.get(key) if key is not None else None

    def forget_run(self, state: Any, runtime: Any) -> None:
        """Drop the view of a run without a ``thread_id``: no later call can extend it."""
        key = view_key(state, runtime)
        if key is not None and key.startswith(_RUN_PREFIX):
            with self._lock:
                self._views.pop(key, None)

    def _new_session(self, model: BaseChatModel, session_id: str) -> ContextSession:
        settings = self.settings
        return ContextSession(
            max_tokens=resolve_window(model, settings.max_tokens),
            counter=settings.counter,
            policy=settings.policy,
            summarizer=settings.summarizer,
            session_id=session_id,
            compact_instructions=settings.compact_instructions,
        )

    def _cached(self, request: ModelCall) -> tuple[str, ThreadView | None, str | None]:
        """The view key of a call, its cached view (when its messages are where the state has them), and a new run id.

        The run id is for a call with neither a thread nor a run id: it is stamped into the state with the reply.
        """
        key = view_key(request.state, request.runtime)
        run = None
        if key is None:
            run = uuid.uuid4().hex
            key = f"{_RUN_PREFIX}{run}"
        view = self._views.get(key)
        if view is not None and not view.extends(request.messages):
            view = None
        return key, view, run

    def _new(self, request: ModelCall, key: str, archive: ThreadArchive) -> ThreadView:
        sid = session_id(key)
        session = restore_session(
            request.state, request.messages, lambda: self._new_session(request.model, sid), sid, archive
        )
        settings = self.settings
        # A converter of its own: its cache is keyed by message id, and another thread may use the same ids.
        view = ThreadView(session, MessageConverter(), EventForwarder(settings.forward_events), archive)
        with self._lock:
            self._views[key] = view
            while len(self._views) > settings.max_threads:
                self._views.popitem(last=False)
        return view

    def _ready(self, view: ThreadView, key: str, request: ModelCall) -> ThreadView:
        with self._lock:
            if key in self._views:
                self._views.move_to_end(key)
        view.arrive(request.messages[len(view.ids) :])
        self._configure(view, request)
        return view

    def open(self, request: ModelCall) -> tuple[ThreadView, str | None]:
        """The call's view, up to date with its messages, system prompt and tools, and the run id to stamp, if new."""
        key, view, run = self._cached(request)
        if view is None:
            archive, ref = self.archives.new(key, request.state, request.runtime)
            if ref is not None:
                archive.load(ref)
                archive.prefetch(live_handles(request.messages))
            view = self._new(request, key, archive)
        return self._ready(view, key, request), run

    async def aopen(self, request: ModelCall) -> tuple[ThreadView, str | None]:
        """Async :meth:`open` (the archive store's async twins)."""
        key, view, run = self._cached(request)
        if view is None:
            archive, ref = self.archives.new(key, request.state, request.runtime)
            if ref is not None:
                await archive.aload(ref)
                await archive.aprefetch(live_handles(request.messages))
            view = self._new(request, key, archive)
        return self._ready(view, key, request), run

    def _configure(self, view: ThreadView, request: ModelCall) -> None:
        session = view.session
        system = _system_text(view, request.system_message)
        if system != session.system_prompt:
            session.system_prompt = system
        key = tuple(map(id, request.tools))
        if key != view.tool_key:
            session.tools = tool_schemas(request.tools)
            view.tool_key = key
        summarizer = self.settings.summarizer
        if isinstance(summarizer, LangChainSummarizer):
            session.summarizer = summarizer.with_parent(ensure_config())


def _system_text(view: ThreadView, message: SystemMessage | None) -> str | None:
    """The text of the agent's system message, read again only when the message or its str content is another.

    (``.text`` builds the text from the content on every read; the agent hands over the same message each call.)
    """
    if message is None:
        return None
    content = message.content
    seen = view.system_seen
    if seen is not None and seen[0] is message and seen[1] is content:
        return seen[2]
    text = message.text
    view.system_seen = (message, content, text) if isinstance(content, str) else None
    return text
