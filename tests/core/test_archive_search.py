"""Searching the archive: BM25 over identifier-aware tokens finds planted facts among realistic agent noise."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

import pytest
from ctxbudget import Archive, ArchiveHit, ContextSession
from ctxbudget.archive import ArchiveIndex, render_hits
from ctxbudget.archive.search import EXCERPT_CHARS, tokenize
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import InvalidPolicyError
from ctxbudget.messages import Message, ToolCall
from ctxbudget.messages.tokens import CharCounter
from hypothesis import given, settings
from hypothesis import strategies as st

FACT = (
    "Decision: the deploy region for the billing service is eu-west-3 (ticket T4821); the region switch lives in "
    "src/pkg_3/module_8.py and needs config version 2.14.1."
)


def _code(rng: random.Random) -> str:
    a, b = rng.randrange(10), rng.randrange(10)
    return (
        f"# src/pkg_{a}/module_{b}.py\nimport os\nfrom pkg_{a}.module_{b} import Region\n\n"
        f"def handler_{rng.randrange(99)}(event, region='us-east-{rng.randrange(1, 3)}'):\n"
        f"    deploy = os.environ.get('DEPLOY_TARGET', 'staging')\n    return Region(region).apply(deploy, retries=3)\n"
    )


def _log(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randrange(20, 60)):
        level = rng.choice(["INFO", "WARN", "DEBUG", "ERROR"])
        lines.append(
            f"2024-05-{rng.randrange(1, 29):02d}T10:{rng.randrange(60):02d}:00Z {level} deploy step "
            f"{rng.randrange(40)} region=us-east-{rng.randrange(1, 3)} took {rng.randrange(999)}ms "
            f"(T{rng.randrange(1000, 4000)}) /var/log/app/worker_{rng.randrange(9)}.log"
        )
    return "\n".join(lines)


def _noise(rng: random.Random, count: int) -> list[Message]:
    """User questions, assistant tool calls, and tool outputs with code, logs and paths."""
    messages: list[Message] = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            text = f"Can you check why pkg_{rng.randrange(10)} fails on ticket T{rng.randrange(1000, 4000)}?"
            messages.append(Message(role="user", content=text))
        elif kind == 1:
            call = ToolCall(id=f"call_{i}", name="read_file", args={"path": f"src/pkg_{rng.randrange(10)}/x.py"})
            messages.append(Message(role="assistant", content="Let me look.", tool_calls=(call,)))
        else:
            text = _code(rng) if kind == 2 else _log(rng)
            messages.append(Message(role="tool", content=text, tool_call_id=f"call_{i - 1}", name="read_file"))
    return [m for m in messages if "pkg_3/module_8" not in m.text]


@pytest.fixture(scope="module")
def planted() -> tuple[Archive, Message]:
    rng = random.Random(7)
    noise = _noise(rng, 320)
    fact = Message(role="assistant", content=FACT)
    messages = [*noise[:150], fact, *noise[150:]]
    archive = Archive()
    for message in messages[:300]:
        archive.put_message(message, "summarized")
    return archive, fact


@pytest.mark.parametrize(
    "query",
    ["deploy region", "billing service", "T4821", "src/pkg_3/module_8.py", "pkg_3/module_8.py", "eu-west-3", "2.14.1"],
)
def test_a_planted_fact_among_300_noisy_messages_is_in_the_top_3(planted: tuple[Archive, Message], query: str) -> None:
    archive, fact = planted
    assert len(archive) == 300
    hits = archive.search(query, k=3)
    assert fact.id in [hit.message_id for hit in hits]


def test_exact_identifiers_rank_the_fact_first(planted: tuple[Archive, Message]) -> None:
    archive, fact = planted
    for query in ["T4821", "src/pkg_3/module_8.py", "eu-west-3"]:
        assert archive.search(query)[0].message_id == fact.id, query


def test_a_hit_names_its_message_and_its_excerpt_holds_the_match(planted: tuple[Archive, Message]) -> None:
    archive, fact = planted
    hit = archive.search("T4821", k=1)[0]
    assert isinstance(hit, ArchiveHit)
    assert (hit.handle, hit.role, hit.reason, hit.source) == (f"ctx://archive/{fact.id}.summarized", "assistant",
                                                               "summarized", None)  # fmt: skip
    assert "T4821" in hit.text
    assert hit.score > 0


def test_a_long_original_is_excerpted_around_the_match() -> None:
    archive = Archive()
    text = "filler words here. " * 200 + "the culprit is cache_key_v9 in the loader. " + "more filler. " * 200
    archive.put_text("log-1", text, source="run_tests", reason="bounded")
    hit = archive.search("cache_key_v9")[0]
    assert len(hit.text) <= EXCERPT_CHARS
    assert hit.text.startswith("…")
    assert hit.text.endswith("…")
    assert "cache_key_v9" in hit.text
    middle = hit.text.index("cache_key_v9")
    assert 80 < middle < 220  # centred, not at an edge
    assert (hit.message_id, hit.role, hit.source) == (None, None, "run_tests")


def test_a_short_original_is_returned_whole() -> None:
    archive = Archive()
    archive.put_message(Message(role="user", content="use the blue-green strategy"), "summarized")
    assert archive.search("blue-green")[0].text == "use the blue-green strategy"


def test_queries_that_match_nothing_return_no_hits(planted: tuple[Archive, Message]) -> None:
    archive, _ = planted
    assert archive.search("zebra quokka") == []
    assert archive.search("!!! ???") == []
    assert Archive().search("anything") == []


def test_one_hit_per_message_with_the_handle_of_the_fullest_original() -> None:
    archive = Archive()
    trace = "trace: " + "frame " * 500 + "NullPointer at Loader.java:88"
    original = Message(role="tool", content=trace, tool_call_id="c1", name="run_tests")
    bounded = original.with_content("trace: frame frame [... omitted ...] NullPointer at Loader.java:88")
    archive.put_message(original, "bounded")
    archive.put_message(bounded, "summarized")
    archive.put_message(Message(role="user", content="why the NullPointer?"), "summarized")
    hits = archive.search("NullPointer Loader.java", k=5)
    assert [hit.message_id for hit in hits].count(original.id) == 1
    top = hits[0]
    assert top.handle == f"ctx://archive/{original.id}.bounded"
    assert archive.read(top.handle) == original.text
    assert top.source == "run_tests"


def test_a_call_and_its_result_are_one_hit_showing_the_result_and_naming_the_call() -> None:
    archive = Archive()
    call = ToolCall(id="c1", name="kubectl_apply", args={"manifest": "deploy/payments-canary.yaml"})
    asked = Message(role="assistant", content="", tool_calls=(call,))
    answered = Message(role="tool", content="applied", tool_call_id="c1", name="kubectl_apply")
    archive.put_message(asked, "cleared")
    archive.put_message(answered, "cleared")
    for query in ("deploy/payments-canary.yaml", "kubectl_apply", "applied", "kubectl_apply applied"):
        (hit,) = archive.search(query)
        assert (hit.message_id, hit.role, hit.source) == (answered.id, "tool", "kubectl_apply"), query
        assert hit.handle == f"ctx://archive/{answered.id}.cleared"
        assert hit.text == "applied"
        assert hit.call == 'kubectl_apply {"manifest":"deploy/payments-canary.yaml"}'
        assert archive.read(hit.handle) == "applied"


def test_a_call_whose_result_is_not_archived_is_a_hit_of_its_own() -> None:
    archive = Archive()
    call = ToolCall(id="c1", name="kubectl_apply", args={"manifest": "deploy/payments-canary.yaml"})
    asked = Message(role="assistant", content="Applying the canary.", tool_calls=(call,))
    archive.put_message(asked, "cleared")
    hits = archive.search("payments-canary")
    assert [(hit.message_id, hit.role, hit.call is not None) for hit in hits] == [(asked.id, "assistant", True)]
    assert "payments-canary" in hits[0].text
    assert archive.search("Applying canary")[0].message_id == asked.id


def test_ties_break_by_archive_order() -> None:
    archive = Archive()
    same = [
        Message(role="user", content="rotate the signing key"),
        Message(role="user", content="rotate the signing key"),
    ]
    for message in same:
        archive.put_message(message, "summarized")
    assert [hit.message_id for hit in archive.search("signing key")] == [m.id for m in same]


def test_a_phrase_in_order_outranks_the_same_words_apart() -> None:
    archive = Archive()
    apart = Message(role="user", content="the region list and the deploy log")
    together = Message(role="user", content="the log and the deploy region list")
    archive.put_message(apart, "summarized")
    archive.put_message(together, "summarized")
    assert archive.search("deploy region")[0].message_id == together.id


def test_tokens_keep_identifiers_whole_and_split_their_parts() -> None:
    tokens = set(
        tokenize("See src/pkg_3/module_8.py, T1234 in eu-west-3 at v1.2.3 via app.core.Loader: 103 deployRegion")
    )
    assert {"src/pkg_3/module_8.py", "pkg_3/module_8.py", "module_8.py", "t1234", "eu-west-3", "v1.2.3",
            "app.core.loader", "103"} <= tokens  # fmt: skip
    assert {"src", "pkg_3", "pkg", "3", "module", "8", "py", "eu", "west", "deploy", "region"} <= tokens


def _counting(calls: list[str]) -> Callable[[str], list[str]]:
    def counted(text: str) -> list[str]:
        calls.append(text)
        return tokenize(text)

    return counted


def test_the_index_tokenizes_each_entry_once_when_added() -> None:
    calls: list[str] = []
    index = ArchiveIndex(tokenizer=_counting(calls))
    archive = Archive()
    handles = [archive.put_message(Message(role="user", content=f"note {i} about topic_{i}"), "summarized")
               for i in range(50)]  # fmt: skip
    for handle in handles:
        index.add(archive.get(handle))
    assert len(calls) == 50
    calls.clear()
    index.add(archive.get(archive.put_message(Message(role="user", content="late topic_x"), "summarized")))
    assert calls == ["late topic_x"]  # only the new entry; nothing old is re-tokenized
    calls.clear()
    assert index.search("topic_x")[0].text == "late topic_x"
    assert calls == ["topic_x"]  # a search tokenizes the query only
    assert len(index) == 51


def test_the_archive_indexes_each_entry_once_across_searches(monkeypatch: pytest.MonkeyPatch) -> None:
    added: list[str] = []
    original_add = ArchiveIndex.add

    def counting_add(self: ArchiveIndex, entry: object) -> None:
        added.append(entry.handle)  # type: ignore[attr-defined]
        original_add(self, entry)  # type: ignore[arg-type]

    monkeypatch.setattr(ArchiveIndex, "add", counting_add)
    archive = Archive()
    for i in range(20):
        archive.put_message(Message(role="user", content=f"item {i}"), "summarized")
    assert added == []  # archiving never tokenizes
    archive.search("item")
    archive.search("item 3")
    assert len(added) == 20
    late = archive.put_message(Message(role="user", content="a late arrival"), "summarized")
    assert archive.search("late arrival")[0].handle == late
    assert added[20:] == [late]
    assert len(set(added)) == len(added)


def test_an_archive_built_from_entries_and_added_to_is_searchable() -> None:
    source = Archive()
    for i in range(5):
        source.put_text(f"out-{i}", f"output number {i} mentions needle_{i}", source="tool")
    copy = Archive(source.entries()[:3])
    for entry in source.entries():
        copy.add(entry)
    assert len(copy) == 5
    assert copy.search("needle_4")[0].handle == "ctx://archive/out-4"


@pytest.mark.parametrize("query", ["", "   ", None, 3, b"bytes"])
def test_a_bad_query_is_a_typed_error_naming_the_field(query: object) -> None:
    for target in (Archive(), ArchiveIndex()):
        with pytest.raises(InvalidPolicyError) as info:
            target.search(query, 5)  # type: ignore[arg-type]
        assert info.value.field == "query"
        assert repr(query) in str(info.value)


@pytest.mark.parametrize("k", [0, -1, 101, True, 2.5, "5", None])
def test_a_bad_k_is_a_typed_error_naming_the_field(k: object) -> None:
    for target in (Archive(), ArchiveIndex()):
        with pytest.raises(InvalidPolicyError) as info:
            target.search("query", k)  # type: ignore[arg-type]
        assert info.value.field == "k"
        assert repr(k) in str(info.value)


def test_k_bounds_the_number_of_hits(planted: tuple[Archive, Message]) -> None:
    archive, _ = planted
    assert len(archive.search("deploy", k=1)) == 1
    assert len(archive.search("deploy", k=100)) == 100


def test_concurrent_archiving_and_searching_loses_nothing() -> None:
    archive = Archive()
    errors: list[BaseException] = []

    def writer(worker: int) -> None:
        for i in range(100):
            archive.put_message(Message(role="user", content=f"worker_{worker} wrote w{worker}n{i}"), "summarized")

    def reader() -> None:
        try:
            for _ in range(50):
                archive.search("worker_0 wrote", k=10)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    threads += [threading.Thread(target=reader) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for worker in range(4):
        for i in (0, 57, 99):
            assert archive.search(f"w{worker}n{i}")[0].text == f"worker_{worker} wrote w{worker}n{i}"


def test_a_session_searches_what_compaction_archived_and_reads_it_back() -> None:
    session = ContextSession(max_tokens=2_000, counter=CharCounter(), policy=CompactionPolicy(keep_recent_messages=4))
    planted = session.add_user("Remember: the staging database password rotates on ticket OPS-7731.")
    for i in range(80):
        session.add_user(f"turn {i}: " + "routine chatter about lunch plans " * 4)
        session.add_assistant(f"ack {i}")
    session.build_request()
    assert planted.id not in {m.id for m in session.history}
    hits = session.search_archive("OPS-7731", k=3)
    assert hits[0].message_id == planted.id
    assert session.read_archived(hits[0].handle) == planted.text
    with pytest.raises(InvalidPolicyError):
        session.search_archive("", k=3)


def test_hits_render_as_lines_a_model_can_act_on(planted: tuple[Archive, Message]) -> None:
    archive, fact = planted
    hits = archive.search("billing deploy", k=2)
    text = render_hits(hits, "billing deploy")
    lines = text.splitlines()
    assert len(lines) == 3
    assert "read_archived_output" in lines[0]
    assert lines[1].startswith(f"1. ctx://archive/{fact.id}.summarized | assistant | score ")
    assert "billing" in lines[1]
    assert " | tool (read_file) | score " in lines[2]
    assert render_hits([], "nope") == "No archived original matches 'nope'."


_VOCAB = ["deploy", "region", "error", "log", "src", "py", "test", "build", "ticket", "user", "config", "value"]


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    tokens=st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=5, max_size=10), min_size=1,
                    max_size=25, unique=True),
)  # fmt: skip
def test_every_message_with_a_unique_token_is_the_top_hit_for_it(data: st.DataObject, tokens: list[str]) -> None:
    archive = Archive()
    owners: dict[str, str] = {}
    for token in tokens:
        noise = data.draw(st.lists(st.sampled_from(_VOCAB), max_size=30))
        position = data.draw(st.integers(min_value=0, max_value=len(noise)))
        words = [*noise[:position], f"u{token}", *noise[position:]]
        role = data.draw(st.sampled_from(["user", "assistant"]))
        message = Message(role=role, content=" ".join(words))
        archive.put_message(message, data.draw(st.sampled_from(["summarized", "cleared", "dropped"])))
        owners[f"u{token}"] = message.id
    for token, owner in owners.items():
        hits = archive.search(token, k=3)
        assert hits[0].message_id == owner
        assert token in hits[0].text
        assert all(hit.message_id == owner for hit in hits)  # nothing else holds it
