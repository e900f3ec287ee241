# %% [markdown]
# # ctxbudget with a LangChain agent: ContextBudgetMiddleware
#
# ## Overview
#
# `ContextBudgetMiddleware` plugs into `langchain.agents.create_agent`. Before every model call it measures the
# real request (system prompt, messages and tool schemas, exactly), compacts when over threshold (bound oversized
# tool outputs, clear old results, summarize older turns), keeps every tool call paired with its result, and
# refuses past the hard stop with a typed error. Compaction results are written to the agent state, so they
# survive a checkpointer, and every original stays readable in the state's archive.
#
# This notebook runs a long tool-using session offline with `StrictFakeChatModel`, a real `BaseChatModel` that
# rejects what a strict provider rejects.

# %% [markdown]
# ## Setup
#
# ```bash
# # from the root of your ctxbudget clone (ctxbudget is not on PyPI yet):
# pip install -e ".[langchain]" matplotlib
# # once ctxbudget is published on PyPI, from anywhere:
# # pip install "ctxbudget[langchain]" matplotlib
# ```

# %%
# %matplotlib inline
from typing import Annotated

import matplotlib.pyplot as plt
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver

from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.messages.toolpairs import find_tool_pair_problems
from langchain_ctxbudget import (
    SUMMARY_KEY,
    ContextBudgetMiddleware,
    StrictFakeChatModel,
    ToolLoop,
    archived_messages,
    from_langchain,
)


# %% [markdown]
# ## Instantiation

# %%
@tool
def search(query: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
    """Search the corpus and return every matching line."""
    lines = "\n".join(f"{query}: match {i}, value={i * 7 % 101}" for i in range(400))
    return ToolMessage(lines, tool_call_id=tool_call_id, name="search", id=f"result-{tool_call_id}")  # a stable id


WINDOW = 8_000
model = StrictFakeChatModel(max_input_tokens=WINDOW, respond=ToolLoop("search", parallel=2))
middleware = ContextBudgetMiddleware(policy=CompactionPolicy(keep_recent_messages=6))
checkpointer = InMemorySaver()
agent = create_agent(model, tools=[search], middleware=[middleware], checkpointer=checkpointer,
                     system_prompt="You are a careful research assistant.")
print("tools the model sees:", [search.name, *(t.name for t in middleware.tools)])


class CompactionLog(BaseCallbackHandler):
    def __init__(self):
        self.events = []

    def on_custom_event(self, name, data, **kwargs):
        if name == "ctxbudget.context_compacted":
            self.events.append(data)


# %% [markdown]
# ## Usage
#
# Forty turns, each with two parallel tool calls returning long outputs, in an 8,000-token window.

# %%
log = CompactionLog()
config = {"configurable": {"thread_id": "research"}, "callbacks": [log]}
usage, marks = [], []
for turn in range(40):
    seen = len(log.events)
    question = {"role": "user", "content": f"Question {turn}: what does item {turn} say?", "id": f"question-{turn}"}
    agent.invoke({"messages": [question]}, config)
    usage.append(middleware.session("research").state.used_percentage)
    if len(log.events) > seen:
        marks.append(turn)
print(len(model.requests), "model calls;", len(log.events), "compactions at turns", marks)
print("largest request:", max(r.tokens for r in model.requests), "tokens of", WINDOW)
for request in model.requests:
    assert find_tool_pair_problems([from_langchain(m.model_copy()) for m in request.messages]) == []
    assert request.tokens <= WINDOW

# %% [markdown]
# ### Events and the summary ledger
#
# Every compaction is a `ctxbudget.context_compacted` custom event (tiers, usage before and after). The older turns
# it took out of the prompt are folded into one cumulative summary, kept in the agent state: a ledger with fixed
# sections (*User facts and constraints*, *Decisions*, *Files and artifacts*, *Commands and results*, *Errors*,
# *Open items*, *Latest request*), built offline from the messages themselves; every bullet stays short and the
# figures are kept verbatim. The user's first request (the goal) is pinned separately and never summarized away.

# %%
first = log.events[0]
print("first compaction:", first["tiers"], first["before"]["used_tokens"], "->", first["after"]["used_tokens"])
state = agent.get_state(config).values


def show_ledger(summary, bullets=3):
    """Each section of a ledger with its first bullets (the rest counted)."""
    for section in summary.split("\n## "):
        heading, *items = section.strip().removeprefix("## ").splitlines()
        items = [item for item in items if item.strip()]
        print(f"## {heading} ({len(items)} bullet{'' if len(items) == 1 else 's'})")
        for item in items[:bullets]:
            print(item[:110])
        if len(items) > bullets:
            print(f"  ... {len(items) - bullets} more")


show_ledger(state[SUMMARY_KEY])

# %% [markdown]
# ### The archive, and searching it
#
# Nothing is lost: every original that left the prompt is in the state's archive (`archived_messages`), readable by
# handle. `search_archived` ranks the archive for a query (exact keywords, identifiers, paths), best first.

# %%
archived = archived_messages(state)
questions = {m.text for m in archived if m.role == "user"} | {
    m.text for m in state["messages"] if m.type == "human"}
assert {f"Question {t}: what does item {t} say?" for t in range(40)} <= questions  # nothing lost
print(len(archived), "archived originals in the state")
for hit in middleware.search_archived("Question 7", k=3, state=state):
    print(f"{hit.reason:<10} {hit.role:<5} {hit.handle}  {hit.text[:60]!r}")


# %% [markdown]
# The model has the same reach. The middleware adds two tools to every request: `search_archive` (the ranked hits,
# each with its `ctx://archive/` handle and an excerpt) and `read_archived_output` (the full original by handle).
# Here a scripted model, resuming the same thread, searches for an early question, then reads the best hit back.

# %%
def reader(messages):
    last = messages[-1]
    if isinstance(last, ToolMessage) and last.name == "search_archive":
        handle = next(word for word in last.text.split() if word.startswith("ctx://archive/"))
        return AIMessage("", tool_calls=[{"name": "read_archived_output", "args": {"handle": handle}, "id": "read-1"}])
    return AIMessage(f"Found it: {last.text.splitlines()[0]}")


search_call = {"name": "search_archive", "args": {"query": "Question 3 item 3", "k": 2}, "id": "search-1"}
recall = StrictFakeChatModel(max_input_tokens=WINDOW, responses=[AIMessage("", tool_calls=[search_call])],
                             respond=reader)
agent_2 = create_agent(recall, tools=[search], middleware=[middleware], checkpointer=checkpointer,
                       system_prompt="You are a careful research assistant.")
result = agent_2.invoke({"messages": [{"role": "user", "content": "What did I ask about item 3?"}]}, config)
for message in result["messages"][-5:]:
    calls = ", ".join(f"{call['name']}({call['args']})" for call in getattr(message, "tool_calls", []))
    print(f"[{message.type}]", calls or message.text[:300])

# %% [markdown]
# ### Window usage per turn

# %%
figure, axes = plt.subplots(figsize=(9, 3.5))
axes.plot(range(len(usage)), usage, marker="o", markersize=3, label="window used after the turn (%)")
for index, turn in enumerate(marks):
    axes.axvline(turn, color="tab:red", alpha=0.4, linestyle="--", label="compaction" if index == 0 else None)
axes.axhline(80, color="gray", linestyle=":", label="threshold (80%)")
axes.set_xlabel("turn")
axes.set_ylabel("% of the window")
axes.set_ylim(0, 100)
axes.legend(loc="lower right")
figure.tight_layout()
plt.show()

# %% [markdown]
# ## Use within a chain/agent
#
# The agent above *is* the chain: `create_agent` with `middleware=[ContextBudgetMiddleware(...)]`. Place the
# middleware last so it budgets the request the model really receives. A chat model passed as `summarizer=`
# writes the summaries (tagged `nostream`, so they never stream to a UI); by default the extractive summarizer
# runs offline.

# %% [markdown]
# **Using a real model.** Everything above runs offline. To use a real provider, replace the fake model with one
# from `init_chat_model` (needs `pip install langchain-openai` and `OPENAI_API_KEY`); nothing else changes:
#
# ```python
# from langchain.chat_models import init_chat_model
#
# model = init_chat_model("openai:gpt-4o")
# ```

# %% [markdown]
# ## API reference
#
# | Name | What it does |
# | --- | --- |
# | `langchain_ctxbudget.ContextBudgetMiddleware` | budget, compaction, pairing and hard stop for `create_agent` |
# | `langchain_ctxbudget.archived_messages`, `SUMMARY_KEY` | the originals and the summary kept in the agent state |
# | `langchain_ctxbudget.StrictFakeChatModel`, `ToolLoop` | an offline chat model as strict as a real provider |
# | `ctxbudget.compaction.policy.CompactionPolicy` | threshold, target, hard stop, tail kept, tool-output limits |
