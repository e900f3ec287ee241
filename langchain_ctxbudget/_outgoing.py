"""The messages a model call sends: the session's request as LangChain messages, the state's own objects reused.

The session's copy of the agent's system prompt is left out (the agent sends its own ``SystemMessage``); the
messages the session kept as they are in the state are the view's objects themselves, so only what compaction
changed (the summary, folded into the human message next to it, and replaced results) is converted. The
request-time tool edits (``exclude_tools``, ``clear_tool_inputs``, ``placeholder``) apply last. A call that sends the
state's messages as the state holds them (nothing compacted, bounded, given call ids or moved) hands on the request's
own list: no O(history) copy per call.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxbudget import BuiltRequest
from ctxbudget.messages import Message, MessageSequence
from ctxbudget.messages.tokens import TokenCounter
from langchain_core.messages import BaseMessage

from ._editing import ToolEdits
from ._summary import fold_summary, is_summary, sent_summary
from ._view import ThreadView
from .convert import MessageConverter

__all__ = ["outgoing_messages", "waiting_messages"]


def _unchanged(view: ThreadView, built: BuiltRequest) -> tuple[Message, ...] | None:
    """The messages ``built`` sends before the view's history, when it sends that history as it is, else ``None``.

    O(those messages): the request's history window is the list and length the view knows it mirrors (see
    :attr:`ThreadView.synced`), with nothing after it (no synthetic result or notice).
    """
    sent, synced = built.messages, view.synced
    if synced is None or not isinstance(sent, MessageSequence) or sent.tail:
        return None
    history, length = sent.history_window()
    if history is not synced[0] or length != synced[1] or length != len(view.msgs):
        return None
    return sent.prefix


def _as_held(view: ThreadView, prefix: Sequence[Message], converter: MessageConverter) -> list[BaseMessage]:
    """``prefix`` (the session's messages before its history) then the view's messages as they are.

    ``view.lc`` itself (not a copy) when nothing comes before them.
    """
    if view.session.system_prompt:  # the session's copy of the agent's system prompt (see _messages)
        prefix = prefix[1:]
    if not prefix and not view.system_at:
        return view.lc
    return _before_body(view, [sent_summary(m) or converter.to_langchain(m) for m in prefix])


def _before_body(view: ThreadView, head: list[BaseMessage]) -> list[BaseMessage]:
    """``head`` then the view's messages (a new list), the summary folded into the human message next to it."""
    if not any(is_summary(m) for m in head):
        return [*head, *view.body()]
    body = view.body()  # only the first few change
    return [*fold_summary([*head, *body[:1]]), *body[1:]]


def _messages(view: ThreadView, built: BuiltRequest, converter: MessageConverter) -> list[BaseMessage]:
    """The messages ``built`` sends; ``view.lc`` itself (not a copy) when it sends the view's messages as they are."""
    prefix_messages = _unchanged(view, built)
    if prefix_messages is not None:
        return _as_held(view, prefix_messages, converter)
    sent = built.messages
    if view.session.system_prompt:
        # The session's copy of the agent's system prompt, always first when it has one: the agent sends its own
        # SystemMessage, ours only measured it. Recognised by what we set, never by an id a caller could choose.
        sent = sent[1:]
    prefix = len(sent) - len(view.msgs)
    if prefix >= 0 and sent[prefix:] == tuple(view.msgs):  # identical objects: compared in C
        return _before_body(view, [sent_summary(m) or converter.to_langchain(m) for m in sent[:prefix]])
    return fold_summary([sent_summary(m) or converter.to_langchain(m) for m in sent])


def _handed(
    view: ThreadView, messages: list[BaseMessage], edits: ToolEdits, counter: TokenCounter, given: list[BaseMessage]
) -> list[BaseMessage]:
    """``messages`` as the model receives them: ``given`` when they are the state's, as it holds them; edits last."""
    if messages is view.lc:
        if view.verbatim and len(given) == len(messages):
            return given
        messages = list(messages)
    if edits.active and view.cleared:
        return edits.apply(messages, view.cleared, counter)
    return messages


def outgoing_messages(
    view: ThreadView,
    built: BuiltRequest,
    converter: MessageConverter,
    edits: ToolEdits,
    counter: TokenCounter,
    *,
    given: list[BaseMessage],
) -> list[BaseMessage]:
    """What the model receives for ``built``: absorbed into the view first when it compacted, edits applied last.

    ``given`` is the request's own list of the state's messages: returned itself when the request sends them as the
    state holds them (nothing compacted, bounded or moved: :attr:`ThreadView.verbatim`), so a call that changes
    nothing copies nothing; else the view's messages are copied, never handed on themselves.
    """
    if built.compaction is not None:
        view.absorb()
    return _handed(view, _messages(view, built, converter), edits, counter, given)


def waiting_messages(
    view: ThreadView, converter: MessageConverter, edits: ToolEdits, counter: TokenCounter, *, given: list[BaseMessage]
) -> list[BaseMessage]:
    """What the model receives for a request sent with messages waiting (:meth:`ThreadView.waiting_request`).

    The session's request with the waiting messages added, as :func:`outgoing_messages` sends it: the session's
    messages before its history, then the view's (which hold the waiting ones), ``given`` when they are the state's.
    """
    return _handed(view, _as_held(view, view.session.conversation.prefix(), converter), edits, counter, given)
