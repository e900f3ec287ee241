"""``CompactionPolicy.never_clear_tools``: the clear tier leaves those results whole; summarizing still covers them."""

from __future__ import annotations

import pytest
from ctxbudget import CompactionPolicy, ContextSession, InvalidPolicyError, Message, TiktokenCounter, ToolCall
from ctxbudget.session import ArchivedItem


def run(policy: CompactionPolicy) -> tuple[ContextSession, list[ArchivedItem]]:
    session = ContextSession(max_tokens=6_000, counter=TiktokenCounter(), policy=policy)
    receipts: list[ArchivedItem] = []
    session.subscribe(lambda event: receipts.extend(getattr(event, "receipt", ())), "context_compacted")
    for n in range(30):
        calls = [ToolCall(id=f"n{n}", name="notes", args={}), ToolCall(id=f"s{n}", name="search", args={"q": n})]
        session.add(
            Message(role="user", content=f"step {n}", id=f"u{n}"),
            Message(role="assistant", content="", tool_calls=calls, id=f"a{n}"),
            Message(role="tool", tool_call_id=f"n{n}", content=f"note {n}: " + "keep this " * 40, id=f"tn{n}"),
            Message(role="tool", tool_call_id=f"s{n}", content=f"hit {n}: " + "result line " * 40, id=f"ts{n}"),
            Message(role="assistant", content=f"ok {n}", id=f"r{n}"),
        )
        session.build_request()
    return session, receipts


def cleared(receipts: list[ArchivedItem], prefix: str) -> int:
    return sum(1 for item in receipts if item.message_id.startswith(prefix) and item.reason == "cleared")


def test_results_of_a_never_cleared_tool_stay_whole_while_others_are_cleared() -> None:
    assert cleared(run(CompactionPolicy())[1], "tn") > 0  # without the option they are cleared: the test can fail
    session, receipts = run(CompactionPolicy(never_clear_tools=["notes"]))
    assert cleared(receipts, "tn") == 0
    assert cleared(receipts, "ts") > 0
    assert any(item.message_id.startswith("tn") and item.summarized for item in receipts)  # still summarized
    assert session.counted_tokens() <= 6_000  # so they never pile up


@pytest.mark.parametrize("bad", ["notes", [""], [3]])
def test_tool_names_must_be_a_list_of_names(bad: object) -> None:
    with pytest.raises(InvalidPolicyError, match="never_clear_tools"):
        CompactionPolicy(never_clear_tools=bad)  # type: ignore[arg-type]


def test_the_policy_survives_a_snapshot_round_trip() -> None:
    session, _ = run(CompactionPolicy(never_clear_tools=["notes"]))
    snapshot = session.snapshot()
    restored = ContextSession.restore(snapshot.to_json())
    assert restored.policy.never_clear_tools == ("notes",)
    assert restored.snapshot() == snapshot
