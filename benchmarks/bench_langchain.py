"""Per-model-call overhead: ContextBudgetMiddleware vs LangChain's SummarizationMiddleware and ContextEditingMiddleware.

Each middleware's hooks are called directly on a prepared agent state / ModelRequest of 1k, 5k and 10k messages,
with a window so large that no compaction fires: what is measured is the bookkeeping every model call pays. Like
an agent loop, each measured call sees the previous history plus one new assistant tool call and its result (the
same message objects, as LangGraph's ``add_messages`` keeps them). Our first call on a history (converting it all
once, e.g. after a process restart) is reported separately.

Run: ``.venv/bin/python -m benchmarks.bench_langchain``; writes ``benchmarks/results/langchain.md``.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware, SummarizationMiddleware
from langchain.agents.middleware.types import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from langchain_ctxbudget import ContextBudgetMiddleware, StrictFakeChatModel
from langchain_ctxbudget.middleware import RUN_KEY

SIZES = (1_000, 5_000, 10_000)
REPEATS = 15
WINDOW = 50_000_000
RESULTS = Path(__file__).parent / "results" / "langchain.md"


@tool
def search(query: str) -> str:
    """Search the corpus."""
    return query


def _turn(i: int) -> list[BaseMessage]:
    return [
        AIMessage(content="", tool_calls=[{"id": f"c{i}", "name": "search", "args": {"query": f"q{i}"}}], id=f"a{i}"),
        ToolMessage(content=f"result {i}: " + "lorem ipsum dolor " * 12, tool_call_id=f"c{i}", id=f"t{i}"),
    ]


def history(n: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    i = 0
    while len(messages) < n:
        messages.append(HumanMessage(content=f"question {i}: please look this up", id=f"h{i}"))
        messages.extend(_turn(i))
        messages.append(AIMessage(content=f"answer {i}: " + "sit amet " * 10, id=f"f{i}"))
        i += 1
    return messages[:n]


def _request(model: StrictFakeChatModel, messages: list[BaseMessage]) -> ModelRequest[Any]:
    return ModelRequest(
        model=model,
        messages=messages,  # type: ignore[arg-type]
        system_message=SystemMessage(content="You are a helpful agent."),
        tools=[search],
        # One agent run: create_agent's before_agent hook stamps the run id (or a thread id comes from the config).
        state={"messages": messages, RUN_KEY: "bench-run"},  # type: ignore[typeddict-item]
    )


def _handler(_: ModelRequest[Any]) -> ModelResponse[Any]:
    return ModelResponse(result=[AIMessage(content="ok")])


def ours(middleware: ContextBudgetMiddleware, model: StrictFakeChatModel, messages: list[BaseMessage]) -> None:
    middleware.wrap_model_call(_request(model, messages), _handler)
    middleware.after_model({"messages": [*messages, AIMessage(content="ok")], RUN_KEY: "bench-run"}, None)


def summarization(middleware: SummarizationMiddleware, model: Any, messages: list[BaseMessage]) -> None:
    middleware.before_model({"messages": messages}, None)  # type: ignore[arg-type]


def editing(middleware: ContextEditingMiddleware, model: StrictFakeChatModel, messages: list[BaseMessage]) -> None:
    middleware.wrap_model_call(_request(model, messages), _handler)


def measure(call: Any, middleware: Any, model: StrictFakeChatModel, base: list[BaseMessage]) -> tuple[float, float]:
    """(first call ms, median steady-state ms) as the history grows by one tool round per call."""
    messages = list(base)
    start = time.perf_counter()
    call(middleware, model, messages)
    first = (time.perf_counter() - start) * 1000
    samples = []
    for r in range(REPEATS):
        messages = [*messages, *_turn(1_000_000 + r)]
        start = time.perf_counter()
        call(middleware, model, messages)
        samples.append((time.perf_counter() - start) * 1000)
    return first, statistics.median(samples)


def run() -> str:
    model = StrictFakeChatModel(max_input_tokens=WINDOW)
    rows = [
        "| messages | ctxbudget (ms/call) | ctxbudget first call (ms) | SummarizationMiddleware (ms/call) "
        "| ContextEditingMiddleware (ms/call) | Summarization / ctxbudget | ContextEditing / ctxbudget |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in SIZES:
        base = history(n)
        first, mine = measure(ours, ContextBudgetMiddleware(max_tokens=WINDOW), model, base)
        summ = SummarizationMiddleware(model=model, trigger=("tokens", 10**12))
        _, theirs_s = measure(summarization, summ, model, base)
        edit = ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=10**12)])
        _, theirs_e = measure(editing, edit, model, base)
        rows.append(
            f"| {n:,} | {mine:.3f} | {first:.1f} | {theirs_s:.3f} | {theirs_e:.3f} "
            f"| {theirs_s / mine:.1f}x | {theirs_e / mine:.1f}x |"
        )
    note = (
        f"\nMedians of {REPEATS} calls per size; each call adds one tool round to the history; window "
        f"{WINDOW:,} tokens (no compaction fires). Python {'.'.join(map(str, __import__('sys').version_info[:3]))}."
        "\nctxbudget counts exactly (tiktoken) and includes the system prompt and tool schemas; "
        "SummarizationMiddleware counts approximately over every message each call; ContextEditingMiddleware "
        "deep-copies every message each call.\n"
    )
    return "\n".join(rows) + "\n" + note


def main() -> None:
    table = run()
    print(table)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("# LangChain middleware: per-model-call overhead\n\n" + table)


if __name__ == "__main__":
    main()
