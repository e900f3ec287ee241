"""Every exception ctxbudget raises, as one tree.

Caller mistakes and runtime failures live on separate branches, so ``except UsageError`` catches exactly the
"you passed something wrong" cases. Every message names the offending field and carries the numbers::

    CtxBudgetError
    ├── UsageError (ValueError)            the caller gave us something invalid
    │   ├── InvalidFragmentError           a fragment field is malformed (empty id, unknown role, ...)
    │   │   └── DuplicateFragmentError     two fragments share an id
    │   ├── FragmentLimitError             a fragment is over its own max_chars / max_tokens
    │   ├── BudgetExceededError            the assembled total is over the budget
    │   │   └── SystemPromptTooLargeError  a session's system prompt and tools alone exceed its window
    │   ├── PlanAuditError                 a candidate plan changed a fragment that is not mutable
    │   ├── InvalidPolicyError             a budget, threshold or policy value is out of range
    │   ├── UnknownModelError              a model name the registry cannot resolve
    │   ├── InvalidMessageError            a malformed message or tool-call sequence
    │   ├── TranscriptError                a transcript file that cannot be read (line and field named)
    │   ├── SnapshotFormatError            snapshot JSON that does not validate
    │   └── SourceError                    an instruction file or skill that cannot be read, parsed or found
    ├── ContextOverflowError               the hard stop: the request would not fit the window
    ├── CompactionError                    compaction could not bring the history under its target
    │   └── SummarizerError                a summarizer raised, timed out, was cancelled or returned blank
    ├── ArchiveError (KeyError)            an archive handle that does not exist
    ├── SnapshotError                      persisting or loading a session failed
    │   ├── SnapshotConflictError          a stale writer: the stored version moved on
    │   ├── SnapshotStoreError             the backend (SQLite, Redis, ...) failed
    │   └── SnapshotIntegrityError         a stored snapshot or archive entry does not match its digest
    ├── EncodingDataError                  a bundled tokenizer file is missing or corrupt
    └── CognitiveContextError              exact cognitive package bindings; all fail closed
        ├── InvalidBinding
        ├── InvalidLimits
        ├── InvalidRequest
        ├── ProviderFailure
        ├── ResponseDrift
        ├── CognitiveExclusivityError      a bound session was given a general retrieval/graph provider
        └── BindingResumeError             restore rules for a snapshot's binding
            ├── MissingProviderError       the snapshot has a binding, no provider was re-injected
            ├── BindingMismatchError       the re-injected provider's binding differs
            └── UnexpectedBindingError     a binding was added to a session that never had one
"""

from __future__ import annotations

__all__ = [
    "ArchiveError",
    "BindingMismatchError",
    "BindingResumeError",
    "BudgetExceededError",
    "CognitiveContextError",
    "CognitiveExclusivityError",
    "CompactionError",
    "ContextOverflowError",
    "CtxBudgetError",
    "DuplicateFragmentError",
    "EncodingDataError",
    "FragmentLimitError",
    "InvalidBinding",
    "InvalidFragmentError",
    "InvalidLimits",
    "InvalidMessageError",
    "InvalidPolicyError",
    "InvalidRequest",
    "MissingProviderError",
    "PlanAuditError",
    "ProviderFailure",
    "ResponseDrift",
    "SnapshotConflictError",
    "SnapshotError",
    "SnapshotFormatError",
    "SnapshotIntegrityError",
    "SnapshotStoreError",
    "SourceError",
    "SummarizerError",
    "SystemPromptTooLargeError",
    "TranscriptError",
    "UnexpectedBindingError",
    "UnknownModelError",
    "UsageError",
]


class CtxBudgetError(Exception):
    """Base class of every error ctxbudget raises."""


class UsageError(CtxBudgetError, ValueError):
    """The caller gave ctxbudget something invalid.

    Attributes:
        field: the name of the offending field or argument, when there is one.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class InvalidFragmentError(UsageError):
    """A fragment field is malformed: empty id, unknown role, bad limits."""


class DuplicateFragmentError(InvalidFragmentError):
    """Two fragments in one assembly share an id."""


class FragmentLimitError(UsageError):
    """A fragment is over its own ``max_chars`` or ``max_tokens``; it is never truncated silently."""


class BudgetExceededError(UsageError):
    """The assembled total is over the budget; nothing is truncated silently."""


class SystemPromptTooLargeError(BudgetExceededError):
    """The system prompt (with the tool schemas every request carries) alone does not fit the window.

    No request could ever be built, so the session refuses it up front instead of failing on every turn.

    Attributes:
        prompt_tokens: tokens of the system prompt, the tool schemas and the reply priming together.
        max_tokens: the window they do not fit.
    """

    def __init__(self, message: str, *, field: str | None = None, prompt_tokens: int, max_tokens: int) -> None:
        super().__init__(message, field=field)
        self.prompt_tokens = prompt_tokens
        self.max_tokens = max_tokens


class PlanAuditError(UsageError):
    """A candidate plan dropped or changed a fragment that was not declared mutable."""


class InvalidPolicyError(UsageError):
    """A budget, threshold or policy value is out of its documented range."""


class UnknownModelError(UsageError):
    """The model registry cannot resolve a model name, and no window was given.

    Attributes:
        model: the name that was looked up (``None`` when the error is about something else, e.g. an encoding).
        suggestions: the nearest registered names, best first (may be empty).
    """

    def __init__(
        self, message: str, *, field: str | None = None, model: str | None = None, suggestions: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message, field=field)
        self.model = model
        self.suggestions = suggestions


class InvalidMessageError(UsageError):
    """A malformed message or an invalid tool-call sequence."""


class TranscriptError(UsageError):
    """A transcript file cannot be read; the message names the line and the field."""


class SnapshotFormatError(UsageError):
    """Snapshot JSON that does not validate against the snapshot schema."""


class SourceError(UsageError):
    """A project instruction file or skill that cannot be read, parsed or found; the path or name is named."""


class ContextOverflowError(CtxBudgetError):
    """The hard stop: building this request would exceed the window's hard-stop fraction.

    Attributes:
        used_tokens: tokens the request would use.
        max_tokens: the window size.
        hard_stop_tokens: the limit that was crossed.
    """

    def __init__(self, message: str, *, used_tokens: int, max_tokens: int, hard_stop_tokens: int) -> None:
        super().__init__(message)
        self.used_tokens = used_tokens
        self.max_tokens = max_tokens
        self.hard_stop_tokens = hard_stop_tokens


class CompactionError(CtxBudgetError):
    """Compaction could not bring the history under its target; the history is unchanged."""


class SummarizerError(CompactionError):
    """A summarizer raised, timed out, was cancelled or returned a blank summary."""


class ArchiveError(CtxBudgetError, KeyError):
    """An archive handle that does not exist."""

    def __str__(self) -> str:
        # KeyError quotes its argument; we want the plain message.
        return str(self.args[0]) if self.args else ""


class SnapshotError(CtxBudgetError):
    """Persisting or loading a session failed."""


class SnapshotConflictError(SnapshotError):
    """A stale writer: the stored version moved on since this writer read it.

    Attributes:
        expected_version: the version the writer based its change on.
        actual_version: the version in the store.
    """

    def __init__(self, message: str, *, expected_version: int, actual_version: int) -> None:
        super().__init__(message)
        self.expected_version = expected_version
        self.actual_version = actual_version


class SnapshotStoreError(SnapshotError):
    """The storage backend failed (read or write)."""


class SnapshotIntegrityError(SnapshotError):
    """A stored snapshot or archive entry does not match the content digest written with it.

    It was edited or corrupted after it was written, and is refused rather than restored.

    Attributes:
        where: what was checked: ``"snapshot of session 's1'"`` or an archive handle.
        expected: the digest stored with the content (``"sha256:..."``).
        actual: the digest of the content as it was read.
    """

    def __init__(self, message: str, *, where: str, expected: str, actual: str) -> None:
        super().__init__(message)
        self.where = where
        self.expected = expected
        self.actual = actual


class EncodingDataError(CtxBudgetError):
    """A bundled tokenizer file is missing or does not match its published hash."""


class CognitiveContextError(CtxBudgetError):
    """Base of the exact cognitive package binding errors; every one fails closed."""


class InvalidBinding(CognitiveContextError):
    """A package or knowledge binding violates the contract."""


class InvalidLimits(CognitiveContextError):
    """Prompt-injection limits are zero or above their caps."""


class InvalidRequest(CognitiveContextError):
    """A context request violates the contract (session id, query, digest)."""


class ProviderFailure(CognitiveContextError):
    """The knowledge provider raised, timed out, or returned something that is not a response."""


class ResponseDrift(CognitiveContextError):
    """A response does not match its request, its binding, or its own digests."""


class CognitiveExclusivityError(CognitiveContextError):
    """A bound session was configured with a general retrieval or graph provider."""


class BindingResumeError(CognitiveContextError):
    """A snapshot's binding and the re-injected provider do not agree."""


class MissingProviderError(BindingResumeError):
    """The snapshot holds a binding, but no provider was re-injected on restore."""


class BindingMismatchError(BindingResumeError):
    """The re-injected provider's binding differs from the snapshot's."""


class UnexpectedBindingError(BindingResumeError):
    """A binding was supplied on restore for a session that was never bound."""
