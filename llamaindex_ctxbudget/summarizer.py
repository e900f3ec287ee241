"""``LlamaIndexSummarizer``: any LlamaIndex LLM as the compaction summarizer, sync and async.

The prompt is ctxbudget's :func:`~ctxbudget.compaction.summarize.build_summary_prompt`: the transcript goes in as
escaped, untrusted data with the previous summary merged in. The session validates the answer (non-blank, under the
summary
limit) and falls back to an extractive summary when the LLM fails, so a summarizer outage never loses history::

    memory = BudgetedMemory.from_defaults(model="gpt-4o-mini", summarizer=LlamaIndexSummarizer(llm))
"""

from __future__ import annotations

from ctxbudget.compaction.summarize import SummaryRequest, build_summary_prompt
from llama_index.core.llms import LLM, ChatMessage

from .convert import to_chat_message

__all__ = ["LlamaIndexSummarizer"]


class LlamaIndexSummarizer:
    """Summarizes with a LlamaIndex ``LLM`` (``chat`` / ``achat``).

    Args:
        llm: any LlamaIndex LLM.
    """

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    @staticmethod
    def messages(request: SummaryRequest) -> list[ChatMessage]:
        """The chat messages sent for ``request``."""
        return [to_chat_message(message) for message in build_summary_prompt(request)]

    def summarize(self, request: SummaryRequest) -> str:
        """Return the new cumulative summary (the LLM's text, unvalidated: the session checks it)."""
        return self.llm.chat(self.messages(request)).message.content or ""

    async def asummarize(self, request: SummaryRequest) -> str:
        """Async :meth:`summarize`."""
        return (await self.llm.achat(self.messages(request))).message.content or ""
