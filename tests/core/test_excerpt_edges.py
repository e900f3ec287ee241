"""Excerpts cut by token slicing (the exact tiktoken counter's fast path) keep every promise the search made.

Whatever the text (multi-byte characters, emoji, code, runs of digits), the excerpt fits its budget by the counter,
begins with a prefix of the text and ends with a suffix of it, the two never overlap, and the marker says how many
characters were left out.
"""

from __future__ import annotations

import re

from ctxbudget.context.evidence import excerpt
from ctxbudget.messages.tokens import CharCounter, TiktokenCounter
from hypothesis import given, settings
from hypothesis import strategies as st

COUNTER = TiktokenCounter()
MARKER = re.compile(r"\n\[\.\.\. ([\d,]+) of ([\d,]+) chars omitted(?:; full text: [^\]]+)? \.\.\.\]\n")
pieces = st.sampled_from(
    ["def f(x):\n", "    return x + 1\n", "é", "日本語", "🙂", "0123456789", " ", "\n", "wörd", "ab"]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(pieces, min_size=1, max_size=400), st.integers(40, 400), st.floats(0.0, 1.0))
def test_a_token_sliced_excerpt_fits_and_is_made_of_the_texts_own_edges(
    parts: list[str], budget: int, head_fraction: float
) -> None:
    text = "".join(parts)
    result = excerpt(text, max_tokens=budget, counter=COUNTER, handle="ctx://x", head_fraction=head_fraction)
    assert COUNTER.count_text(result) <= budget
    if result == text:
        return
    found = MARKER.search(result)
    assert found is not None
    head, tail = result[: found.start()], result[found.end() :]
    assert text.startswith(head)
    assert text.endswith(tail)
    assert len(head) + len(tail) <= len(text)
    assert int(found.group(1).replace(",", "")) == len(text) - len(head) - len(tail)


def test_the_fast_path_keeps_about_as_much_as_the_search() -> None:
    text = "".join(f"line {n}: value={n * 37 % 1000} ok\n" for n in range(3_000))
    fast = excerpt(text, max_tokens=2_000, counter=COUNTER)
    assert COUNTER.count_text(fast) <= 2_000
    assert COUNTER.count_text(fast) >= 1_980  # token slicing leaves at most a few tokens unused


def test_other_counters_still_search() -> None:
    counter = CharCounter()
    text = "x" * 10_000
    result = excerpt(text, max_tokens=500, counter=counter)
    assert counter.count_text(result) <= 500
