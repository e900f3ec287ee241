"""A shared session is never wedged by what its log holds, and a lost append reply is safe to retry.

Records that cannot be replayed (malformed, from another version, holding text that cannot be serialized) are
appended to the log by hand, between valid messages, on every backend. Every load must skip them, count them and
warn about them, replay every valid message, and compaction must keep working (and trim them).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from ctxbudget.errors import InvalidMessageError, SnapshotFormatError, SnapshotStoreError
from ctxbudget.messages import Message
from ctxbudget.shared_session import LoadedSession, SharedSession
from ctxbudget.shared_session.session import LOG_RECORD_SCHEMA
from ctxbudget.testing import ScriptedSummarizer

from .conftest import StoreFactory
from .faults import COUNTER, FaultyStore, assert_valid_request, assert_whole, conversation, make_session


def _record(message: Any) -> str:
    return json.dumps({"schema": LOG_RECORD_SCHEMA, "message": message})  # ASCII: a surrogate is \u-escaped


BAD_RECORDS = [
    "[1]",
    '{"schema": "ctxbudget.log.v99", "message": {"role": "user", "content": "from the future"}}',
    '{"schema": "ctxbudget.log.v1"}',
    _record("just a string"),
    _record({"role": "root", "content": "no such role"}),
    _record({"role": "user", "content": "x", "no_such_field": 1}),
    _record({"role": "user", "content": "lone \ud800 surrogate", "id": "bad-content"}),
    _record({"role": "user", "content": "fine", "metadata": {"note": "lone \udc00"}, "id": "bad-metadata"}),
]


def _unserializable(**changes: Any) -> Message:
    """A Message holding a lone surrogate, built past validation (as a bug or a future field might)."""
    valid = Message(role="user", content="fine", id="sneaky")
    return Message.model_construct(**{**dict(valid), **changes})


def _handle(store_factory: StoreFactory) -> SharedSession:
    store = store_factory()
    SharedSession.create(store, make_session(ScriptedSummarizer()))
    return SharedSession(store, "faults", counter=COUNTER, summarizer=ScriptedSummarizer())


def test_records_that_cannot_be_replayed_are_skipped_counted_and_reported(
    store_factory: StoreFactory, caplog: pytest.LogCaptureFixture
) -> None:
    shared = _handle(store_factory)
    added = conversation(6, tag="v")
    bad_seqs: list[int] = []
    for index, bad in enumerate(BAD_RECORDS):  # interleaved: valid, bad, valid, bad, ...
        shared.add(*added[index * 3 : index * 3 + 3])
        bad_seqs += shared.store.append("faults", [bad])
    shared.add(*added[len(BAD_RECORDS) * 3 :])

    with caplog.at_level(logging.WARNING, logger="ctxbudget.shared_session.session"):
        loaded = shared.load()

    assert (loaded.replayed, loaded.skipped, loaded.invalid) == (len(added), 0, len(BAD_RECORDS))
    assert_whole(loaded.session, added)
    assert shared.stats.skipped_records == len(BAD_RECORDS)
    warned = [record.getMessage() for record in caplog.records]
    assert len(warned) == len(BAD_RECORDS)
    for seq, text in zip(bad_seqs, warned, strict=True):
        assert f"skipped log record {seq}," in text
        assert f"log[{seq}]" in text, "the warning names the record and the problem"

    # Another load counts them again but does not warn again; another handle warns for itself.
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ctxbudget.shared_session.session"):
        assert shared.load().invalid == len(BAD_RECORDS)
        other = SharedSession(shared.store, "faults", counter=COUNTER)
        assert other.load().invalid == len(BAD_RECORDS)
    assert shared.stats.skipped_records == 2 * len(BAD_RECORDS)
    assert len(caplog.records) == len(BAD_RECORDS)

    # Compaction works on every worker; it absorbs and trims the bad records, and no valid message is lost.
    shared.compact()
    assert other.build_request().messages
    after = other.load()
    assert (after.invalid, after.replayed) == (0, 0)
    assert_whole(after.session, added)
    assert_valid_request(after.session)
    assert all(seq not in bad_seqs for seq, _ in shared.store.read_log("faults"))


def test_a_bad_record_after_a_compaction_never_wedges_later_ones(store_factory: StoreFactory) -> None:
    shared = _handle(store_factory)
    first = conversation(4, tag="a")
    later = conversation(4, tag="b")
    shared.add(*first)
    shared.compact()
    shared.store.append("faults", [BAD_RECORDS[6]])
    shared.add(*later)

    for _ in range(3):
        shared.build_request()
        shared.compact()

    loaded = shared.load()
    assert_whole(loaded.session, first + later)
    assert shared.stats.compactions_saved >= 4


@pytest.mark.parametrize(
    "message",
    [
        _unserializable(content="lone \ud800"),
        _unserializable(metadata={"note": "lone \udc00"}),
    ],
    ids=["content", "metadata"],
)
def test_add_refuses_a_message_that_could_never_be_saved(store_factory: StoreFactory, message: Message) -> None:
    shared = _handle(store_factory)
    shared.add(Message(role="user", content="before", id="before"))

    with pytest.raises(InvalidMessageError, match=r"messages\[1\]: cannot be serialized") as caught:
        shared.add(Message(role="user", content="same batch", id="same"), message)

    assert caught.value.field == "message"
    assert shared.store.log_head("faults") == 1, "nothing of the batch was appended"
    shared.compact()  # and the session still compacts
    assert [m.id for m in shared.originals()] == ["before"]


def test_create_refuses_a_session_that_cannot_be_serialized(store_factory: StoreFactory) -> None:
    store = store_factory()
    session = make_session(ScriptedSummarizer())
    session.add(_unserializable(metadata={"note": "lone \ud800"}))

    with pytest.raises(SnapshotFormatError, match="snapshot: create of session 'faults' failed") as caught:
        SharedSession.create(store, session)

    assert caught.value.field == "snapshot"
    assert store.load("faults") is None


def test_a_snapshot_that_cannot_be_serialized_is_a_format_error_and_writes_nothing(
    store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = _handle(store_factory)
    shared.add(*conversation(6))
    before = shared.store.load("faults")
    real_load = SharedSession.load

    def load_with_a_poisoned_message(self: SharedSession) -> LoadedSession:
        loaded = real_load(self)
        loaded.session.add(_unserializable(metadata={"note": "lone \ud800"}))
        return loaded

    monkeypatch.setattr(SharedSession, "load", load_with_a_poisoned_message)
    with pytest.raises(SnapshotFormatError, match="snapshot: save of session 'faults' failed") as caught:
        shared.compact()

    assert caught.value.field == "snapshot"
    assert "cannot be serialized" in str(caught.value)
    assert "surrogate" in str(caught.value)  # the message says what is wrong with the data
    assert shared.store.load("faults") == before
    assert len(shared.store.read_log("faults")) == 24, "nothing was trimmed"


def test_an_append_whose_reply_was_lost_is_safe_to_repeat(store_factory: StoreFactory) -> None:
    inner = store_factory()
    SharedSession.create(inner, make_session(ScriptedSummarizer()))
    faulty = FaultyStore(inner, {("append", 2): "after"})  # the commit lands, the caller sees a failure
    shared = SharedSession(faulty, "faults", counter=COUNTER, summarizer=ScriptedSummarizer())
    added = conversation(4)
    shared.add(*added[:8])

    with pytest.raises(SnapshotStoreError, match="reply was lost"):
        shared.add(*added[8:])
    assert inner.log_head("faults") == len(added), "the records were appended although add raised"

    shared.add(*added[8:])  # what the docs tell the caller to do
    loaded = shared.load()
    assert (loaded.replayed, loaded.skipped, loaded.invalid) == (len(added), 8, 0)
    assert_whole(loaded.session, added)
    shared.compact()
    assert_whole(shared.load().session, added)
