"""``ContextEditingMiddleware``'s knobs on our middleware: ``exclude_tools``, ``clear_tool_inputs``, ``placeholder``.

Same meaning as on LangChain's ``ClearToolUsesEdit``:

* ``exclude_tools``: results of these tools (by the result's ``name``, else its call's) are never cleared. Ours are
  added to the session pinned: compaction never clears or shortens them, and when their turn is summarized they
  stay verbatim after the summary (as the session keeps any pinned message, without orphaning a tool pair).
* ``clear_tool_inputs``: a call whose result was cleared is sent with empty arguments (``args={}``) and
  ``response_metadata["context_editing"]["cleared_tool_inputs"]`` naming it, as LangChain marks it.
* ``placeholder``: the text a cleared result is sent as, followed by the line naming where its full text is archived
  (so ``read_archived_output`` still finds it). It replaces our marker only when it is no longer, by our counter,
  than the marker the budget was computed with; otherwise the marker is sent.

Cleared results are marked ``response_metadata["context_editing"] = {"cleared": True, ...}`` as LangChain marks
them. These edits are applied to the request only (as ``ContextEditingMiddleware`` does); the state keeps our marker.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxbudget.compaction import ARCHIVE_META
from ctxbudget.compaction.tiers import CLEARED_META
from ctxbudget.messages import Message
from ctxbudget.messages.tokens import TokenCounter
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

__all__ = ["ClearedResult", "ToolEdits", "cleared_results"]

_EDIT_KEY = "context_editing"
_MAX_TEXTS = 65_536


@dataclass(frozen=True, slots=True)
class ClearedResult:
    """A tool result compaction cleared: the call it answers and the handle of its archived original."""

    call_id: str
    handle: str | None
    marker: str


def cleared_results(history: Sequence[Message]) -> dict[str, ClearedResult]:
    """Message id -> what was cleared, for every cleared tool result in ``history``."""
    return {
        m.id: ClearedResult(m.tool_call_id or "", m.metadata.get(ARCHIVE_META), m.text)
        for m in history
        if m.role == "tool" and m.metadata.get(CLEARED_META)
    }


@dataclass
class ToolEdits:
    """The knobs, and the sent form of each cleared result (computed once per result)."""

    exclude_tools: frozenset[str] = frozenset()
    clear_tool_inputs: bool = False
    placeholder: str | None = None
    _texts: dict[str, str] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        """Whether any edit applies to requests (``exclude_tools`` works when messages are added instead)."""
        return self.clear_tool_inputs or self.placeholder is not None

    def excluded(self, name: str | None) -> bool:
        """Whether results of the tool ``name`` are never cleared."""
        return name is not None and name in self.exclude_tools

    def _text(self, cleared: ClearedResult, counter: TokenCounter) -> str:
        key = f"{cleared.handle}\x00{cleared.marker}"
        text = self._texts.get(key)
        if text is None:
            if len(self._texts) >= _MAX_TEXTS:
                self._texts.clear()
            text = cleared.marker
            if self.placeholder is not None:
                where = f"\n[full text archived at {cleared.handle}]" if cleared.handle else ""
                candidate = self.placeholder + where
                if counter.count_text(candidate) <= counter.count_text(cleared.marker):
                    text = candidate
            self._texts[key] = text
        return text

    def apply(
        self, messages: list[BaseMessage], cleared: Mapping[str, ClearedResult], counter: TokenCounter
    ) -> list[BaseMessage]:
        """The request with cleared results (and, with ``clear_tool_inputs``, their calls' arguments) edited."""
        if not cleared:
            return messages
        calls = {c.call_id for c in cleared.values()} if self.clear_tool_inputs else set()
        out: list[BaseMessage] = []
        for message in messages:
            hit = cleared.get(message.id or "") if isinstance(message, ToolMessage) else None
            if hit is not None:
                marks = {**message.response_metadata, _EDIT_KEY: {"cleared": True, "strategy": "clear_tool_uses"}}
                text = self._text(hit, counter)
                out.append(message.model_copy(update={"content": text, "response_metadata": marks}))
            elif calls and isinstance(message, AIMessage) and any(c.get("id") in calls for c in message.tool_calls):
                out.append(_without_inputs(message, calls))
            else:
                out.append(message)
        return out


def _without_inputs(message: AIMessage, calls: set[str]) -> AIMessage:
    tool_calls: list[Any] = []
    ids: list[str] = []
    for call in message.tool_calls:
        cleared = call.get("id") in calls
        if cleared:
            ids.append(str(call.get("id")))
        tool_calls.append({**call, "args": {}} if cleared else call)
    entry = dict(message.response_metadata.get(_EDIT_KEY) or {})
    entry["cleared_tool_inputs"] = sorted(set(entry.get("cleared_tool_inputs", ())) | set(ids))
    metadata = {**message.response_metadata, _EDIT_KEY: entry}
    return message.model_copy(update={"tool_calls": tool_calls, "response_metadata": metadata})
