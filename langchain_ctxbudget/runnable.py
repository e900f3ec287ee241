"""``ContextBudgetRunnable``: an LCEL step that fits messages to a budget, for ``prompt | budget | model``.

Input: a ``PromptValue``, a list of messages, or anything ``convert_to_messages`` accepts. Output: the list of
messages to send, always a valid provider sequence within the budget by our counter.

* Stateless (default): oversized tool outputs are cut to head + tail, tool pairs are repaired, then the oldest
  messages are dropped (never past the latest user message, never separating a tool call from its result); leading
  system messages are always kept, and the rest starts on a human message, as ``trim_messages(start_on="human")``
  (a list without one raises :class:`~langchain_ctxbudget.errors.NoHumanMessageError`). The caller still holds
  everything that was dropped. The previous call's per-message results are kept, so a list that extends the
  previous call's list costs O(new messages), and messages are tokenized only when the fit needs their counts (while
  the counter's upper bounds show the request fits, it does not; see ``_incremental``); the output is the same as
  ``fit_messages``, which counts everything on every call.
* Bound to a :class:`~ctxbudget.ContextSession`: every message the runnable has not seen before is added to the
  session (prompt templates re-create messages each call, so id-less messages get ids derived from their position
  and content), and the session's request is returned: summary + live history, compacted when over threshold,
  archived originals kept in ``session.archive``.

Past the hard stop it raises :class:`~langchain_ctxbudget.errors.LangChainContextOverflowError`. ``transform``
collects the (non-streaming) input and emits one output, so the model after it streams as usual.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar, cast, overload

from ctxbudget import BuiltRequest, ContextSession
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.context.evidence import excerpt
from ctxbudget.errors import ContextOverflowError, InvalidMessageError
from ctxbudget.messages import Message, ToolSchema
from ctxbudget.messages.tokens import TiktokenCounter, TokenCounter
from ctxbudget.messages.toolpairs import repair_tool_pairs, safe_cut_points
from langchain_core.callbacks import BaseCallbackManager
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import BaseMessage, convert_to_messages
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config, get_callback_manager_for_config

from ._checks import check_common, check_instance, check_positive_int, check_tools, check_window
from ._incremental import StatelessCache, no_human, overflow, sent_form, stable_id
from ._summary import fold_summary, sent_summary
from ._window import resolve_window
from .convert import MessageConverter, from_langchain, to_langchain, tool_schemas
from .errors import LangChainContextOverflowError
from .events import EventForwarder

__all__ = ["ContextBudgetRunnable", "fit_messages"]


_R = TypeVar("_R")


class _OneArgument(Generic[_R]):
    """``fit`` as a callable whose signature is fixed, for LangChain's ``_call_with_config``.

    It reads the signature of the function it runs on every invoke (does it take ``config``? ``run_manager``?),
    which cost more than a cached fit of 10k messages; a class-level ``__signature__`` makes that a lookup.
    """

    __signature__ = inspect.Signature([inspect.Parameter("value", inspect.Parameter.POSITIONAL_ONLY)])

    def __init__(self, fit: Callable[[LanguageModelInput], _R]) -> None:
        self._fit = fit

    def __call__(self, value: LanguageModelInput) -> _R:
        return self._fit(value)


def _as_messages(value: LanguageModelInput | Sequence[Any]) -> list[BaseMessage]:
    if isinstance(value, PromptValue):
        return value.to_messages()
    if isinstance(value, str):
        return convert_to_messages([value])
    return convert_to_messages(value)


def _stable_ids(messages: list[BaseMessage]) -> list[BaseMessage]:
    """Give id-less messages an id from their position and content (on a copy), so re-rendered prompts match."""
    return [m if m.id else m.model_copy(update={"id": stable_id(i, m)}) for i, m in enumerate(messages)]


@overload
def fit_messages(
    messages: Sequence[BaseMessage],
    *,
    max_tokens: int,
    counter: TokenCounter | None = None,
    policy: CompactionPolicy | None = None,
    tools: Sequence[Any] = (),
) -> list[BaseMessage]: ...


@overload
def fit_messages(
    messages: Sequence[Message],
    *,
    max_tokens: int,
    counter: TokenCounter | None = None,
    policy: CompactionPolicy | None = None,
    tools: Sequence[Any] = (),
) -> list[Message]: ...


def fit_messages(
    messages: Sequence[BaseMessage] | Sequence[Message],
    *,
    max_tokens: int,
    counter: TokenCounter | None = None,
    policy: CompactionPolicy | None = None,
    tools: Sequence[Any] = (),
) -> list[BaseMessage] | list[Message]:
    """Stateless fit: bound tool outputs, repair tool pairs, drop the oldest safe prefix until within ``max_tokens``.

    Leading system messages are always kept, nothing past the latest user message is dropped, a tool call is never
    separated from its result, and the rest starts on a human message (as ``trim_messages(start_on="human")``). The
    caller still holds everything that was dropped.

    Args:
        messages: LangChain messages (the result is LangChain messages; none given is modified, and one kept
            unchanged comes back as the very object given) or ctxbudget messages (the result is ctxbudget
            messages); not a mix.
        max_tokens: the budget for the whole request, tools included.
        counter: token counter (default exact ``o200k_base``).
        policy: its tool-output limit bounds oversized tool results (default :class:`~ctxbudget.CompactionPolicy`).
        tools: tools the model will see (``ToolSchema``, ``BaseTool``, functions or OpenAI dicts); counted.

    Raises:
        InvalidMessageError: ``messages`` is not a sequence of messages of one kind (the index is named).
        InvalidPolicyError: ``max_tokens``, ``counter``, ``policy`` or ``tools`` is of the wrong kind.
        LangChainContextOverflowError: the system messages plus the tail from the latest user message do not fit.
        NoHumanMessageError: there are messages after the leading system messages, and none is a human message.
    """
    check_positive_int("max_tokens", max_tokens)
    check_common(counter=counter, policy=policy)
    schemas: tuple[ToolSchema, ...] = check_tools(tools, _any_tool_schemas)
    listed, given_langchain = _fit_input(messages)
    fit_args = (max_tokens, counter or TiktokenCounter(), policy or CompactionPolicy(), schemas)
    if not given_langchain:
        return _fit_core(cast("list[Message]", listed), *fit_args)
    given = cast("list[BaseMessage]", listed)
    converted = [from_langchain(m) for m in _stable_ids(given)]
    forms = {id(m): sent_form(lc, m) for lc, m in zip(given, converted, strict=True)}
    by_id = {m.id: forms[id(m)] for m in converted}
    fitted = _fit_core(converted, *fit_args)
    return [form if (form := forms.get(id(m))) is not None else to_langchain(m, by_id.get(m.id)) for m in fitted]


def _any_tool_schemas(tools: Sequence[Any]) -> tuple[ToolSchema, ...]:
    return tuple(tool if isinstance(tool, ToolSchema) else tool_schemas([tool])[0] for tool in tools)


def _fit_input(messages: object) -> tuple[list[BaseMessage] | list[Message], bool]:
    """The messages as a list, and whether they are LangChain's; a mix or a non-message names the index."""
    if isinstance(messages, (str, bytes, BaseMessage, Message)) or not isinstance(messages, Iterable):
        raise InvalidMessageError(
            f"messages: expected a sequence of LangChain or ctxbudget messages, got {type(messages).__name__}",
            field="messages",
        )
    listed = list(messages)
    for index, message in enumerate(listed):
        if not isinstance(message, (BaseMessage, Message)):
            expected = "a LangChain BaseMessage or a ctxbudget.Message"
            raise InvalidMessageError(
                f"messages[{index}]: expected {expected}, got {type(message).__name__}", field=f"messages[{index}]"
            )
        if isinstance(message, BaseMessage) != isinstance(listed[0], BaseMessage):
            kinds = {True: "a LangChain message", False: "a ctxbudget.Message"}
            first, this = kinds[isinstance(listed[0], BaseMessage)], kinds[isinstance(message, BaseMessage)]
            raise InvalidMessageError(
                f"messages[{index}]: {this} after {first} at index 0; pass one kind (convert with from_langchain)",
                field=f"messages[{index}]",
            )
    return listed, bool(listed) and isinstance(listed[0], BaseMessage)


def _fit_core(
    messages: Sequence[Message],
    budget: int,
    counter: TokenCounter,
    policy: CompactionPolicy,
    tools: Sequence[ToolSchema],
) -> list[Message]:
    head = 0
    while head < len(messages) and messages[head].role == "system":
        head += 1
    system, rest = list(messages[:head]), list(messages[head:])
    limit = policy.tool_output_limit(budget)
    rest = [
        m.with_content(excerpt(m.text, max_tokens=limit, counter=counter))
        if m.role == "tool" and counter.count_message(m) > limit
        else m
        for m in rest
    ]
    rest = repair_tool_pairs(rest)
    if rest and not any(m.role == "user" for m in rest):
        raise no_human(messages, head)
    sizes = [counter.count_message(m) for m in rest]
    total = sum(counter.count_message(m) for m in system) + counter.count_tools(tools) + counter.request_overhead
    used = total + sum(sizes)
    last_user = max((i for i, m in enumerate(rest) if m.role == "user"), default=len(rest))
    safe = safe_cut_points(rest)
    cut = 0
    while used > budget and cut < last_user:
        used -= sizes[cut]
        cut += 1
        while cut < last_user and not safe[cut]:
            used -= sizes[cut]
            cut += 1
    if used > budget:
        raise overflow(used, budget, budget)
    while cut < len(rest) and rest[cut].role != "user":  # start on a human turn, as trim_messages(start_on="human")
        cut += 1
    return system + repair_tool_pairs(rest[cut:])


class ContextBudgetRunnable(Runnable[LanguageModelInput, list[BaseMessage]]):
    """Fit messages to a token budget inside an LCEL chain.

    Args:
        max_tokens: the budget; default: ``model.profile["max_input_tokens"]`` (or the session's window).
        model: a chat model whose profile gives the window.
        counter: token counter (default exact ``o200k_base``; the session's when bound).
        policy: tool-output limit (stateless) / compaction policy (new sessions).
        tools: tool schemas the model will see (``BaseTool``, functions or dicts); counted in the budget.
        session: bind to this session instead of fitting statelessly.
    """

    def __init__(
        self,
        *,
        max_tokens: int | None = None,
        model: Any = None,
        counter: TokenCounter | None = None,
        policy: CompactionPolicy | None = None,
        tools: Sequence[Any] = (),
        session: ContextSession | None = None,
    ) -> None:
        check_window("max_tokens", max_tokens)
        check_common(counter=counter, policy=policy)
        check_instance("session", session, ContextSession, optional=True)
        schemas = check_tools(tools, tool_schemas)
        self.session = session
        window = session.max_tokens if session is not None and max_tokens is None and model is None else None
        self.max_tokens = window or resolve_window(model, max_tokens)
        self.counter: TokenCounter = counter or (session.counter if session else TiktokenCounter())
        self.policy = policy or (session.policy if session else CompactionPolicy())
        self.tools = schemas
        self.converter = MessageConverter()
        self.forwarder = EventForwarder()
        self._seen: set[str] = set()
        self._cache = StatelessCache(budget=self.max_tokens, counter=self.counter, policy=self.policy, tools=schemas)
        self._invoked = _OneArgument(self._fit)
        self._ainvoked: _OneArgument[Awaitable[list[BaseMessage]]] = _OneArgument(self._afit)
        if session is not None:
            self.forwarder.attach(session)
            if self.tools:
                session.tools = self.tools

    # -- fitting -----------------------------------------------------------------------------------------------
    def _stateless(self, value: LanguageModelInput) -> list[BaseMessage]:
        """Fit through the cache of the previous call's results: O(new messages) for a list that extends it."""
        return self._cache.fit(value)

    def _feed(self, session: ContextSession, messages: list[BaseMessage]) -> list[BaseMessage]:
        """Add unseen messages to the session; return the leading system messages (passed through)."""
        stamped = _stable_ids(messages)
        head = 0
        while head < len(stamped) and stamped[head].type == "system":
            head += 1
        system_text = "\n\n".join(m.text for m in stamped[:head]) or None
        if system_text != session.system_prompt:
            session.system_prompt = system_text
        new = [m for m in stamped[head:] if m.id not in self._seen]
        self._seen.update(m.id for m in new if m.id)
        session.add(*self.converter.to_messages(new))
        return stamped[:head]

    def _output(self, system: list[BaseMessage], built: BuiltRequest) -> list[BaseMessage]:
        sent = built.messages
        if self.session is not None and self.session.system_prompt:
            # The session's copy of the leading system messages, always first when it has one: they are passed
            # through as given instead. Recognised by what we set, never by an id a caller could choose.
            sent = sent[1:]
        return system + fold_summary([sent_summary(m) or self.converter.to_langchain(m) for m in sent])

    def _fit(self, value: LanguageModelInput) -> list[BaseMessage]:
        if self.session is None:
            return self._stateless(value)
        messages = _as_messages(value)
        system = self._feed(self.session, messages)
        try:
            built = self.session.build_request()
        except ContextOverflowError as exc:
            raise LangChainContextOverflowError.from_core(exc) from exc
        finally:
            self.forwarder.flush()
        return self._output(system, built)

    async def _afit(self, value: LanguageModelInput) -> list[BaseMessage]:
        if self.session is None:
            return self._stateless(value)
        messages = _as_messages(value)
        system = self._feed(self.session, messages)
        try:
            built = await self.session.abuild_request()
        except ContextOverflowError as exc:
            raise LangChainContextOverflowError.from_core(exc) from exc
        finally:
            await self.forwarder.aflush()
        return self._output(system, built)

    # -- Runnable ----------------------------------------------------------------------------------------------
    def invoke(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[BaseMessage]:
        """Fit ``input`` to the budget and return the messages to send.

        A run is reported to the callbacks LangChain configures for ``config`` (handlers passed in it, tracing,
        ``collect_runs``); stateless, with none configured, the fit is called directly (see :func:`_unobserved`).
        """
        if self.session is None and _unobserved(config):
            return self._cache.fit(input)
        return self._call_with_config(self._invoked, input, config, run_type="chain")

    async def ainvoke(
        self,
        input: LanguageModelInput,
        config: RunnableConfig | None = None,
        **kwargs: Any,
    ) -> list[BaseMessage]:
        """Async :meth:`invoke`."""
        if self.session is None and _unobserved(config):
            return self._cache.fit(input)
        return await self._acall_with_config(self._ainvoked, input, config, run_type="chain")

    def transform(
        self,
        input: Iterator[LanguageModelInput],
        config: RunnableConfig | None = None,
        **kwargs: Any,
    ) -> Iterator[list[BaseMessage]]:
        """Collect streamed input (message lists are concatenated), then emit the fitted messages once."""
        yield self.invoke(_collect(list(input)), config)

    async def atransform(
        self,
        input: AsyncIterator[LanguageModelInput],
        config: RunnableConfig | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[list[BaseMessage]]:
        """Async :meth:`transform`."""
        chunks = [chunk async for chunk in input]
        yield await self.ainvoke(_collect(chunks), config)


def _unobserved(config: RunnableConfig | None) -> bool:
    """Whether LangChain would configure no callback handler for a run under ``config``.

    The answer is LangChain's own: the manager it builds from the config, the context (a parent run's callbacks,
    ``tracing_v2_enabled``, ``collect_runs`` and other configure hooks) and the environment (LangSmith tracing).
    Handlers passed in the config answer it at once, so a traced call does not build that manager twice.
    With no handler, a run reports to no one, and the stateless fit calls no runnable a context could reach, so
    calling it directly is the same as running it under ``_call_with_config`` without its fixed cost (a run id, a
    child config and a copied context per call: 0.3-0.4 ms with cold caches, a fifth of a call at 10k messages).
    """
    given = (config or {}).get("callbacks")
    if isinstance(given, list) and given:  # handlers passed in the config: observed, no manager built to ask
        return False
    if isinstance(given, BaseCallbackManager):
        # A step of a chain: its parent run built this manager already (environment, context hooks and all), so its
        # handlers are LangChain's answer; asking again would only repeat the parent's tracing checks.
        return not given.handlers and not given.inheritable_handlers
    manager = get_callback_manager_for_config(ensure_config(config))
    return not manager.handlers and not manager.inheritable_handlers


def _collect(chunks: list[LanguageModelInput]) -> LanguageModelInput:
    if len(chunks) == 1:
        return chunks[0]
    messages: list[BaseMessage] = []
    for chunk in chunks:
        messages.extend(_as_messages(chunk))
    return messages
