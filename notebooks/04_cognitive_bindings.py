# %% [markdown]
# # Exact cognitive package bindings
#
# ## Overview
#
# A session can be bound to one exact generation of a *cognitive package*: a versioned, digest-pinned body of
# knowledge served by a provider that holds its lease. Each turn's request is digest-pinned, and every response
# is validated (binding, digests, citations, limits) before any of it enters the context. Anything wrong fails
# closed with a typed `CognitiveContextError`; nothing falls back to general retrieval. The binding is kept in the
# session snapshot, and a resume must re-inject the identical binding.
#
# This notebook uses the folder-backed reference provider over the example package shipped with ctxbudget.

# %% [markdown]
# ## Setup
#
# ```bash
# # from the root of your ctxbudget clone (ctxbudget is not on PyPI yet):
# pip install -e .
# # once ctxbudget is published on PyPI, from anywhere:
# # pip install ctxbudget
# ```

# %%
from ctxbudget.cognitive import (
    BindingLimits,
    CognitiveContextSession,
    ContextRequest,
    ContextResponse,
    FolderKnowledgeProvider,
    example_package_path,
)
from ctxbudget.errors import BindingMismatchError, MissingProviderError, ResponseDrift
from ctxbudget.session import ContextSession
from ctxbudget.testing import check_provider_request
from ctxbudget.messages.tokens import TiktokenCounter

counter = TiktokenCounter()

# %% [markdown]
# ## Instantiation
#
# The folder provider reads a package directory (a manifest plus Markdown documents) and derives the binding:
# package id and version, lifecycle generation, content and generation digests, and the injection limits.

# %%
folder = FolderKnowledgeProvider(example_package_path())
binding = folder.binding()
print(binding.package_id, binding.package_version, "generation", binding.lifecycle_generation)
print("generation digest:", binding.generation_digest)
print("limits:", binding.limits.to_dict())

events = []
session = ContextSession(max_tokens=20_000, counter=counter, system_prompt="Answer from the handbook.",
                         cognitive=CognitiveContextSession(binding, folder, timeout=5.0))
session.subscribe(events.append, "cognitive_context_bound")

# %% [markdown]
# ## Usage
#
# Retrieval returns cited documents as context items; planning them puts them in the same budget as everything
# else, rendered as escaped data.

# %%
items = session.retrieve_knowledge("How are budgets enforced?")
for item in items:
    print(item.id, "|", item.content.splitlines()[0][:100])
plan = session.set_context(items)
session.add_user("How are budgets enforced?")
request = session.build_request()
assert check_provider_request(request.messages, max_tokens=20_000, counter=counter) == request.tokens
print(len(events), "bound event(s); request:", request.tokens, "tokens")
assert any("[cognitive citation=sha256:" in m.text for m in request.messages)


# %% [markdown]
# ### A tampered response fails closed
#
# A provider that edits a document after it was cited (or changes the generation) is caught by validation: the
# call raises `ResponseDrift` and nothing enters the context.

# %%
class Tampering:
    name = "tampering"

    def __init__(self):
        self.inner = FolderKnowledgeProvider(example_package_path())

    def query(self, request: ContextRequest) -> ContextResponse:
        data = self.inner.query(request).to_dict()
        data["documents"][0]["content"] += " (quietly edited)"
        return ContextResponse.from_dict(data)


tampered = ContextSession(max_tokens=20_000, counter=counter,
                          cognitive=CognitiveContextSession(binding, Tampering()))
before = tampered.counted_tokens()
try:
    tampered.retrieve_knowledge("How are budgets enforced?")
    raise AssertionError("a tampered response must not be accepted")
except ResponseDrift as exc:
    print("ResponseDrift:", str(exc)[:160])
assert tampered.counted_tokens() == before

# %% [markdown]
# ### Resume
#
# The snapshot keeps the binding. Restoring needs the identical binding re-injected: none, or different limits,
# are refused.

# %%
snapshot = session.snapshot().to_json()
try:
    ContextSession.restore(snapshot, counter=counter)
except MissingProviderError as exc:
    print("MissingProviderError:", str(exc)[:120])
smaller = folder.binding(BindingLimits(maxResults=2, maxDocumentBytes=6144, maxTotalBytes=6144))
try:
    ContextSession.restore(snapshot, counter=counter, cognitive=CognitiveContextSession(smaller, folder))
except BindingMismatchError as exc:
    print("BindingMismatchError:", str(exc)[:120])
resumed = ContextSession.restore(snapshot, counter=counter, cognitive=CognitiveContextSession(binding, folder))
assert [m.id for m in resumed.history] == [m.id for m in session.history]
print("resumed:", len(resumed.retrieve_knowledge("citations")), "cited document(s)")

# %% [markdown]
# ## Use within a chain/agent
#
# In an agent loop, query the package each turn, plan the cited items into the session and build the request;
# the strict provider check stands in for the model call.

# %%
from ctxbudget.testing import StrictProvider

provider = StrictProvider(max_tokens=20_000, counter=counter)
for question in ["What is a budget?", "How do citations work?", "What does compaction keep?"]:
    resumed.set_context(resumed.retrieve_knowledge(question))
    resumed.add_user(question)
    request = resumed.build_request()
    resumed.record_usage(provider.complete(request.messages, request.tools))
    resumed.add_assistant(f"(answer to: {question})")
    print(f"{question:<28} {request.tokens:>5} tokens, {len(resumed.last_plan.included)} cited item(s)")

# %% [markdown]
# **Using a real model.** Replace `StrictProvider` with your model call, e.g. `init_chat_model("openai:gpt-4o")`
# in LangChain or `OpenAI(model="gpt-4o")` in LlamaIndex, and send `request.messages`; the binding, validation
# and budget are unchanged.

# %% [markdown]
# ## API reference
#
# | Name | What it does |
# | --- | --- |
# | `ctxbudget.cognitive.FolderKnowledgeProvider`, `example_package_path` | reference provider over a package folder |
# | `ctxbudget.cognitive.PackageBinding`, `BindingLimits` | the exact generation and its injection limits |
# | `ctxbudget.cognitive.CognitiveContextSession` | requests, validation and rendering for one binding |
# | `ContextSession(cognitive=...)`, `retrieve_knowledge`, `set_context` | a budgeted session bound to a package |
# | `ContextSession.restore(snapshot, cognitive=...)` | resume; the binding must be identical |
# | `ctxbudget.errors.CognitiveContextError` and subclasses | every failure, closed |
