# %% [markdown]
# # ctxbudget with LlamaIndex: BudgetedMemory and BudgetNodePostprocessor
#
# ## Overview
#
# * `BudgetedMemory` is a drop-in LlamaIndex memory: chat engines and agents read a history that always fits the
#   window, compacted (tool outputs bounded, old results cleared, older turns summarized) instead of silently
#   dropped, with a valid tool-call sequence every time and every original kept in the archive.
# * `BudgetNodePostprocessor` fits retrieved nodes into a token budget in a query engine: rank, dedupe (exact and
#   near), per-source caps, and a report of what was dropped and why.
#
# Everything runs offline with `StrictFakeLLM`, a real LlamaIndex `FunctionCallingLLM` that rejects what a strict
# provider rejects (orphaned tool calls, requests over its window), and `MockEmbedding`.

# %% [markdown]
# ## Setup
#
# ```bash
# # from the root of your ctxbudget clone (ctxbudget is not on PyPI yet):
# pip install -e ".[llamaindex]"
# # once ctxbudget is published on PyPI, from anywhere:
# # pip install "ctxbudget[llamaindex]"
# ```

# %%
import asyncio

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.tools import FunctionTool

from ctxbudget.compaction.policy import CompactionPolicy
from llamaindex_ctxbudget import (
    BudgetedMemory,
    BudgetNodePostprocessor,
    FakeReply,
    FakeToolCall,
    StrictFakeLLM,
    bound_tools,
)

# %% [markdown]
# ## Instantiation

# %%
WINDOW = 3_000
llm = StrictFakeLLM(context_window=WINDOW, script=[FakeReply(text="Noted. " * 40)])
memory = BudgetedMemory.from_defaults(max_tokens=WINDOW, system_prompt="Remember the user's preferences.")
engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)

# %% [markdown]
# ## Usage
#
# A long chat in a 3,000-token window: every request fits, the history is compacted instead of truncated, and
# `get_all()` still returns every message.

# %%
for turn in range(60):
    engine.chat(f"Turn {turn}: please remember that I prefer option {turn % 3}. " + "Some detail. " * 20)
print(memory.state)
print("largest request:", llm.max_request_tokens, "tokens of", WINDOW)
print("messages kept (all):", len(memory.get_all()))
assert llm.max_request_tokens <= WINDOW
assert len(memory.get_all()) == 120
assert memory.session.summary is not None
print(memory.session.summary)  # the ledger of the turns taken out of the prompt

# %% [markdown]
# ### A query engine with a token budget for retrieved nodes

# %%
documents = [
    Document(text=f"Refund policy, section {i}. " + "Refunds are processed within five business days. " * (3 + i),
             metadata={"file_name": f"policy-{i % 2}.md"})
    for i in range(12)
]
index = VectorStoreIndex.from_documents(documents, embed_model=MockEmbedding(embed_dim=8))
budget = BudgetNodePostprocessor(max_tokens=400, max_nodes_per_source=3)
query_engine = index.as_query_engine(
    llm=StrictFakeLLM(context_window=4_000, script=[FakeReply(text="Five business days.")]),
    node_postprocessors=[budget],
    similarity_top_k=12,
)
response = query_engine.query("How long do refunds take?")
print(response, "|", len(response.source_nodes), "nodes kept")
report = budget.last_report
print("kept tokens:", report.tokens, "of", report.max_tokens)
for dropped in report.dropped[:4]:
    print("dropped:", dropped.reason, "-", dropped.detail[:100])
assert report.tokens <= 400


# %% [markdown]
# ## Use within a chain/agent
#
# A `FunctionAgent` with parallel tool calls and a huge tool output each turn, in a 6,000-token window. The tools
# are wrapped by `bound_tools`, so an oversized output is bounded as it arrives (its full text goes to the
# archive) and the agent's requests stay valid and in budget.

# %%
def grep(pattern: str) -> str:
    """Search the repository for a pattern."""
    return f"src/app.py:12: {pattern} matched here\n" * 2000


def read_file(path: str) -> str:
    """Read one file."""
    return f"# contents of {path}\nprint('hello')\n"


tools = [FunctionTool.from_defaults(grep), FunctionTool.from_defaults(read_file)]
parallel = FakeReply(tool_calls=[FakeToolCall(name="grep", args={"pattern": "TODO"}),
                                 FakeToolCall(name="read_file", args={"path": "a.py"})])
agent_llm = StrictFakeLLM(context_window=6_000, script=[parallel, FakeReply(text="Fixed. " * 30)])
agent_memory = BudgetedMemory.from_defaults(max_tokens=6_000, tools=tools, reserve_tokens=2_500,
                                            policy=CompactionPolicy(max_tool_output_tokens=600))
agent = FunctionAgent(tools=bound_tools(tools, agent_memory), llm=agent_llm)


async def run_agent() -> None:
    for turn in range(12):
        await agent.run(f"Task {turn}: fix the bug in module {turn}", memory=agent_memory)


await run_agent()
print("requests:", len(agent_llm.requests), "| largest:", agent_llm.max_request_tokens, "tokens")
print("messages kept:", len(agent_memory.get_all()), "| archive entries:", len(agent_memory.session.archive))
assert agent_llm.max_request_tokens <= 6_000
assert len(agent_memory.get_all()) == 12 * 5

# %% [markdown]
# **Using a real model.** Replace the fake LLM with a real one (needs `pip install llama-index-llms-openai` and
# `OPENAI_API_KEY`); the memory and postprocessor are unchanged:
#
# ```python
# from llama_index.llms.openai import OpenAI
#
# llm = OpenAI(model="gpt-4o")
# ```

# %% [markdown]
# ## API reference
#
# | Name | What it does |
# | --- | --- |
# | `llamaindex_ctxbudget.BudgetedMemory` | a LlamaIndex memory kept inside the window; `get_all()` keeps everything |
# | `llamaindex_ctxbudget.bound_tools` | wrap tools so oversized outputs are bounded and archived |
# | `llamaindex_ctxbudget.BudgetNodePostprocessor` | retrieved nodes within a token budget, with a drop report |
# | `llamaindex_ctxbudget.StrictFakeLLM`, `FakeReply`, `FakeToolCall` | an offline, strict function-calling LLM |
