"""A tool output over the per-output limit, bounded to head + tail as it arrives (``wrap_tool_call``).

The bounded message keeps its full text in its ``ctxbudget`` response metadata until the next model call archives
it (the read-back tool reads it from there meanwhile), and the session emits ``tool_output_bounded``. An output
whose thread has no view yet is left whole: the session bounds it on arrival at the next model call instead.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ctxbudget.archive import HANDLE_PREFIX
from ctxbudget.context.evidence import excerpt
from ctxbudget.messages import Message
from ctxbudget.messages.tokens import BoundedCounter, TokenCounter
from ctxbudget.session.events import ToolOutputBounded
from langchain_core.messages import ToolMessage

from ._view import ThreadView
from .convert import CTXBUDGET_KEY

__all__ = ["bound_output"]


def bound_output(result: Any, view: ThreadView | None, counter: TokenCounter) -> Any:
    """``result`` with its text bounded to the session's per-output limit, when it is a tool message over it."""
    if view is None or not isinstance(result, ToolMessage) or not isinstance(result.content, str):
        return result  # the session bounds it on arrival at the next model call instead
    session = view.session
    limit = session.policy.tool_output_limit(session.max_tokens)
    if _surely_within(counter, result.content, limit):
        return result  # counted once, by the session, when the next model call adds it
    before = counter.count_text(result.content)
    if before <= limit:
        return result
    message_id = result.id or _result_id(result.tool_call_id, result.content)
    handle = f"{HANDLE_PREFIX}{message_id}.bounded"
    text = excerpt(result.content, max_tokens=limit, counter=counter, handle=handle)
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
        tokens_after=counter.count_text(text),
    )
    session.events.emit(event)
    return bounded


def _result_id(call_id: str, content: str) -> str:
    """An id for a tool result that has none: a digest of the call it answers and of its text, in 30 digits.

    Not a random one, and always as many tokens: the handle naming it is in the bounded text the model is sent, and
    a random (or hex) id's tokens vary, so where a later compaction cut changed from one run to the next (parallel
    calls drew ids in any order). A tokenizer reads a run of digits in fixed groups.
    """
    digest = hashlib.blake2b(call_id.encode("utf-8", "surrogatepass"), digest_size=12)
    digest.update(content.encode("utf-8", "surrogatepass"))
    return f"lc_{int.from_bytes(digest.digest(), 'big'):030d}"


def _surely_within(counter: TokenCounter, text: str, limit: int) -> bool:
    """Whether the counter's upper bound (UTF-8 bytes for tiktoken) already shows ``text`` within ``limit``."""
    if not isinstance(counter, BoundedCounter):
        return False
    bound = counter.bound_message(Message(role="tool", content=text, tool_call_id="bound"))
    return bound is not None and bound <= limit
