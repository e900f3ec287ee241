"""The ids the LangChain adapter gives messages and bounded results take as many tokens every time (see
``tests/core/test_id_tokens.py``); a bounded result's id is the same for the same call and text."""

from __future__ import annotations

from ctxbudget.messages.encodings import get_encoding
from langchain_core.messages import HumanMessage

from langchain_ctxbudget._bounding import _result_id
from langchain_ctxbudget.convert import ensure_id


def test_assigned_ids_take_as_many_tokens_and_a_results_id_is_its_calls() -> None:
    codec = get_encoding("o200k_base")
    assigned = [ensure_id(HumanMessage(content="hi")) for _ in range(300)]
    results = [_result_id(f"call_{n:x}", "BEGIN log ...") for n in range(300)]
    assert len(set(assigned)) == len(assigned) and len(set(results)) == len(results)  # noqa: PT018
    for ids in (assigned, results):
        assert len({len(codec.encode_ordinary(f"ctx://archive/{i}.bounded")) for i in ids}) == 1
    assert _result_id("call_1", "text") == _result_id("call_1", "text") != _result_id("call_1", "other text")
