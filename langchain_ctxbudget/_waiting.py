"""Messages a view has counted but not yet added to its session: a model call that compacts nothing converts nothing.

Converting a LangChain message to a core :class:`~ctxbudget.Message` and adding it to the session cost, per model
call inside ``create_agent``, a quarter to a third again of what counting the new text does. So a view counts each
message that arrives from its LangChain form, with the counter's own formula (``count_fields``: the count
``count_message`` gives the converted message), and keeps it *waiting*: in the view (it is sent, and recognised by id
like the rest), not in the session. The session gets the waiting messages, with their counts (``add_counted``: not
counted again), when something needs them there (:meth:`~langchain_ctxbudget._view.ThreadView.settle`): a request at
the compaction threshold or past the hard stop, a message that cannot wait, a caller asking for the session.

A message waits only when adding it would change nothing in the session but the history and its total: a human,
AI or tool message (exactly those classes) with text content and no ctxbudget marks, whose id the session does not
know; an AI message's calls all have ids (the adapter persists the ids it gives); a tool result answers a call of
the waiting AI message before it, and is within the per-output limit (the session bounds a longer one as it
arrives); no human or AI message comes while a call is still unanswered (the session would send a synthetic result
for it). The first one waits only when the session mirrors the view and sends its history as it is (no open call,
no result left out). A message the converter would refuse never waits (text with a lone surrogate, a call without
a valid id or name, two calls with one id, arguments JSON cannot hold, which the counter refuses): it is converted
as it arrives, which raises the converter's own typed error, naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol, cast

from ctxbudget.errors import CtxBudgetError
from ctxbudget.messages import MessageRole
from ctxbudget.messages.tokens import TokenCounter
from ctxbudget.session import ContextSession
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from .convert import CTXBUDGET_KEY, ensure_id, lacks_tool_call_ids

__all__ = ["FieldsCounter", "Waiting", "fields_counter"]

_ROLES: dict[type, MessageRole] = {HumanMessage: "user", AIMessage: "assistant", ToolMessage: "tool"}
"""The classes a message may be of to wait (subclasses and chunks are converted as they arrive)."""
_SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone surrogate: text that holds one is not valid Unicode (converting it raises, naming the field)."""


class FieldsCounter(Protocol):
    """A counter that counts a message from its fields, as its ``count_message`` counts the message they make."""

    def count_fields(
        self,
        role: MessageRole,
        content: str,
        *,
        name: str | None = None,
        tool_calls: Sequence[tuple[str, str, dict[str, Any]]] = (),
        tool_call_id: str | None = None,
    ) -> int:
        """``count_message`` of the complete message with these fields and text ``content``."""
        ...


def fields_counter(counter: TokenCounter) -> FieldsCounter | None:
    """``counter`` when its ``count_fields`` counts as its ``count_message`` does, else ``None``.

    A subclass that overrides ``count_message`` and not ``count_fields`` counts otherwise than the formula it
    inherits: messages it counts are converted and counted by ``count_message``, as they arrive.
    """
    kind = type(counter)
    fields, message = _defined_in(kind, "count_fields"), _defined_in(kind, "count_message")
    if fields is None or message is None or not issubclass(fields, message):
        return None
    return cast("FieldsCounter", counter)


def _defined_in(kind: type, name: str) -> type | None:
    """The class of ``kind``'s MRO that defines ``name``, if any."""
    return next((owner for owner in kind.__mro__ if name in vars(owner)), None)


def _valid(text: str) -> bool:
    """Valid Unicode: ASCII from a flag, other text searched in place."""
    return text.isascii() or _SURROGATE.search(text) is None


class Waiting:
    """The messages counted on arrival and not yet in the session, in order, and what the session would make of them.

    Args:
        counter: the session's counter (its ``count_fields``).
        session: the session they wait for (its ids, policy and window are read, nothing is changed).
    """

    def __init__(self, counter: FieldsCounter, session: ContextSession) -> None:
        self.counter = counter
        self.session = session
        self.messages: list[BaseMessage] = []
        self.sizes: list[int] = []
        self.tokens = 0
        """The sum of :attr:`sizes`."""
        self.open: dict[str, None] = {}  # the latest assistant message's calls still unanswered, in call order
        """Calls of the latest waiting AI message no waiting result has answered yet."""
        self.users = False
        """Whether a human message waits (it can be the user's goal)."""
        self._ids: set[str] = set()

    def __len__(self) -> int:
        return len(self.messages)

    def take(self, message: BaseMessage) -> bool:
        """Count ``message`` and keep it waiting; ``False`` (nothing kept) when the session must see it as it arrives.

        A message the counter refuses (arguments JSON cannot hold) is left to the converter, which raises its error.
        """
        fields = self._fields(message)
        if fields is None:
            return False
        role, content, calls, call_id = fields
        try:
            size = self.counter.count_fields(role, content, name=message.name, tool_calls=calls, tool_call_id=call_id)
        except CtxBudgetError:
            return False
        if role == "tool":
            policy = self.session.policy
            if policy.bound_tool_outputs_on_add and size > policy.tool_output_limit(self.session.max_tokens):
                return False  # the session bounds it on arrival (and archives its original)
            self.open.pop(call_id or "", None)  # one removal per result: K parallel results cost K, not K squared
        elif role == "assistant":
            self.open = dict.fromkeys(call[0] for call in calls)
        else:
            self.users = True
        self.messages.append(message)
        self.sizes.append(size)
        self.tokens += size
        self._ids.add(cast("str", message.id))
        return True

    def clear(self) -> tuple[list[BaseMessage], list[int]]:
        """The waiting messages and their counts, in order; none waits after."""
        taken = self.messages, self.sizes
        self.messages, self.sizes, self.tokens, self.open, self.users = [], [], 0, {}, False
        self._ids = set()
        return taken

    def _fields(self, message: BaseMessage) -> tuple[MessageRole, str, list[_Call], str | None] | None:
        """Role, content, tool calls and answered call of ``message``, when it can wait (see the module doc)."""
        role = _ROLES.get(type(message))
        content = message.content
        if role is None or type(content) is not str or not _valid(content):
            return None
        if CTXBUDGET_KEY in message.response_metadata:  # bounded or cleared: the view keeps what that means
            return None
        message_id = message.id or ensure_id(message)
        name = message.name
        if (
            not _valid(message_id)
            or message_id in self._ids
            or self.session.conversation.knows(message_id)
            or (name is not None and (type(name) is not str or not _valid(name)))
        ):
            return None
        if isinstance(message, ToolMessage):
            answered = message.tool_call_id
            return (role, content, [], answered) if answered and answered in self.open else None
        if self.open or lacks_tool_call_ids(message):
            return None
        calls = _calls(message) if isinstance(message, AIMessage) and message.tool_calls else []
        return None if calls is None else (role, content, calls, None)


_Call = tuple[str, str, dict[str, Any]]
"""A tool call as a counter counts it: id, name, arguments."""


def _calls(message: AIMessage) -> list[_Call] | None:
    """Each call's id, name and arguments (as :func:`~.convert.from_langchain` converts them), or ``None``.

    ``None`` when a call's id or name is not valid text or its arguments not a dict, or two calls share an id:
    converting the message raises, naming the problem.
    """
    calls: list[_Call] = []
    for call in message.tool_calls:
        call_id, name, args = call.get("id"), call["name"], call["args"]
        if not (isinstance(call_id, str) and _valid(call_id) and isinstance(name, str) and _valid(name)):
            return None
        if type(args) is not dict:
            return None
        calls.append((call_id, name, args))
    return calls if len({call[0] for call in calls}) == len(calls) else None
