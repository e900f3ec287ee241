"""One huge tool output is added in memory bounded by a small multiple of its size (issue 26 finding 8).

A 50 MB output used to peak at 624 MB while being added: counting it built a Python list of one int per token
(about nine bytes per character), kept it for the excerpt, and hashed a UTF-8 copy; the excerpt of an estimating
counter binary-searched copies of the whole text. Now a huge text is counted and cut in parts that end where the
encoding's pre-tokens end (:mod:`ctxbudget.messages._token_chunks`), which gives exactly the tokens of the whole.

Peaks are measured with ``tracemalloc`` (Python allocations: what the copies were) as a ratio to the output's size,
never a time. The 50 and 60 MB figures are in ``benchmarks/bench_huge_output.py``.
"""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from ctxbudget import ContextSession, Message, ToolCall
from ctxbudget.context.evidence import excerpt
from ctxbudget.messages import _token_chunks as chunks
from ctxbudget.messages import _token_edges as edges
from ctxbudget.messages.encodings import get_encoding
from ctxbudget.messages.tokens import CharCounter, TiktokenCounter, TokenCounter
from ctxbudget.providers.counting import counter_for_model
from ctxbudget.shared_session import SharedSession
from ctxbudget.stores import InMemorySnapshotStore
from hypothesis import given, settings
from hypothesis import strategies as st
from llama_index.core.base.llms.types import ChatMessage

from llamaindex_ctxbudget import BudgetedMemory

SIZE = 8 * 1024 * 1024
"""Past the size from which texts are cut in parts; the parts' cost is constant, so bigger outputs do better."""
MAX_RATIO = 3.0


def _log_lines(size: int) -> str:
    return "".join(f"{i:>8} INFO worker-{i % 7} processed batch ok, 12 items\n" for i in range(size // 48 + 1))[:size]


def _non_ascii(size: int) -> str:
    return "".join(f"ligne {i} \u2013 résumé 中文 😀 ok\n" for i in range(size // 28 + 1))[:size]


def _hex_blob(size: int) -> str:
    return os.urandom(size // 2 + 1).hex()[:size]


SHAPES = {"log-lines": _log_lines, "non-ascii": _non_ascii, "hex-blob": _hex_blob}


def _peak_ratio(action: Callable[[], object], size: int) -> float:
    tracemalloc.start()
    try:
        action()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / size


def _session_with_call(counter: TokenCounter) -> ContextSession:
    session = ContextSession(max_tokens=100_000, counter=counter)
    session.add_user("run it")
    session.add_assistant(tool_calls=[ToolCall(id="c1", name="run")])
    return session


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_adding_a_huge_tool_output_peaks_below_three_times_its_size(shape: str) -> None:
    output = SHAPES[shape](SIZE)
    session = _session_with_call(TiktokenCounter())
    ratio = _peak_ratio(lambda: session.add_tool_result("c1", output), len(output))
    assert ratio < MAX_RATIO, f"{shape}: peak {ratio:.2f}x the output"
    stored = session.history[-1]
    assert stored.text != output, "it was bounded"
    assert session.read_archived(stored.metadata["ctxbudget_archived"], limit=None) == output, "nothing was lost"


@pytest.mark.parametrize(
    "counter",
    [CharCounter(), counter_for_model("claude-sonnet-4-5")],
    ids=["chars", "estimating"],
)
def test_other_counters_bound_it_without_copying_it_either(counter: TokenCounter) -> None:
    output = _log_lines(SIZE)
    session = _session_with_call(counter)
    ratio = _peak_ratio(lambda: session.add_tool_result("c1", output), len(output))
    assert ratio < MAX_RATIO, f"peak {ratio:.2f}x the output"


def _chat_call() -> dict[str, Any]:
    call = {"id": "c1", "type": "function", "function": {"name": "run", "arguments": "{}"}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _via_openai(output: str) -> Callable[[], object]:
    session = ContextSession(max_tokens=100_000)
    session.add_openai({"role": "user", "content": "run it"}, _chat_call())
    return lambda: session.add_openai({"role": "tool", "tool_call_id": "c1", "content": output})


def _via_shared_session(output: str) -> Callable[[], object]:
    shared = SharedSession.create(InMemorySnapshotStore(), ContextSession(max_tokens=100_000, session_id="s"))
    shared.add(
        Message(role="user", content="run it"), Message(role="assistant", tool_calls=[ToolCall(id="c1", name="run")])
    )
    message = Message(role="tool", tool_call_id="c1", content=output)
    return lambda: (shared.add(message), shared.build_request())


def _via_llamaindex(output: str) -> Callable[[], object]:
    memory = BudgetedMemory.from_defaults(max_tokens=100_000)
    memory.put(ChatMessage(role="user", content="run it"))
    memory.put(
        ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [_chat_call()["tool_calls"][0]]})
    )
    result = ChatMessage(role="tool", content=output, additional_kwargs={"tool_call_id": "c1"})
    return lambda: (memory.put(result), memory.get())


@pytest.mark.parametrize(
    "path", [_via_openai, _via_shared_session, _via_llamaindex], ids=["add-openai", "shared-session", "llamaindex"]
)
def test_every_add_path_peaks_below_three_times_the_output(path: Callable[[str], Callable[[], object]]) -> None:
    output = _log_lines(SIZE)
    action = path(output)
    ratio = _peak_ratio(action, len(output))
    assert ratio < MAX_RATIO, f"peak {ratio:.2f}x the output"


# -- the parts give exactly the whole's tokens ---------------------------------------------------------------------
_PIECES = st.sampled_from(
    [
        *"ab Zf09'\n\t,.\"{}_-/=",
        "é",
        "e\u0301",
        "\u0301",
        "中",
        "\uff0c",
        "😀",
        "²",
        "٣",
        "Ⅷ",
        "ß",
        "  ",
        "\r\n",
        "'s",
        "'LL",
    ]
)
TEXTS = st.lists(_PIECES, max_size=200).map("".join)


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@settings(max_examples=300, deadline=None)
@given(text=TEXTS, chunk=st.integers(1, 40), at_least=st.integers(0, 60))
def test_parts_cut_where_pre_tokens_end_encode_to_the_whole(
    encoding: str, text: str, chunk: int, at_least: int
) -> None:
    enc = get_encoding(encoding)
    whole = enc.encode_ordinary(text)
    start, tokens = 0, []
    for cut in chunks.cut_points(text, chunk):
        assert 0 < cut < len(text)
        tokens += enc.encode_ordinary(text[start:cut])
        start = cut
    assert tokens + enc.encode_ordinary(text[start:]) == whole
    assert chunks.count_tokens(enc, text, chunk) == len(whole)
    head = edges.head_tokens(enc, text, at_least, chunk)
    tail = edges.tail_tokens(enc, text, at_least, chunk)
    assert head == whole[: len(head)]
    assert tail == whole[len(whole) - len(tail) :]
    assert min(len(head), len(tail)) >= min(at_least, len(whole))


def test_the_cut_rule_was_checked_against_these_patterns() -> None:
    """The rule in ``_token_chunks`` reasons about these exact pre-token patterns: a change needs it re-checked."""
    assert get_encoding("o200k_base")._pat_str == (
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
        r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
        r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    )
    assert get_encoding("cl100k_base")._pat_str == (
        r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$"
        r"|\s*[\r\n]|\s+(?!\S)|\s"
    )


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_huge_excerpt_is_the_one_the_whole_encoding_gives(shape: str) -> None:
    text = SHAPES[shape](3 * chunks.CHUNK_CHARS)
    counter = TiktokenCounter()
    for head_budget, budget in ((3_000, 5_000), (0, 2_000), (2_000, 2_000)):
        whole = counter.fit_edges(counter.encode(text), head_budget, budget)
        assert counter.fit_text_edges(text, head_budget, budget) == whole
    assert counter.count_text(text) == len(counter.encode(text))
    short = excerpt(text, max_tokens=4_000, counter=counter, handle="ctx://archive/x")
    assert counter.count_text(short) <= 4_000
    assert short.startswith(text[:1_000])
    assert short.endswith(text[-1_000:])
