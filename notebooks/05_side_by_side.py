# %% [markdown]
# # Side by side: ctxbudget, `trim_messages`, `SummarizationMiddleware` and `ChatMemoryBuffer` on one session
#
# ## Overview
#
# One long, tool-using coding session (40 turns, parallel tool calls, file reads of a few hundred tokens and now
# and then a test log larger than the whole window) is replayed through four ways of keeping a history inside an
# 8,000-token window:
#
# * **ctxbudget** `ContextSession` (the engine under `ContextBudgetMiddleware` and `BudgetedMemory`);
# * **LangChain `trim_messages`**, `strategy="last"` with a token budget, once with an exact tiktoken counter and
#   once with `count_tokens_approximately`;
# * **LangChain `SummarizationMiddleware`**, with a langchain-core fake chat model writing its summaries (it runs
#   offline: it needs a model only for the summary call);
# * **LlamaIndex `ChatMemoryBuffer`** with an exact tokenizer (`get_encoding("o200k_base").encode_ordinary`).
#
# Every turn makes two model requests, as an agent does: one after the user message (the model asks for tools) and
# one after the tool results (the model answers). For every request we take exactly what each approach would send
# (system prompt + messages + tool schemas), convert it to ctxbudget messages and measure it with the exact
# `o200k_base` count:
#
# | column | meaning |
# | --- | --- |
# | tokens sent | sum over all requests (what you pay for) |
# | largest request | the biggest request, in tokens |
# | over window | requests a provider would refuse (`context_length_exceeded`) |
# | with orphans | requests with a tool call lacking its result or a result lacking its call (`find_tool_pair_problems`); a provider answers HTTP 400 |
# | missing question | requests that no longer contain the user message of the current turn |
# | originals lost | messages that can no longer be recovered from what the approach keeps |
# | median ms/turn | median time the approach itself spends per turn (adding messages + building both requests) |

# %% [markdown]
# ## Setup
#
# ```bash
# # from the root of your ctxbudget clone (ctxbudget is not on PyPI yet):
# pip install -e ".[langchain,llamaindex]" matplotlib
# # once ctxbudget is published on PyPI, from anywhere:
# # pip install "ctxbudget[langchain,llamaindex]" matplotlib
# ```
#
# Everything runs offline: the encodings ship with ctxbudget, and no model is called except the fake summarizer.

# %%
# %matplotlib inline
import random
import statistics
import time

import matplotlib.pyplot as plt
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import SystemMessage
from langchain_core.messages.utils import count_tokens_approximately, trim_messages
from langgraph.graph.message import add_messages
from llama_index.core.memory import ChatMemoryBuffer

from ctxbudget import (
    ContextSession,
    Message,
    TiktokenCounter,
    ToolCall,
    ToolSchema,
    count_request,
    find_tool_pair_problems,
    get_encoding,
)
from langchain_ctxbudget import from_langchain, to_langchain
from llamaindex_ctxbudget import from_chat_message, to_chat_message

# %% [markdown]
# ## Instantiation
#
# ### The session
#
# A deterministic coding session: each turn the user asks about a module, the assistant calls `read_file` (every
# fifth turn `run_tests` too, in parallel), the tools answer, the assistant replies. Every tenth turn, starting at
# turn 5, the test run prints a full verbose log of about 11,000 tokens: more than the window on its own.

# %%
WINDOW = 8_000
TURNS = 40
SYSTEM = "You are a careful coding agent. Read before you edit and run the tests after every change."
TOOLS = [
    ToolSchema(name="read_file", description="Read a file from the repository.",
               parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    ToolSchema(name="run_tests", description="Run the test suite for a path.",
               parameters={"type": "object", "properties": {"path": {"type": "string"}}}),
]
WORDS = "account amount balance charge client currency customer ledger payment refund request retry status".split()
rng = random.Random(11)


def words(n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def file_body(path, lines):
    body = [f"def {rng.choice(WORDS)}_{i}(value: int) -> int:  # {words(4)}\n    return value * {rng.randint(2, 97)}"
            for i in range(lines)]
    return "\n".join([f"# {path}", *body])


def test_log(tests):
    passed = [f"tests/test_{rng.choice(WORDS)}_{i}.py::test_case PASSED" for i in range(tests)]
    return "\n".join([*passed, f"== {tests} passed =="])


def make_turn(t):
    path = f"payments/{rng.choice(WORDS)}.py"
    names = ["read_file"] if t % 5 else ["read_file", "run_tests"]
    calls = tuple(ToolCall(id=f"call_{t}_{i}", name=name, args={"path": path}) for i, name in enumerate(names))

    def output(name):
        if name == "read_file":
            return file_body(path, rng.randint(10, 40))
        return test_log(900 if t % 10 == 5 else rng.randint(250, 350))

    results = tuple(Message(role="tool", tool_call_id=c.id, name=c.name, content=output(c.name), id=f"tool_{t}_{i}")
                    for i, c in enumerate(calls))
    user = Message(role="user", content=f"Turn {t}: look at {path} and fix the retry logic. {words(20)}", id=f"user_{t}")
    step = Message(role="assistant", tool_calls=calls, id=f"calls_{t}")
    answer = Message(role="assistant", content=f"Done with {path}: {words(40)}.", id=f"answer_{t}")
    return user, step, results, answer


SESSION = [make_turn(t) for t in range(TURNS)]
counter = TiktokenCounter()
encoding = get_encoding("o200k_base")
system_message = Message(role="system", content=SYSTEM, id="system")
everything = [m for user, step, results, answer in SESSION for m in (user, step, *results, answer)]
print(f"{len(everything)} messages, {count_request(counter, everything, TOOLS):,} tokens in all, window {WINDOW:,}")
print("largest tool output:", max(counter.count_message(m) for m in everything), "tokens")


# %% [markdown]
# ### The four contenders
#
# Each one gets the same calls: `add(messages)` as they arrive, `request()` for what would be sent (as ctxbudget
# messages, system prompt first), `lost(originals)` at the end. Each is configured as its documentation suggests
# for a window of this size:
#
# * ctxbudget: `ContextSession(max_tokens=WINDOW)`; the default policy compacts at 80% down to 60% and bounds any
#   tool output over its per-output limit (head + tail kept, the original archived);
# * `trim_messages(..., strategy="last", max_tokens=WINDOW, include_system=True, start_on="human",
#   end_on=("human", "tool"))`, the settings LangChain recommends for chat models. The exact counter counts each
#   message's text with tiktoken plus 3 tokens of framing (like the tiktoken recipe in LangChain's docs); tool-call
#   arguments and tool schemas are not in it;
# * `SummarizationMiddleware(model, trigger=("tokens", 80% of WINDOW))`, keeping its default 20 recent messages.
#   Its `before_model` hook is called exactly as `create_agent` calls it, and its update applied with LangGraph's
#   `add_messages` reducer;
# * `ChatMemoryBuffer.from_defaults(token_limit=WINDOW, tokenizer_fn=encoding.encode_ordinary)`; `get()` is what a
#   chat engine sends.

# %%
class CtxBudget:
    name = "ctxbudget ContextSession"

    def __init__(self):
        self.session = ContextSession(max_tokens=WINDOW, counter=TiktokenCounter(), system_prompt=SYSTEM, tools=TOOLS)

    def add(self, messages):
        self.session.add(*messages)

    def request(self):
        return list(self.session.build_request().messages)

    def lost(self, originals):
        kept = {m.id: m for m in self.session.originals()}  # live history + archive
        return sum(1 for m in originals if kept.get(m.id) != m)


def exact_counter(messages):
    return sum(3 + len(encoding.encode_ordinary(m.text)) for m in messages) + 3


class Trim:
    def __init__(self, token_counter, label):
        self.name = f"LangChain trim_messages ({label})"
        self.token_counter = token_counter
        self.history = [SystemMessage(SYSTEM, id="system")]

    def add(self, messages):
        self.history += [to_langchain(m) for m in messages]

    def request(self):
        kept = trim_messages(self.history, max_tokens=WINDOW, token_counter=self.token_counter, strategy="last",
                             include_system=True, start_on="human", end_on=("human", "tool"))
        return [from_langchain(m) for m in kept]

    def lost(self, originals):
        return 0  # stateless: the caller keeps the full list (the model gets no trace of what was cut)


class Summarization:
    name = "LangChain SummarizationMiddleware"

    def __init__(self):
        summary_model = FakeListChatModel(responses=["The agent fixed the retry logic in several payment modules."])
        self.middleware = SummarizationMiddleware(summary_model, trigger=("tokens", int(WINDOW * 0.8)))
        self.state = {"messages": []}

    def add(self, messages):
        self.state["messages"] = add_messages(self.state["messages"], [to_langchain(m) for m in messages])

    def request(self):
        update = self.middleware.before_model(self.state, None)
        if update:
            self.state["messages"] = add_messages(self.state["messages"], update["messages"])
        return [system_message, *(from_langchain(m) for m in self.state["messages"])]

    def lost(self, originals):
        kept = {m.id for m in self.state["messages"]}  # summarized messages are removed from the state
        return sum(1 for m in originals if m.id not in kept)


class Buffer:
    name = "LlamaIndex ChatMemoryBuffer"

    def __init__(self):
        self.memory = ChatMemoryBuffer.from_defaults(token_limit=WINDOW, tokenizer_fn=encoding.encode_ordinary)

    def add(self, messages):
        for message in messages:
            self.memory.put(to_chat_message(message, include_id=True))

    def request(self):
        return [system_message, *(from_chat_message(chat) for chat in self.memory.get())]

    def lost(self, originals):
        kept = {from_chat_message(chat).id for chat in self.memory.get_all()}  # the store keeps everything
        return sum(1 for m in originals if m.id not in kept)


contenders = [CtxBudget(), Trim(exact_counter, "tiktoken"), Trim(count_tokens_approximately, "approximate"),
              Summarization(), Buffer()]


# %% [markdown]
# ## Usage
#
# ### Replay the session through each
#
# Only the approach's own work is timed (adding messages and building requests); measuring the requests is not.

# %%
def replay(contender):
    row = {"approach": contender.name, "tokens sent": 0, "largest request": 0, "over window": 0,
           "with orphans": 0, "missing question": 0}
    added, lengths, times = [], [], []

    def timed(action, *args):
        start = time.perf_counter()
        value = action(*args)
        return value, time.perf_counter() - start

    for user, step, results, answer in SESSION:
        spent = 0.0
        for batch in ((user,), (step, *results)):
            _, elapsed = timed(contender.add, batch)
            added += batch
            request, build = timed(contender.request)
            spent += elapsed + build
            tokens = count_request(counter, request, TOOLS)
            row["tokens sent"] += tokens
            row["largest request"] = max(row["largest request"], tokens)
            row["over window"] += tokens > WINDOW
            row["with orphans"] += bool(find_tool_pair_problems(request))
            row["missing question"] += all(m.id != user.id for m in request)
        _, elapsed = timed(contender.add, (answer,))
        added.append(answer)
        lengths.append(len(added))
        times.append((spent + elapsed) * 1000)
    row["originals lost"] = contender.lost(added)
    row["median ms/turn"] = statistics.median(times)
    return row, lengths, times


rows, curves = [], {}
for contender in contenders:
    row, lengths, times = replay(contender)
    rows.append(row)
    curves[contender.name] = (lengths, times)
print(len(rows), "approaches replayed over", 2 * TURNS, "requests each")

# %% [markdown]
# ### The comparison

# %%
columns = list(rows[0])
lines = ["| " + " | ".join(columns) + " |", "|---|" + "---:|" * (len(columns) - 1)]
for row in rows:
    cells = [row["approach"]] + [f"{row[c]:,.3f} ms" if isinstance(row[c], float) else f"{row[c]:,}"
                                 for c in columns[1:]]
    lines.append("| " + " | ".join(cells) + " |")
print("\n".join(lines))

ours = rows[0]
assert ours["over window"] == ours["with orphans"] == ours["missing question"] == ours["originals lost"] == 0
assert ours["largest request"] <= WINDOW

# %% [markdown]
# How to read it (the counts are deterministic; only the timings vary from machine to machine):
#
# * **ctxbudget** never sends a request over the window, never orphans a tool pair and keeps every original
#   (live or archived, readable back by handle). The oversized test logs are bounded as they arrive, so the current
#   question always stays in the request; compaction keeps usage between the 60% target and the 80% threshold.
# * **`trim_messages`** keeps no record, so nothing is "lost" from the caller's list, but the model gets no summary or
#   handle for what was cut. Its exact counter measures message text only, so requests carrying tool calls and tool
#   schemas can still go over the window; the approximate counter goes over more often. When a log larger than the
#   window arrives, trimming from the front with `start_on="human"` leaves nothing but the system prompt: the
#   request no longer holds the question it should answer. It re-counts the whole history on every call.
# * **`SummarizationMiddleware`** counts approximately, and the 20 messages it keeps can be larger than the
#   window on their own; the summarized messages are removed from the state and cannot be recovered.
# * **`ChatMemoryBuffer`** returns the last message alone when it does not fit: a tool result without its call,
#   which a provider rejects. `get()` re-tokenizes the remaining history after every message it drops, so its cost
#   grows with the history (see the plot).

# %% [markdown]
# ### Time per turn vs history length

# %%
figure, axes = plt.subplots(figsize=(9, 4))
for name, (lengths, times) in curves.items():
    axes.plot(lengths, times, marker="o", markersize=2, linewidth=1, label=name)
axes.set_yscale("log")
axes.set_xlabel("messages in the history")
axes.set_ylabel("ms per turn (log scale)")
axes.set_title(f"Per-turn cost, {WINDOW:,}-token window")
axes.legend(fontsize=8)
figure.tight_layout()
plt.show()

# %% [markdown]
# ## Use within a chain/agent
#
# The same comparison inside real `create_agent` graphs, with `StrictFakeChatModel` as the model: it rejects a
# request over the window (`ContextOverflowError`) or with an orphaned tool pair (`StrictProviderError`) as a real
# provider would. The model replies are the session's own (tool calls, then answers) and two real `@tool` tools
# return the session's outputs, so both agents see exactly the turns above.

# %%
from typing import Annotated

from langchain.agents import create_agent
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver

from langchain_ctxbudget import ContextBudgetMiddleware, StrictFakeChatModel, StrictProviderError

OUTPUTS = {r.tool_call_id: r.text for _, _, results, _ in SESSION for r in results}


def output(tool_call_id, name):  # the session's own result, under the session's own message id
    return ToolMessage(OUTPUTS[tool_call_id], tool_call_id=tool_call_id, name=name, id=f"result-{tool_call_id}")


@tool
def read_file(path: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
    """Read a file from the repository."""
    return output(tool_call_id, "read_file")


@tool
def run_tests(path: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
    """Run the test suite for a path."""
    return output(tool_call_id, "run_tests")


def run_agent(middleware):
    replies = [to_langchain(m) for _, step, _, answer in SESSION for m in (step, answer)]
    model = StrictFakeChatModel(max_input_tokens=WINDOW, responses=replies)
    agent = create_agent(model, tools=[read_file, run_tests], system_prompt=SYSTEM, middleware=[middleware],
                         checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "side-by-side"}}
    for turn, (user, *_) in enumerate(SESSION):
        try:
            agent.invoke({"messages": [to_langchain(user)]}, config)
        except (ContextOverflowError, StrictProviderError) as exc:
            return f"rejected at turn {turn}: {type(exc).__name__}: {str(exc)[:70]}"
    largest = max(r.tokens for r in model.requests)
    return f"all {TURNS} turns, {len(model.requests)} requests accepted, largest {largest:,} tokens"


summary_model = FakeListChatModel(responses=["The agent fixed the retry logic in several payment modules."])
outcomes = {
    "ContextBudgetMiddleware": run_agent(ContextBudgetMiddleware(max_tokens=WINDOW)),
    "SummarizationMiddleware": run_agent(SummarizationMiddleware(summary_model, trigger=("tokens", int(WINDOW * 0.8)))),
}
for name, outcome in outcomes.items():
    print(f"{name:<24} {outcome}")
assert outcomes["ContextBudgetMiddleware"].startswith("all ")

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
# | `ctxbudget.ContextSession` | a history kept inside its budget: exact counts, compaction, archive of originals |
# | `ctxbudget.count_request`, `TiktokenCounter`, `get_encoding` | exact, offline OpenAI chat-format counts |
# | `ctxbudget.find_tool_pair_problems` | every orphaned tool call or result in a message list |
# | `langchain_ctxbudget.ContextBudgetMiddleware` | the same engine as `create_agent` middleware |
# | `langchain_ctxbudget.from_langchain`, `to_langchain` | LangChain message conversion |
# | `llamaindex_ctxbudget.from_chat_message`, `to_chat_message` | LlamaIndex message conversion |
# | `langchain_ctxbudget.StrictFakeChatModel`, `StrictProviderError` | an offline chat model as strict as a provider |
