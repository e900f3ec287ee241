"""A ContextSession bound to an exact cognitive package: exclusivity, events, budget, snapshot and resume rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ctxbudget.cognitive import (
    BindingLimits,
    CognitiveContextSession,
    ContextRequest,
    ContextResponse,
    FolderKnowledgeProvider,
    example_package_path,
)
from ctxbudget.errors import (
    BindingMismatchError,
    CognitiveContextError,
    CognitiveExclusivityError,
    MissingProviderError,
    ProviderFailure,
    ResponseDrift,
    UnexpectedBindingError,
)
from ctxbudget.messages.tokens import TiktokenCounter
from ctxbudget.session import ContextSession
from ctxbudget.session.events import Event
from ctxbudget.testing import check_provider_request

COUNTER = TiktokenCounter()


def bound(provider: Any = None, **kwargs: Any) -> tuple[ContextSession, list[Event]]:
    folder = FolderKnowledgeProvider(example_package_path())
    events: list[Event] = []
    session = ContextSession(
        max_tokens=20_000,
        counter=COUNTER,
        system_prompt="sys",
        cognitive=CognitiveContextSession(folder.binding(), provider or folder),
        **kwargs,
    )
    session.subscribe(events.append, "cognitive_context_bound")
    return session, events


def test_binding_emits_the_bound_event_and_snapshot_keeps_the_binding() -> None:
    folder = FolderKnowledgeProvider(example_package_path())
    seen: list[Event] = []
    session = ContextSession(max_tokens=20_000, counter=COUNTER)
    session.subscribe(seen.append)
    assert seen == []  # unbound sessions say nothing
    session, _ = bound()
    assert [e["type"] for e in session.trace_events()][:1] == ["cognitive_context_bound"]
    assert session.snapshot().binding == folder.binding().to_dict()


def test_each_query_is_announced_and_cited_items_go_through_the_same_budget() -> None:
    session, events = bound()
    items = session.retrieve_knowledge("How are budgets enforced?")
    assert len(events) == 1
    assert items
    assert all(item.trust == "retrieved" and item.source.startswith("a3s-use://citation/") for item in items)
    plan = session.set_context(items)
    session.add_user("How are budgets enforced?")
    request = session.build_request()
    assert plan.included
    assert any("[cognitive citation=sha256:" in m.text for m in request.messages)
    assert check_provider_request(request.messages, max_tokens=20_000, counter=COUNTER) == request.tokens


def test_a_bound_session_rejects_general_retrieval_and_suppresses_memory_recall() -> None:
    with pytest.raises(CognitiveExclusivityError, match="retrieval"):
        bound(providers=["retrieval"])
    with pytest.raises(CognitiveExclusivityError, match="graph"):
        bound(providers=["graph"])
    session, _ = bound(providers=["instructions", "skills"])
    assert session.memory_recall_suppressed
    assert not ContextSession(max_tokens=8_000, providers=["retrieval", "memory"]).memory_recall_suppressed


def test_a_cognitive_provider_in_the_generic_list_is_rejected() -> None:
    folder = FolderKnowledgeProvider(example_package_path())
    with pytest.raises(CognitiveExclusivityError, match="dedicated"):
        ContextSession(providers=[CognitiveContextSession(folder.binding(), folder)])


def test_an_unbound_session_cannot_retrieve_knowledge() -> None:
    with pytest.raises(CognitiveContextError, match="not bound"):
        ContextSession(max_tokens=8_000).retrieve_knowledge("anything")


class Tampering:
    """A provider that answers through the real folder provider, then changes one thing."""

    name = "tampering"

    def __init__(self, change: str) -> None:
        self.inner = FolderKnowledgeProvider(example_package_path())
        self.change = change

    def query(self, request: ContextRequest) -> ContextResponse:
        if self.change == "raise":
            raise ConnectionError("lease service down")
        response = self.inner.query(request)
        data = response.to_dict()
        if self.change == "content":
            data["documents"][0]["content"] += " (edited)"
        elif self.change == "heading":
            data["documents"][0]["citation"]["heading"] = "Substituted"
        elif self.change == "generation":
            data["binding"]["lifecycleGeneration"] += 1
        return ContextResponse.from_dict(data)


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ("raise", ProviderFailure),
        ("content", ResponseDrift),
        ("heading", ResponseDrift),
        ("generation", ResponseDrift),
    ],
)
def test_a_tampered_or_failing_provider_fails_closed(change: str, error: type[Exception]) -> None:
    session, _ = bound(provider=Tampering(change))
    before = session.counted_tokens()
    with pytest.raises(error):
        session.retrieve_knowledge("How are budgets enforced?")
    assert session.counted_tokens() == before  # nothing entered the context


def test_resume_requires_the_identical_binding(tmp_path: Path) -> None:
    session, _ = bound()
    snapshot = session.snapshot().to_json()
    folder = FolderKnowledgeProvider(example_package_path())

    with pytest.raises(MissingProviderError):
        ContextSession.restore(snapshot, counter=COUNTER)
    smaller = folder.binding(BindingLimits(maxResults=2, maxDocumentBytes=6144, maxTotalBytes=6144))
    with pytest.raises(BindingMismatchError, match="maxResults"):
        ContextSession.restore(snapshot, counter=COUNTER, cognitive=CognitiveContextSession(smaller, folder))
    resumed = ContextSession.restore(
        snapshot, counter=COUNTER, cognitive=CognitiveContextSession(folder.binding(), folder)
    )
    assert resumed.retrieve_knowledge("citations")

    unbound = ContextSession(max_tokens=8_000, counter=COUNTER).snapshot().to_json()
    with pytest.raises(UnexpectedBindingError):
        ContextSession.restore(unbound, counter=COUNTER, cognitive=CognitiveContextSession(folder.binding(), folder))
