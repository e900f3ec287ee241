"""Session rules: exclusivity at configuration time, and whole-binding equality on resume."""

from __future__ import annotations

from typing import Any

import pytest
from ctxbudget.cognitive import (
    BindingLimits,
    CognitiveContextSession,
    FolderKnowledgeProvider,
    check_providers,
    check_resume,
    example_package_path,
    provider_kind,
)
from ctxbudget.errors import (
    BindingMismatchError,
    CognitiveExclusivityError,
    MissingProviderError,
    UnexpectedBindingError,
)

from .helpers import StaticProvider, make_binding


class Kinded:
    def __init__(self, kind: str, name: str = "p") -> None:
        self.kind = kind
        self.name = name


@pytest.mark.parametrize("kinds", [[], ["instructions", "skills"], ["memory"], [Kinded("skills")]])
def test_a_bound_session_keeps_instructions_and_skills_and_suppresses_memory_recall(kinds: list[Any]) -> None:
    assert check_providers(kinds, bound=True) is True


@pytest.mark.parametrize("kinds", [["retrieval", "graph", "memory", "instructions", "skills", Kinded("x")]])
def test_an_unbound_session_accepts_general_providers_and_recalls_memory(kinds: list[Any]) -> None:
    assert check_providers(kinds, bound=False) is False


@pytest.mark.parametrize("provider", ["retrieval", "graph", Kinded("retrieval", "rag"), Kinded("graph")])
def test_a_bound_session_rejects_general_retrieval_and_graph_providers(provider: Any) -> None:
    with pytest.raises(CognitiveExclusivityError, match="queries only its provider; a general"):
        check_providers(["skills", provider], bound=True)


@pytest.mark.parametrize("provider", ["skill", Kinded("vector-store"), object()])
def test_a_bound_session_rejects_providers_of_unknown_kind(provider: Any) -> None:
    with pytest.raises(CognitiveExclusivityError, match="unknown provider kind"):
        check_providers([provider], bound=True)


@pytest.mark.parametrize("bound", [True, False])
def test_a_cognitive_provider_in_the_generic_list_is_rejected(bound: bool) -> None:
    folder = FolderKnowledgeProvider(example_package_path())
    cognitive = CognitiveContextSession(folder.binding(), folder)
    for provider in ("cognitive", folder, cognitive):
        with pytest.raises(CognitiveExclusivityError, match="binding could not be persisted"):
            check_providers([provider], bound=bound)


def test_provider_kind() -> None:
    assert provider_kind("memory") == "memory"
    assert provider_kind(Kinded("graph")) == "graph"
    assert provider_kind(StaticProvider()) is None
    assert provider_kind("nonsense") is None


def test_resume_with_the_same_binding_or_none_at_all_is_accepted() -> None:
    check_resume(make_binding(), make_binding())
    check_resume(None, None)


def test_resume_without_a_provider_for_a_bound_snapshot_is_rejected() -> None:
    with pytest.raises(MissingProviderError, match=r"contra-sense/handbook@0.1.0 generation 7"):
        check_resume(make_binding(), None)


def test_a_binding_cannot_be_added_on_resume() -> None:
    with pytest.raises(UnexpectedBindingError, match="never bound"):
        check_resume(None, make_binding())


@pytest.mark.parametrize(
    ("injected", "fragment"),
    [
        (make_binding(lifecycle_generation=8), "lifecycleGeneration (7 -> 8)"),
        (make_binding(package_version="0.2.0"), "packageVersion ('0.1.0' -> '0.2.0')"),
        (make_binding(limits=BindingLimits(max_total_bytes=2048)), "limits.maxTotalBytes (6144 -> 2048)"),
    ],
)
def test_a_different_binding_on_resume_is_rejected_naming_what_changed(injected: Any, fragment: str) -> None:
    with pytest.raises(BindingMismatchError) as caught:
        check_resume(make_binding(), injected)
    assert fragment in str(caught.value)
