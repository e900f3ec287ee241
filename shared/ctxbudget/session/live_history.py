"""A session's live history and everything derived from it, kept up to date in O(changed messages).

:class:`LiveHistory` owns the messages a session holds, their token sizes and total, the tool-call pairing state
(the calls of the latest assistant message still open) and the *sent view*: the history as a strict provider
accepts it (orphaned and duplicate results left out, a synthetic result after every call that was never answered,
the interrupted-reply notice after an aborted reply). Appending a message updates all of it in O(that message);
only replacing the whole history (a compaction commit, a rebuild) costs O(history).

The sent view equals ``repair_tool_pairs(history)`` with :func:`~ctxbudget.session.request.insert_interrupted_notice`
applied when the latest assistant reply was interrupted, message for message; a property test holds it to that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from ..messages._own_ids import with_free_id
from ..messages.message import Message, MessageSequence
from ..messages.toolpairs import own_result
from .request import interrupted_notice

__all__ = ["LiveHistory", "UnsentResult"]


@dataclass(frozen=True, slots=True)
class UnsentResult:
    """A tool result kept in the history that no request carries: it answers no open call."""

    message: Message
    reason: Literal["orphaned_result", "duplicate_result"]  # duplicate: its call was already answered


class LiveHistory:
    """The live history with its sizes, pairing state and sent view, updated incrementally.

    Args:
        count: the token count of one message (the session's counter).
        taken: whether a message the session was given has an id: the synthetic results and the notice take none
            of those ids (nor each other's), :mod:`ctxbudget.messages._own_ids`.

    The lists it hands out (:attr:`messages`, :meth:`view`) are only ever appended to or swapped for new lists, so
    a view taken earlier stays valid (it covers a fixed prefix of a list nobody edits).
    """

    __slots__ = (
        "_adjust",
        "_closed",
        "_count",
        "_diverged",
        "_interrupted",
        "_messages",
        "_notice_at",
        "_open",
        "_open_tokens",
        "_own",
        "_run",
        "_run_at",
        "_sent",
        "_sent_tokens",
        "_sizes",
        "_taken",
        "_tokens",
        "_unpriced",
    )

    def __init__(self, count: Callable[[Message], int], taken: Callable[[str], bool] = lambda _id: False) -> None:
        self._count = count
        self._taken = taken
        self._clear()

    def _clear(self) -> None:
        self._messages: list[Message] = []
        self._sizes: list[int] = []
        self._tokens = 0
        self._sent: list[Message] = []  # the sent view up to the latest assistant run (synthetic results included)
        self._sent_tokens = 0
        # What the sent view adds to (or, for a result left out, takes from) each message's size, by index: a
        # synthetic result counts with the call that made it, so a span archived takes its additions with it.
        self._adjust: dict[int, int] = {}
        self._diverged = False  # a result was left out or a synthetic one added: _sent is not _messages
        # Calls of the latest assistant message still unanswered, in call order, each with the synthetic result
        # (and its size) a request sends in its place: built when first needed, then kept, not rebuilt on every
        # measurement while the calls are open.
        self._open: dict[str, tuple[Message, int] | None] = {}
        self._open_tokens = 0  # the sizes of the open calls' synthetic results built so far
        self._unpriced = 0  # the open calls whose synthetic result is not built yet
        self._run: tuple[str, ...] = ()  # every call the latest assistant message made
        self._run_at = -1  # the index of the latest assistant message
        self._closed: set[str] = set()  # calls of the latest run already answered
        self._interrupted: Message | None = None  # the latest assistant message, when it was an interrupted reply
        self._notice_at: int | None = None  # where in _sent its notice goes, once its run of results is closed
        self._own: dict[str, Message] = {}  # the synthetic results built, by id, in the order they were built

    # -- reading -----------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages)

    @property
    def messages(self) -> list[Message]:
        """The live messages (the list itself: read it, never edit it)."""
        return self._messages

    @property
    def sizes(self) -> list[int]:
        """Token size of each live message (the list itself: read it, never edit it)."""
        return self._sizes

    @property
    def tokens(self) -> int:
        """Total tokens of the live messages."""
        return self._tokens

    @property
    def open_calls(self) -> tuple[str, ...]:
        """Call ids of the latest assistant message still unanswered, in call order."""
        return tuple(self._open)

    @property
    def run_calls(self) -> tuple[str, ...]:
        """Every call id the latest assistant message made, answered or not."""
        return self._run

    @property
    def interrupted(self) -> bool:
        """The latest assistant message is an interrupted reply (requests carry a notice after it)."""
        return self._interrupted is not None

    @property
    def needs_repair(self) -> bool:
        """The sent view differs from the history (a result left out, a synthetic result or a notice added)."""
        return self._diverged or self._interrupted is not None or bool(self._open)

    def sent_tokens(self, notice_tokens: int) -> int:
        """Tokens of the sent view; ``notice_tokens`` is what the interrupted-reply notice costs."""
        self._price_open()  # the open calls' synthetic results, kept as a total as results arrive: no sum over them
        return self._sent_tokens + self._open_tokens + (notice_tokens if self._interrupted is not None else 0)

    def sent_sizes(self, notice_tokens: int) -> list[int]:
        """Each message's size in the sent view: what it costs plus the synthetic results and notice it brings.

        A result left out counts zero. The sum is :meth:`sent_tokens`, so a compaction that keeps a span keeps its
        exact cost. ``notice_tokens`` is what the interrupted-reply notice costs.
        """
        sizes = list(self._sizes)
        for index, change in self._adjust.items():
            sizes[index] += change
        if self._run_at >= 0:
            sizes[self._run_at] += sum(size for _, size in self._synthetic_results())
            if self._interrupted is not None:
                sizes[self._run_at] += notice_tokens
        return sizes

    def view(self, prefix: Sequence[Message]) -> MessageSequence:
        """``prefix`` then the sent view, zero-copy: O(prefix + open calls), whatever the history's length."""
        if not self.needs_repair:
            return MessageSequence(prefix, self._messages)  # the same list: adapters reuse their conversions
        base = self._sent if self._diverged else self._messages  # equal lists until a result is left out
        tail = [synthetic for synthetic, _ in self._synthetic_results()]
        notice = self._notice()
        if notice is None:
            return MessageSequence(prefix, base, tail=tail)
        if self._notice_at is None:  # the interrupted run is still the latest: the notice closes the request
            return MessageSequence(prefix, base, tail=[*tail, notice])
        split = self._notice_at
        return MessageSequence(prefix, base, split, tail=[notice, *base[split:]])

    def _notice(self) -> Message | None:
        """The interrupted-reply notice a request carries, or ``None``; its id is none a message of the request has."""
        if self._interrupted is None:
            return None
        return with_free_id(interrupted_notice(self._interrupted), self._taken, self._own.__contains__)

    # -- changing ----------------------------------------------------------------------------------------------
    def append(self, message: Message, size: int | None = None) -> UnsentResult | None:
        """Append ``message`` (its size counted unless given); return what says so when no request will carry it."""
        if size is None:
            size = self._count(message)
        self._messages.append(message)
        self._sizes.append(size)
        self._tokens += size
        if message.role == "tool":
            return self._add_result(message, size)
        self._close_run()
        self._run = ()
        if message.role == "assistant":
            self._run_at = len(self._messages) - 1
            self._interrupted = message if message.state == "interrupted" else None
            self._notice_at = None
            self._run = tuple(call.id for call in message.tool_calls)
            self._open = dict.fromkeys(self._run)
            self._open_tokens, self._unpriced = 0, len(self._open)
        self._send(message, size)
        return None

    def counted(self) -> dict[int, tuple[Message, int]]:
        """Each live message with its count, by identity (a compaction keeps most of them: not counted again)."""
        return {id(message): (message, size) for message, size in zip(self._messages, self._sizes, strict=True)}

    def replace(self, messages: Sequence[Message], sizes: Sequence[int] | None = None) -> None:
        """Swap in a new history (new lists: views taken earlier keep reading the old ones)."""
        self._clear()
        for index, message in enumerate(messages):
            self.append(message, None if sizes is None else sizes[index])

    def rename_own(self) -> None:
        """Name the synthetic results again, none with an id a message given since has (rare: O(history)).

        The session calls it when a message arrives with an id of the form of theirs (``ctxbudget-...``). The sent
        view is a new list (views taken earlier keep reading the old one).
        """
        built, self._own = self._own, {}
        renamed = {id(message): self._own_result(message.tool_call_id or "") for message in built.values()}
        if self._diverged:
            self._sent = [renamed.get(id(message), message) for message in self._sent]
        for call_id, known in self._open.items():  # replacing a value while iterating is safe: the keys stay
            if known is not None:
                self._open[call_id] = (renamed.get(id(known[0]), known[0]), known[1])

    def _own_result(self, call_id: str) -> Message:
        """The synthetic result of the call ``call_id``, with an id no other message of the request has."""
        result = own_result(call_id, lambda message_id: self._taken(message_id) or message_id in self._own)
        self._own[result.id] = result
        return result

    def _add_result(self, message: Message, size: int) -> UnsentResult | None:
        call_id = message.tool_call_id or ""
        if call_id in self._open:
            known = self._open.pop(call_id)
            if known is None:
                self._unpriced -= 1
            else:
                self._open_tokens -= known[1]
            self._closed.add(call_id)
            self._send(message, size)
            return None
        self._diverged = True
        self._adjust[len(self._messages) - 1] = -size
        return UnsentResult(message, "duplicate_result" if call_id in self._closed else "orphaned_result")

    def _close_run(self) -> None:
        """A non-tool message ends the latest run: unanswered calls get their synthetic results, then the notice."""
        for synthetic, size in self._synthetic_results() if self._open else ():
            self._diverged = True
            self._adjust[self._run_at] = self._adjust.get(self._run_at, 0) + size
            self._send(synthetic, size)
        self._open = {}
        self._open_tokens = self._unpriced = 0
        self._closed = set()
        if self._interrupted is not None and self._notice_at is None:
            self._notice_at = len(self._sent)

    def _price_open(self) -> None:
        """Build the synthetic result (and its size) of each open call not built yet, once per call."""
        if not self._unpriced:
            return
        for call_id, known in self._open.items():
            if known is None:  # replacing a value while iterating is safe: the keys do not change
                synthetic = self._own_result(call_id)
                size = self._count(synthetic)
                self._open[call_id] = (synthetic, size)
                self._open_tokens += size
        self._unpriced = 0

    def _synthetic_results(self) -> list[tuple[Message, int]]:
        """The synthetic result (and its size) of each open call, in call order."""
        self._price_open()
        return [known for known in self._open.values() if known is not None]

    def _send(self, message: Message, size: int) -> None:
        self._sent.append(message)
        self._sent_tokens += size
