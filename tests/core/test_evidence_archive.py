"""Excerpts never exceed their bound; the archive keeps every original and names missing handles."""

from __future__ import annotations

import pytest
from ctxbudget.archive import HANDLE_PREFIX, Archive, ArchiveEntry
from ctxbudget.context.evidence import excerpt
from ctxbudget.errors import ArchiveError, InvalidPolicyError
from ctxbudget.messages import Message
from ctxbudget.messages.tokens import CharCounter, TiktokenCounter
from hypothesis import given, settings
from hypothesis import strategies as st

COUNTER = TiktokenCounter()


class TestExcerpt:
    @settings(max_examples=80, deadline=None)
    @given(
        text=st.text(min_size=0, max_size=1500) | st.sampled_from(["<|endoftext|>" * 200, "日本語テキスト" * 300]),
        max_tokens=st.integers(min_value=30, max_value=120),
        head_fraction=st.floats(min_value=0.0, max_value=1.0),
    )
    def test_never_over_max_tokens(self, text: str, max_tokens: int, head_fraction: float) -> None:
        result = excerpt(
            text, max_tokens=max_tokens, counter=COUNTER, handle="ctx://archive/x", head_fraction=head_fraction
        )
        if COUNTER.count_text(text) <= max_tokens:
            assert result == text
        else:
            assert COUNTER.count_text(result) <= max_tokens
            assert "chars omitted; full text: ctx://archive/x" in result

    @settings(max_examples=40, deadline=None)
    @given(text=st.text(min_size=200, max_size=600), max_tokens=st.integers(min_value=1, max_value=12))
    def test_a_bound_too_small_for_the_marker_raises_instead_of_overflowing(self, text: str, max_tokens: int) -> None:
        if COUNTER.count_text(text) <= max_tokens:
            assert excerpt(text, max_tokens=max_tokens, counter=COUNTER) == text
            return
        with pytest.raises(InvalidPolicyError) as info:
            excerpt(text, max_tokens=max_tokens, counter=COUNTER, handle="ctx://archive/x")
        assert info.value.field == "max_tokens"
        assert f"max_tokens: {max_tokens:,} cannot hold the omission marker" in str(info.value)

    def test_long_text_keeps_head_and_tail_and_names_the_handle(self) -> None:
        text = "".join(f"row {n}\n" for n in range(1000))
        result = excerpt(text, max_tokens=60, counter=COUNTER, handle="ctx://archive/log")
        assert COUNTER.count_text(result) <= 60
        assert result.startswith("row 0\n")
        assert result.endswith("row 999\n")
        assert "chars omitted; full text: ctx://archive/log" in result
        assert f"of {len(text):,} chars" in result

    def test_text_that_fits_is_returned_unchanged(self) -> None:
        assert excerpt("short", max_tokens=5, counter=COUNTER) == "short"

    def test_works_with_any_counter(self) -> None:
        result = excerpt("a" * 1000, max_tokens=50, counter=CharCounter(1.0))
        assert len(result) <= 50

    @pytest.mark.parametrize(
        ("kwargs", "field"), [({"max_tokens": 0}, "max_tokens"), ({"head_fraction": 1.5}, "head_fraction")]
    )
    def test_invalid_arguments(self, kwargs: dict[str, float], field: str) -> None:
        arguments: dict[str, float] = {"max_tokens": 10, **kwargs}
        with pytest.raises(InvalidPolicyError) as info:
            excerpt("text", counter=COUNTER, **arguments)  # type: ignore[arg-type]
        assert info.value.field == field


class TestArchive:
    def test_messages_are_archived_once_per_id_and_reason(self) -> None:
        archive = Archive()
        message = Message(role="tool", content="big output", tool_call_id="call_1", id="m1")
        handle = archive.put_message(message, "bounded")
        assert handle == f"{HANDLE_PREFIX}m1.bounded"
        assert archive.put_message(message, "bounded") == handle
        archive.put_message(message, "cleared")
        assert len(archive) == 2
        assert archive.messages() == [message]
        assert archive.get(handle).full_text == "big output"
        assert handle in archive

    def test_text_round_trips_and_reads_in_windows(self) -> None:
        archive = Archive()
        handle = archive.put_text("log-1", "0123456789", source="pytest")
        assert archive.put_text("log-1", "0123456789") == handle
        assert archive.read(handle) == "0123456789"
        assert archive.read(handle, offset=3, limit=4) == "3456"
        assert archive.get(handle).source == "pytest"
        assert [e.handle for e in archive] == [handle]

    def test_a_key_cannot_hold_two_texts(self) -> None:
        archive = Archive()
        archive.put_text("k", "one")
        with pytest.raises(ArchiveError) as info:
            archive.put_text("k", "two")
        assert "already holds a different text (3 chars)" in str(info.value)

    def test_missing_handles_raise_a_key_error_naming_them(self) -> None:
        archive = Archive([ArchiveEntry(handle=f"{HANDLE_PREFIX}a", reason="evidence", text="x")])
        with pytest.raises(ArchiveError) as info:
            archive.get("ctx://archive/b")
        assert isinstance(info.value, KeyError)
        assert str(info.value) == "handle: 'ctx://archive/b' is not in the archive (1 entries)"

    @pytest.mark.parametrize(
        ("call", "field"),
        [
            (lambda a: a.put_text("", "x"), "key"),
            (lambda a: a.read(f"{HANDLE_PREFIX}a", offset=-1), "offset"),
            (lambda a: a.read(f"{HANDLE_PREFIX}a", limit=0), "limit"),
        ],
    )
    def test_invalid_arguments(self, call: object, field: str) -> None:
        archive = Archive([ArchiveEntry(handle=f"{HANDLE_PREFIX}a", reason="evidence", text="x")])
        with pytest.raises(InvalidPolicyError) as info:
            call(archive)  # type: ignore[operator]
        assert info.value.field == field
