"""The framework-neutral message model every other module speaks.

A :class:`Message` is immutable: compaction never edits a message in place, it replaces it with a new one and
archives the original, so counts cached by content stay valid and nothing a user gave us is lost.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from typing_extensions import Self

from ..errors import InvalidMessageError
from ._foreign import foreign_problem
from ._validation import JsonValueError, check_json, check_utf8, short_repr, subject_id, to_usage_error

__all__ = [
    "REASONING_BLOCKS",
    "ContentBlock",
    "Message",
    "MessageRole",
    "MessageSequence",
    "MessageState",
    "ToolCall",
    "ToolSchema",
    "new_message_id",
]

MessageRole = Literal["system", "user", "assistant", "tool"]
"""The four roles every provider understands."""

MessageState = Literal["complete", "interrupted"]
"""``interrupted`` marks a reply the user aborted; the next request tells the model it was cut off."""


def new_message_id(prefix: str = "msg_") -> str:
    """Return a fresh, unique id: ``prefix`` + a random 128-bit number in 39 decimal digits (``msg_`` by default).

    Digits, not hex: archive handles name messages by id, and the model is sent them (a cleared output's marker, a
    paste's bullet). A tokenizer reads digits in fixed groups, so every id takes as many tokens; a hex id took 20 to
    35, and where a compaction cut moved with them from one run to the next.
    """
    return f"{prefix}{uuid.uuid4().int:039d}"


def _check_keys(field: str, value: Any) -> Any:
    """Before validation: objects given as dicts must have string keys (pydantic would raise a raw TypeError)."""
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            if isinstance(item, Mapping) and not all(isinstance(key, str) for key in item):
                keys = [key for key in item if not isinstance(key, str)]
                raise ValueError(f"item {index} has a non-string key {short_repr(keys[0])}; keys must be field names")
    return value


def _refuse_foreign(content: Any) -> None:
    """A LangChain / LlamaIndex message given as content (or as one of its blocks) names the converter."""
    items = content if isinstance(content, (list, tuple)) else (content,)
    for index, item in enumerate(items):
        where = f"item {index}: " if item is not content else ""
        problem = foreign_problem(item, "a str or content blocks" if not where else "a content block")
        if problem is not None:
            raise ValueError(f"{where}{problem}")


class _Checked(BaseModel):
    """Construction fails with :class:`InvalidMessageError` naming the field, never a raw ``ValidationError``.

    Nested inside another model (a snapshot, a request), pydantic reports the error as that model's validation
    error, located at the nested field, and the outer model turns it into its own typed error.
    """

    _kind: ClassVar[str] = "message"
    """Names the model in error messages."""

    if not TYPE_CHECKING:  # keep the pydantic plugin's typed signature for static checking

        def __init__(self, /, **data: Any) -> None:
            try:
                super().__init__(**data)
            except ValidationError as exc:
                error = to_usage_error(exc, InvalidMessageError, subject_id(data, type(self)._kind))
                if error.field is None:  # a model-level check: its message starts with the field name
                    head = exc.errors()[0]["msg"].removeprefix("Value error, ").split(":", 1)[0]
                    error.field = head if head.isidentifier() else None
                raise error from None

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        """Pydantic's ``model_validate``; a mapping with a non-string key is an :class:`InvalidMessageError` too.

        (Pydantic hands the mapping to ``__init__`` as keyword arguments, which Python refuses with a raw
        ``TypeError`` before any validation runs.)
        """
        problem = foreign_problem(obj, f"a mapping of {cls._kind} fields")
        if problem is not None:  # a LangChain / LlamaIndex message: point at the converter, not at pydantic
            raise InvalidMessageError(f"{cls._kind} (no id): {problem}")
        if isinstance(obj, Mapping) and not all(isinstance(key, str) for key in obj):
            key = next(key for key in obj if not isinstance(key, str))
            raise InvalidMessageError(
                f"{cls._kind} (no id): keys must be field names (strings), got {type(key).__name__} {short_repr(key)}"
            )
        return super().model_validate(obj, *args, **kwargs)


_ARGS_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=False)
"""One encoder for every call's arguments (``json.dumps`` with options builds a new one per call)."""


class ToolCall(_Checked):
    """One tool call requested by an assistant message."""

    _kind: ClassVar[str] = "tool call"
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, description="Provider-assigned call id; the tool result repeats it.")
    name: str = Field(min_length=1, description="The tool's name.")
    args: dict[str, Any] = Field(default_factory=dict, description="Parsed JSON arguments.")

    @model_validator(mode="after")
    def _check_args_text(self) -> ToolCall:
        check_json("args", self.args)
        check_utf8("name", self.name)
        check_utf8("id", self.id)
        return self

    def args_json(self) -> str:
        """Return the arguments as compact JSON, the form providers bill for."""
        return _ARGS_JSON.encode(self.args)


REASONING_BLOCKS = frozenset({"thinking", "redacted_thinking", "reasoning"})
"""Content block types that hold a model's reasoning: only the provider that produced them accepts them back, and only
the newest assistant message's are needed again (compaction clears the older ones first)."""


class ContentBlock(_Checked):
    """One block of multi-part content: text, or something opaque (image, audio) kept as data."""

    _kind: ClassVar[str] = "content block"
    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str = Field(min_length=1, description="'text' or a provider block type such as 'image_url'.")
    text: str | None = Field(default=None, description="The text of a 'text' block.")
    data: dict[str, Any] = Field(default_factory=dict, description="Everything else the block carries.")

    @model_validator(mode="after")
    def _check_data(self) -> ContentBlock:
        check_json("data", self.data)
        return self


class Message(_Checked):
    """A chat message: role, content, optional tool calls or tool result id, state and metadata."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: MessageRole
    content: str | tuple[ContentBlock, ...] = ""
    name: str | None = Field(default=None, description="Optional author name (OpenAI 'name').")
    tool_calls: tuple[ToolCall, ...] = Field(default=(), description="Calls requested by an assistant message.")
    tool_call_id: str | None = Field(default=None, description="For a tool result: the call it answers.")
    state: MessageState = "complete"
    metadata: dict[str, Any] = Field(default_factory=dict)
    id: str = Field(default_factory=new_message_id, min_length=1)

    @field_validator("content", mode="before")
    @classmethod
    def _blocks_to_tuple(cls, value: Any) -> Any:
        if type(value) is str:  # the common case: text is never a framework message, and has no keys
            return value
        _refuse_foreign(value)
        if isinstance(value, list):
            return tuple(_check_keys("content", value))
        return _check_keys("content", value)

    @field_validator("tool_calls", mode="before")
    @classmethod
    def _calls_with_string_keys(cls, value: Any) -> Any:
        return _check_keys("tool_calls", value) if value else value

    @model_validator(mode="after")
    def _check_tool_fields(self) -> Message:
        if self.tool_calls and self.role != "assistant":
            raise ValueError(f"tool_calls: only assistant messages carry tool calls, this one is {self.role!r}")
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("tool_call_id: a tool message must name the call it answers")
        if self.role != "tool" and self.tool_call_id is not None:
            raise ValueError(f"tool_call_id: only tool messages carry one, this one is {self.role!r}")
        if len(self.tool_calls) > 1:
            ids = [call.id for call in self.tool_calls]
            if len(ids) != len(set(ids)):
                raise ValueError(f"tool_calls: duplicate call ids {sorted(ids)}")
        content, name, call_id = self.content, self.name, self.tool_call_id
        ascii_only = type(content) is str and content.isascii() and self.id.isascii()  # flags: O(1) each
        if not (ascii_only and (name is None or name.isascii()) and (call_id is None or call_id.isascii())):
            check_utf8("content", self.text)
            if name is not None:
                check_utf8("name", name)
            if call_id is not None:
                check_utf8("tool_call_id", call_id)
            check_utf8("id", self.id)
        if self.metadata:
            check_json("metadata", self.metadata)
        return self

    @property
    def text(self) -> str:
        """All text in the message: the string content, or the text blocks joined by newlines."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(block.text for block in self.content if block.text is not None)

    def with_content(self, content: str, **metadata: Any) -> Message:
        """Return a copy with new text content (same id, role, tool fields) and extra metadata.

        Only what changes is checked (the copy skips a full validation: compaction calls it on every bounded
        output).

        Raises:
            InvalidMessageError: ``content`` is not a ``str`` or not valid Unicode, or ``metadata`` holds what JSON
                or a snapshot cannot (see :func:`~ctxbudget.messages._validation.check_json`).
        """
        if type(content) is not str:
            problem = foreign_problem(content, "a str") or f"must be a str, got {type(content).__name__}"
            raise InvalidMessageError(f"content: {problem}", field="content")
        merged = {**self.metadata, **metadata}
        try:
            check_utf8("content", content)
            if metadata:
                check_json("metadata", merged)
        except JsonValueError as exc:
            raise InvalidMessageError(str(exc), field=str(exc).split(":", 1)[0]) from None
        return self.model_copy(update={"content": content, "metadata": merged})


class ToolSchema(_Checked):
    """A tool exposed to the model: name, description and JSON-schema parameters."""

    _kind: ClassVar[str] = "tool schema"
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="Kept, never sent as is: e.g. what a provider's tool spec carries beyond these fields "
        "(OpenAI 'strict', Anthropic 'cache_control'), so ctxbudget.providers gives the spec back exactly.",
    )

    @model_validator(mode="after")
    def _check_parameters(self) -> ToolSchema:
        check_json("parameters", self.parameters)
        properties = self.parameters.get("properties")
        if properties is not None and not isinstance(properties, dict):  # a JSON schema's properties: an object
            got = f"{type(properties).__name__} {short_repr(properties)}"
            raise ValueError(f"parameters: 'properties' must be an object of property schemas, got {got}")
        if self.metadata:
            check_json("metadata", self.metadata)
        return self

    @classmethod
    def from_openai(cls, spec: Mapping[str, Any]) -> ToolSchema:
        """Build from an OpenAI tool spec (``{"type": "function", "function": {...}}``) or a bare function.

        Raises:
            InvalidMessageError: ``spec`` is not such a mapping, has no ``name`` (a str), its ``description`` is not a
                str, or its ``parameters`` is not a mapping.
        """
        function = spec.get("function", spec) if isinstance(spec, Mapping) else None
        if not isinstance(function, Mapping):
            what = type(function if isinstance(spec, Mapping) else spec).__name__
            raise InvalidMessageError(f"tool spec: expected an OpenAI tool spec (a mapping), got {what}", field="spec")
        if function.get("name") is None:
            raise InvalidMessageError("tool spec: 'name' is missing", field="name")
        for key in ("name", "description"):
            value = function.get(key)
            if value is not None and not isinstance(value, str):
                got = f"{type(value).__name__} {short_repr(value)}"
                raise InvalidMessageError(f"tool spec: {key!r} must be a str, got {got}", field=key)
        parameters = function.get("parameters") or {}
        if not isinstance(parameters, Mapping):
            raise InvalidMessageError(
                f"tool spec: 'parameters' must be a JSON Schema object, got {type(parameters).__name__}",
                field="parameters",
            )
        return cls(name=function["name"], description=function.get("description") or "", parameters=dict(parameters))


class MessageSequence(Sequence[Message]):
    """A read-only, zero-copy view of a request's messages: a prefix, the first ``length`` of a history list, a tail.

    A session only ever appends to its live history list or swaps in a new list, so the first ``length`` entries a
    view refers to never change: the view is as immutable as a tuple without the O(history) copy per request. The
    tail holds the few messages a request adds after them (synthetic results for unanswered calls, the
    interrupted-reply notice and what follows it). Slicing returns a tuple; equality compares element-wise with any
    sequence.
    """

    __slots__ = ("_history", "_length", "_prefix", "_tail")

    def __init__(
        self,
        prefix: Sequence[Message],
        history: Sequence[Message],
        length: int | None = None,
        *,
        tail: Sequence[Message] = (),
    ) -> None:
        self._prefix = tuple(prefix)
        self._history = history
        self._length = len(history) if length is None else length
        self._tail = tuple(tail)

    def __len__(self) -> int:
        return len(self._prefix) + self._length + len(self._tail)

    @property
    def prefix(self) -> tuple[Message, ...]:
        """The messages before the history (system, summary, pinned, context)."""
        return self._prefix

    @property
    def tail(self) -> tuple[Message, ...]:
        """The messages after the history window (empty unless the request repairs or annotates its end)."""
        return self._tail

    def history_window(self) -> tuple[Sequence[Message], int]:
        """The history sequence this view reads and how many of its entries it covers (``tail`` follows them).

        Read-only access for adapters that convert incrementally: while a later view reads the *same* history
        object, its first entries are unchanged, so conversions of them can be reused.
        """
        return self._history, self._length

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...

    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            prefix = len(self._prefix)
            if step == 1 and start >= prefix and stop <= prefix + self._length:  # one C-level list slice
                return tuple(self._history[start - prefix : max(start, stop) - prefix])
            return tuple(self)[index]
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError(f"message index {index} out of range for {size} messages")
        prefix = len(self._prefix)
        if index < prefix:
            return self._prefix[index]
        if index < prefix + self._length:
            return self._history[index - prefix]
        return self._tail[index - prefix - self._length]

    def __iter__(self) -> Iterator[Message]:
        # chain/islice iterate in C: no Python frame per message, which matters at 10k messages per request.
        return itertools.chain(self._prefix, itertools.islice(self._history, self._length), self._tail)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"MessageSequence({len(self)} messages)"
