"""Any LangChain chat model as a session's summarizer; its calls never stream to the user's UI.

Every call is tagged ``nostream`` (LangGraph's ``stream_mode="messages"`` skips such runs) and
``ctxbudget:summarize``, with ``metadata={"lc_source": "ctxbudget_summarization"}``, so tracers show it as
bookkeeping and UIs never render summary tokens as the agent's reply. The prompt is
:func:`ctxbudget.compaction.summarize.build_summary_prompt`: the previous summary is merged in (cumulative), the
transcript is escaped untrusted data.
"""

from __future__ import annotations

from typing import Any

from ctxbudget.compaction.summarize import SummaryRequest, build_summary_prompt
from ctxbudget.errors import SummarizerError
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables.config import RunnableConfig

from .convert import to_langchain

__all__ = ["NOSTREAM_TAG", "SUMMARY_TAG", "LangChainSummarizer"]

NOSTREAM_TAG = "nostream"
"""The tag LangGraph's message streaming skips (``langgraph.constants.TAG_NOSTREAM``)."""
SUMMARY_TAG = "ctxbudget:summarize"
"""Tag on every summarizer call, for filtering traces."""


class LangChainSummarizer:
    """Summarize with a LangChain chat model (sync ``summarize``, async ``asummarize``).

    Args:
        model: any ``BaseChatModel`` (no tools are bound).
        parent_config: a run config whose callbacks the summary call nests under (tracing). The session calls
            sync summarizers on a worker thread, where the caller's run context is not visible, so the middleware
            binds it with :meth:`with_parent`.
    """

    def __init__(self, model: BaseChatModel, *, parent_config: RunnableConfig | None = None) -> None:
        self.model = model
        self.parent_config = parent_config

    def with_parent(self, config: RunnableConfig | None) -> LangChainSummarizer:
        """A copy whose calls nest under ``config``'s run (callbacks only; tags stay ``nostream``)."""
        return LangChainSummarizer(self.model, parent_config=config)

    def config(self) -> RunnableConfig:
        """The config of one summary call: ``nostream`` + summary tags, parent callbacks when bound."""
        config: RunnableConfig = {
            "tags": [NOSTREAM_TAG, SUMMARY_TAG],
            "metadata": {"lc_source": "ctxbudget_summarization"},
            "run_name": "ctxbudget_summarize",
        }
        if self.parent_config is not None and self.parent_config.get("callbacks") is not None:
            config["callbacks"] = self.parent_config["callbacks"]
        return config

    @staticmethod
    def prompt(request: SummaryRequest) -> list[BaseMessage]:
        """The LangChain messages sent for ``request``."""
        return [to_langchain(message) for message in build_summary_prompt(request)]

    def summarize(self, request: SummaryRequest) -> str:
        """Return the new cumulative summary text."""
        return _text(self.model.invoke(self.prompt(request), config=self.config()))

    async def asummarize(self, request: SummaryRequest) -> str:
        """Async :meth:`summarize`."""
        return _text(await self.model.ainvoke(self.prompt(request), config=self.config()))


def _text(reply: Any) -> str:
    text = getattr(reply, "text", None)
    if not isinstance(text, str):
        raise SummarizerError(f"summary: the model returned {type(reply).__name__}, not a message with text")
    return text
