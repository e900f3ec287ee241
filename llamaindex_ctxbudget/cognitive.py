"""Serve LlamaIndex nodes from an exact cognitive package binding, failing closed.

:class:`CognitiveRetriever` answers every query from one
:class:`~ctxbudget.cognitive.CognitiveContextSession` (one digest-pinned package generation). Any provider failure,
drift or invalid request raises the :class:`~ctxbudget.errors.CognitiveContextError` it is; nothing falls back to
another retriever::

    provider = FolderKnowledgeProvider(example_package_path())
    bound = CognitiveContextSession(provider.binding(), provider)
    engine = RetrieverQueryEngine.from_args(CognitiveRetriever(bound, session_id="s1"), llm=llm)

:class:`CognitiveBindingPostprocessor` does the same inside a pipeline whose retriever is fixed: it replaces the
incoming nodes with the binding's, and refuses (``CognitiveExclusivityError``) nodes that came from anywhere else.
"""

from __future__ import annotations

from typing import Any

from ctxbudget.cognitive import CognitiveContextSession
from ctxbudget.context.items import ContextItem
from ctxbudget.errors import CognitiveExclusivityError, InvalidPolicyError, InvalidRequest
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

__all__ = ["BINDING_METADATA_KEY", "CognitiveBindingPostprocessor", "CognitiveRetriever", "nodes_from_items"]

BINDING_METADATA_KEY = "ctxbudget_binding"
"""Node metadata key holding the capability-snapshot digest of the binding that served the node."""


def _binding_digest(session: CognitiveContextSession) -> str:
    return session.binding.capability_snapshot_digest


def nodes_from_items(items: list[ContextItem], binding_digest: str) -> list[NodeWithScore]:
    """LlamaIndex nodes for cited context items (the citation marker stays in the text), scored by relevance."""
    nodes = []
    for item in items:
        metadata: dict[str, Any] = {
            "source": item.source,
            "type": item.type,
            "citation": item.metadata.get("citation"),
            BINDING_METADATA_KEY: binding_digest,
        }
        node = TextNode(
            id_=item.id,
            text=item.content,
            metadata=metadata,
            excluded_llm_metadata_keys=list(metadata),
            excluded_embed_metadata_keys=list(metadata),
        )
        nodes.append(NodeWithScore(node=node, score=item.relevance))
    return nodes


class CognitiveRetriever(BaseRetriever):
    """Retrieves only from one exact cognitive binding.

    Args:
        session: the bound cognitive session.
        session_id: the conversation id sent with every request.
        k: the most nodes returned, best first (what ``similarity_top_k`` is to a vector retriever); ``None``:
            every document the binding cites.

    Raises:
        CognitiveExclusivityError: ``session`` is not a ``CognitiveContextSession``.
        InvalidPolicyError: ``k`` is not an int >= 1 or ``None``.
    """

    def __init__(
        self, session: CognitiveContextSession, *, session_id: str, k: int | None = None, **kwargs: Any
    ) -> None:
        if not isinstance(session, CognitiveContextSession):
            raise CognitiveExclusivityError(
                f"session: CognitiveRetriever serves only a CognitiveContextSession, got {type(session).__name__}"
            )
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise InvalidPolicyError(f"k: must be an int >= 1 or None, got {k!r}", field="k")
        self._session = session
        self._session_id = session_id
        self.k = k
        super().__init__(**kwargs)

    def _top(self, items: list[ContextItem]) -> list[NodeWithScore]:
        return nodes_from_items(items if self.k is None else items[: self.k], _binding_digest(self._session))

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._top(self._session.retrieve(query_bundle.query_str, session_id=self._session_id))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._top(await self._session.aretrieve(query_bundle.query_str, session_id=self._session_id))


class CognitiveBindingPostprocessor(BaseNodePostprocessor):
    """Replaces a pipeline's nodes with those of one exact cognitive binding; refuses nodes from elsewhere.

    Construct with ``CognitiveBindingPostprocessor(session=bound, session_id="s1")``.
    """

    session_id: str

    _session: CognitiveContextSession = PrivateAttr()

    def __init__(self, *, session: CognitiveContextSession, session_id: str, **data: Any) -> None:
        """See the class docstring."""
        if not isinstance(session, CognitiveContextSession):
            raise CognitiveExclusivityError(
                f"session: expected a CognitiveContextSession, got {type(session).__name__}"
            )
        super().__init__(session_id=session_id, **data)
        self._session = session

    @classmethod
    def class_name(cls) -> str:
        """Name used in LlamaIndex serialization."""
        return "CognitiveBindingPostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        digest = _binding_digest(self._session)
        foreign = [n.node.node_id for n in nodes if n.node.metadata.get(BINDING_METADATA_KEY) != digest]
        if foreign:
            raise CognitiveExclusivityError(
                f"nodes: {len(foreign)} of {len(nodes)} node(s) did not come from the bound cognitive package "
                f"(e.g. {foreign[0]!r}); a bound pipeline must not mix in general retrieval"
            )
        if query_bundle is None or not query_bundle.query_str.strip():
            raise InvalidRequest("query_bundle: a bound cognitive postprocessor needs the query text")
        items = self._session.retrieve(query_bundle.query_str, session_id=self.session_id)
        return nodes_from_items(items, digest)
