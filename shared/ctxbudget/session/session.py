"""``ContextSession``: a conversation that always knows how full the window is and stays inside it.

Adding a message costs O(that message): counts are cached by content and the running total is kept
incrementally. Before each request the session compacts when over threshold (see :mod:`ctxbudget.compaction.tiers`),
refuses past the hard stop with a typed :class:`~ctxbudget.errors.ContextOverflowError`, and returns a request
that every strict provider accepts. Nothing is ever lost: every original that leaves the prompt is in
:attr:`ContextSession.archive`, and :meth:`ContextSession.originals` reconstructs them all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import ValidationError

from ..archive.search import ArchiveHit
from ..archive.store import Archive
from ..cognitive import CognitiveContextSession, PackageBinding, check_resume
from ..compaction.policy import CompactionPolicy
from ..compaction.summarize import AsyncSummarizer, Summarizer
from ..context.items import ContextItem
from ..context.planner import PlannerConfig, PlanResult, plan_context
from ..errors import (
    CognitiveContextError,
    ContextOverflowError,
    InvalidMessageError,
    InvalidPolicyError,
    SnapshotFormatError,
    UsageError,
)
from ..messages._validation import to_usage_error
from ..messages.message import Message
from ..messages.registry import DEFAULT_REGISTRY, ModelRegistry
from ..messages.tokens import TokenCounter
from ..providers.usage import usage_figures
from . import _compaction, _snapshots
from ._adding import MessageIntake
from ._args import check_context, check_text, check_type
from ._core import emit_update
from .events import ContextCompacted
from .request import BuiltRequest
from .snapshot import SessionSnapshot

__all__ = ["ContextSession"]


class ContextSession(MessageIntake):
    """A framework-neutral conversation held inside a token budget.

    Args:
        model: model name for the window and counter (see :mod:`ctxbudget.messages.registry`; ``openai:gpt-4o``,
            ``openai/gpt-4o`` and Bedrock ids are accepted).
        max_tokens: the prompt budget; overrides the model's window minus its output reserve, and may not exceed
            the model's context window. One of ``model`` and ``max_tokens`` is required: there is no default window.
        counter: token counter; default: exact for OpenAI models, a calibrated estimate for others (and for a model
            the registry lacks, which then needs ``max_tokens``), exact ``o200k_base`` when no model is named.
        system_prompt: always sent first, never compacted; with ``tools`` it must fit ``max_tokens``.
        tools: tool schemas exposed to the model (counted in every request).
        policy: compaction policy.
        summarizer: sync or async summarizer; default :class:`ExtractiveSummarizer` (offline).
        session_id: stable id (default: random).
        compact_instructions: project "Compact Instructions" added to every compaction prompt.
        registry: model registry for ``model`` look-ups.
    """

    _last_built: int = 0  # our count of the last request built (what its provider-reported usage calibrates)

    # -- usage ---------------------------------------------------------------------------------------------------------
    def record_usage(self, prompt_tokens: int | object, completion_tokens: int | None = None) -> None:
        """Record the provider-reported usage of the last built request (calibrates the tracker).

        ``prompt_tokens`` is the billed prompt, or the SDK's usage object (or the response holding it): OpenAI's
        ``CompletionUsage``/``ResponseUsage``, Anthropic's ``Usage`` (input plus cache reads and writes); see
        :func:`ctxbudget.providers.usage_figures`.
        """
        if not isinstance(prompt_tokens, (int, float, str, bytes)) and prompt_tokens is not None:
            figures = usage_figures(prompt_tokens)
            prompt_tokens = figures.prompt_tokens
            completion_tokens = figures.completion_tokens if completion_tokens is None else completion_tokens
        if not isinstance(prompt_tokens, int) or isinstance(prompt_tokens, bool) or prompt_tokens < 0:
            raise InvalidPolicyError(
                f"prompt_tokens: must be an int >= 0, got {prompt_tokens!r}", field="prompt_tokens"
            )
        if completion_tokens is not None and (
            not isinstance(completion_tokens, int) or isinstance(completion_tokens, bool) or completion_tokens < 0
        ):
            raise InvalidPolicyError(
                f"completion_tokens: must be an int >= 0, got {completion_tokens!r}", field="completion_tokens"
            )
        with self.conversation.lock:
            self.tracker.report(counted=self._last_built or self.counted_tokens(), reported=prompt_tokens)
            emit_update(self)

    def set_usage_floor(self, tokens: int) -> None:
        """A caller-supplied minimum for used tokens (e.g. overhead a framework adds that we cannot see)."""
        with self.conversation.lock:
            self.tracker.set_floor(tokens)
            emit_update(self)

    # -- building requests ---------------------------------------------------------------------------------------------
    def _over(self, fraction: float) -> bool:
        return self.tracker.used(self.counted_tokens()) >= fraction * self.max_tokens

    def _finish_request(
        self, compaction: ContextCompacted | None, counted: int, used: int | None = None
    ) -> BuiltRequest:
        if used is None:
            used = self.tracker.used(counted)
        hard = math.floor(self.policy.hard_stop * self.max_tokens)
        if used > hard:
            raise ContextOverflowError(
                f"request: {used:,} tokens is over the hard stop of {hard:,} ({self.policy.hard_stop:.0%} of the "
                f"{self.max_tokens:,}-token window); compaction could not make room. Reduce the system prompt, "
                "tools or pinned content, raise max_tokens, or lower keep_recent_messages.",
                used_tokens=used,
                max_tokens=self.max_tokens,
                hard_stop_tokens=hard,
            )
        self._last_built = counted
        return BuiltRequest(
            messages=self.conversation.request_messages(),
            tools=self.conversation.tools,
            tokens=counted,
            used_tokens=used,
            max_tokens=self.max_tokens,
            compaction=compaction,
        )

    def _set_reserve(self, reserve_tokens: int) -> None:
        if isinstance(reserve_tokens, bool) or not isinstance(reserve_tokens, int) or reserve_tokens < 0:
            raise InvalidPolicyError(
                f"reserve_tokens: must be an int >= 0, got {reserve_tokens!r}", field="reserve_tokens"
            )
        if self.conversation.set_reserve(reserve_tokens):
            emit_update(self)

    def build_request(self, *, reserve_tokens: int = 0) -> BuiltRequest:
        """Compact if over threshold, enforce the hard stop, and return the request to send.

        Args:
            reserve_tokens: tokens the caller adds around this request that the session cannot see (a framework's
                own prompt template, retrieved context it inserts itself). They count toward the threshold, the
                compaction target and the hard stop, and stay in :attr:`state` until the next request.
        """
        with self.conversation.lock:
            self._set_reserve(reserve_tokens)
            counted = self.counted_tokens()
            used = self.tracker.used(counted)
            if self.policy.auto and used >= self.policy.threshold * self.max_tokens:
                compaction = _compaction.compact_sync(self, "auto", None, force=False, raise_errors=False)
                if compaction is not None:
                    emit_update(self)
                return self._finish_request(compaction, self.counted_tokens())
            return self._finish_request(None, counted, used)

    async def abuild_request(self, *, reserve_tokens: int = 0) -> BuiltRequest:
        """Async :meth:`build_request` (uses the summarizer's ``asummarize`` when it has one)."""
        with self.conversation.lock:
            self._set_reserve(reserve_tokens)
        compaction = None
        if self.policy.auto and self._over(self.policy.threshold):
            compaction = await _compaction.compact_async(self, "auto", None, force=False, raise_errors=False)
            if compaction is not None:
                with self.conversation.lock:
                    emit_update(self)
        with self.conversation.lock:
            return self._finish_request(compaction, self.counted_tokens())

    # -- compaction ----------------------------------------------------------------------------------------------------
    def compact(self, instructions: str | None = None) -> ContextCompacted:
        """Compact now (manual trigger), summarizing the older safe prefix; ``instructions`` focus the summary."""
        if instructions is not None:
            check_text("instructions", instructions, InvalidMessageError)
        with self.conversation.lock:
            result = _compaction.compact_sync(self, "manual", instructions, force=True, raise_errors=True)
            emit_update(self)
            assert result is not None
            return result

    async def acompact(self, instructions: str | None = None) -> ContextCompacted:
        """Async :meth:`compact`."""
        if instructions is not None:
            check_text("instructions", instructions, InvalidMessageError)
        result = await _compaction.compact_async(self, "manual", instructions, force=True, raise_errors=True)
        with self.conversation.lock:
            emit_update(self)
        assert result is not None
        return result

    # -- cognitive bindings and planned context ------------------------------------------------------------------------
    def retrieve_knowledge(self, query: str) -> list[ContextItem]:
        """Query the bound cognitive package for ``query``; fails closed (no fallback to other retrieval).

        Raises:
            CognitiveContextError: the session is not bound, or the provider/response broke the contract.
        """
        if self.cognitive is None:
            raise CognitiveContextError("retrieve_knowledge: this session is not bound to a cognitive package")
        return self.cognitive.retrieve(query, session_id=self.session_id)

    async def aretrieve_knowledge(self, query: str) -> list[ContextItem]:
        """Async :meth:`retrieve_knowledge`."""
        if self.cognitive is None:
            raise CognitiveContextError("retrieve_knowledge: this session is not bound to a cognitive package")
        return await self.cognitive.aretrieve(query, session_id=self.session_id)

    def set_context(self, items: Sequence[ContextItem], config: PlannerConfig | None = None) -> PlanResult:
        """Plan ``items`` (rank, dedupe, budget) and send the result with every request until changed.

        The rendered context is one user-role message of escaped ``<context>`` envelopes after the system prompt,
        summary and pinned content: it is data, counted in the same budget as everything else. Pass no items to
        clear it. Returns the plan (what was included, what was dropped and why).
        """
        items = check_context(items, config)
        plan = plan_context(items, config or PlannerConfig.balanced(), counter=self.counter)
        with self.conversation.lock:
            self.last_plan = plan
            self.conversation.set_context(
                Message(
                    role="user",
                    content=plan.rendered,
                    id=self.conversation.ids.own("context"),
                    metadata={"ctxbudget": "context"},
                )
                if plan.rendered
                else None
            )
            emit_update(self)
        return plan

    # -- snapshots -----------------------------------------------------------------------------------------------------
    def snapshot(self) -> SessionSnapshot:
        """A resumable, versioned copy of this session (see :mod:`ctxbudget.session.snapshot`).

        Raises:
            SnapshotFormatError: a message built past validation (``Message.model_construct``) does not validate.
        """
        with self.conversation.lock:
            try:
                return _snapshots.take(self)
            except ValidationError as exc:
                raise to_usage_error(exc, SnapshotFormatError, f"snapshot of session {self.session_id!r}") from None

    @classmethod
    def restore(
        cls,
        snapshot: SessionSnapshot | str | bytes,
        *,
        counter: TokenCounter | None = None,
        summarizer: Summarizer | AsyncSummarizer | None = None,
        registry: ModelRegistry = DEFAULT_REGISTRY,
        cognitive: CognitiveContextSession | None = None,
        providers: Sequence[object] = (),
        archive: Archive | None = None,
    ) -> ContextSession:
        """Rebuild a session from :meth:`snapshot` output (a model or its JSON).

        A bound snapshot needs ``cognitive`` re-injected with the identical binding; see
        :func:`ctxbudget.cognitive.check_resume` for the errors a missing, different or new binding raises.
        A snapshot whose archive is kept in a store (``archive_in_store``) needs that ``archive`` passed (a
        :class:`~ctxbudget.shared_session.session.SharedSession` does), else it is refused
        (:class:`SnapshotFormatError`).
        """
        snap = snapshot if isinstance(snapshot, SessionSnapshot) else SessionSnapshot.from_json(snapshot)
        stored = PackageBinding.from_dict(snap.binding) if snap.binding is not None else None
        check_resume(stored, cognitive.binding if cognitive is not None else None)
        try:
            policy = CompactionPolicy(**snap.policy)
        except InvalidPolicyError as exc:
            raise SnapshotFormatError(f"snapshot.policy.{exc.field}: {exc}", field=f"policy.{exc.field}") from exc
        session = cls(
            model=snap.model,
            max_tokens=snap.max_tokens,
            counter=counter,
            system_prompt=snap.system_prompt,
            tools=snap.tools,
            policy=policy,
            summarizer=summarizer,
            session_id=snap.session_id,
            compact_instructions=snap.compact_instructions,
            registry=registry,
            cognitive=cognitive,
            providers=providers,
        )
        session.model = snap.model
        _snapshots.apply(session, snap, archive=archive)
        return session

    # -- reconstruction ------------------------------------------------------------------------------------------------
    def originals(self) -> list[Message]:
        """Every message ever added, as it was given, in the order it was added (archive + live history)."""
        with self.conversation.lock:
            return self.conversation.originals()

    def read_archived(self, handle: str, *, offset: int = 0, limit: int | None = 20_000) -> str:
        """Read an archived original back (what a model's read-back tool calls)."""
        check_type("handle", handle, str, UsageError)
        return self.archive.read(handle, offset=offset, limit=limit)

    def search_archive(self, query: str, k: int = 5) -> list[ArchiveHit]:
        """Rank every archived original for ``query``, best first: what a model's search tool calls.

        One hit per archived message (BM25 over identifier-aware tokens, see :mod:`ctxbudget.archive.search`); pass a
        hit's handle to :meth:`read_archived` for the full original.

        Raises:
            InvalidPolicyError: ``query`` is not a non-empty str, or ``k`` is not an int in 1..100.
        """
        return self.archive.search(query, k)
