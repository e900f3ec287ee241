"""What the model still sees after compaction (issue 11), and the compaction defects of issue 14 (items 1, 4, 10-12,
15).

The long-session test replays a seeded 300-turn coding agent (parallel tool calls every turn, tool outputs of 100 to
6,000 words, one in seven large) in a 32k window with the default policy and the default offline summarizer, with
facts stated by the user and file paths and figures planted in the middle of tool outputs.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

import pytest
from ctxbudget import (
    CompactionPolicy,
    ContextSession,
    Message,
    SummaryRequest,
    TiktokenCounter,
    ToolCall,
    find_tool_pair_problems,
)
from ctxbudget.compaction import ARCHIVE_META
from ctxbudget.compaction._json_fields import MAX_FIELDS, record_fields
from ctxbudget.compaction._records import field_parts, join_fields, split_fields, word_field
from ctxbudget.compaction.outputs import output_items
from ctxbudget.compaction.salience import failure_line
from ctxbudget.compaction.summarize import ExtractiveSummarizer
from ctxbudget.errors import InvalidMessageError
from hypothesis import given, settings
from hypothesis import strategies as st

COUNTER = TiktokenCounter()
WINDOW = 32_000
KEYS = ("deploy region", "db host", "feature flag", "owner", "port", "timeout", "cache size", "queue", "bucket")
WORDS = ("the", "of", "and", "to", "in", "is", "for", "on", "that", "with", "as", "this", "by", "be", "are", "from")
CODE = (
    "def handler(event):",
    "    return process(event)",
    "class Service:",
    "    raise RuntimeError('boom')  # error path",
    "import os",
    "    # error handling below: exception, failed, traceback",
    "x = compute(y)",
)


@dataclass
class Planted:
    turns: list[list[Message]] = field(default_factory=list)
    facts: list[tuple[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)


def _filler(rng: random.Random, words: int) -> list[str]:
    lines = []
    while words > 0:
        lines.append(rng.choice(CODE) if rng.random() < 0.5 else " ".join(rng.choice(WORDS) for _ in range(12)))
        words -= 12
    return lines


def agent_session(seed: int = 0, turns: int = 300) -> Planted:
    """300 turns: a user message, 1-2 parallel tool calls, their outputs, a reply; facts, paths and figures planted."""
    rng = random.Random(seed)
    out = Planted()
    fact_turns = set(rng.sample(range(1, turns - 5), 60))
    path_turns = set(rng.sample(range(1, turns - 5), 65))
    figure_turns = set(rng.sample(range(1, turns - 5), 30))
    for t in range(turns):
        if t in fact_turns:
            key = KEYS[len(out.facts) % len(KEYS)]
            value, ticket = f"{key.replace(' ', '-')}-{rng.randint(1000, 9999)}", f"T{rng.randint(1000, 9999)}"
            out.facts.append((value, ticket))
            text = f"FACT-{len(out.facts)}: the {key} is {value} and the ticket is {ticket}. Please go on with {t}."
        else:
            text = f"Please continue with task {t}: look at module {rng.randint(1, 30)} and fix what is failing."
        turn = [Message(id=f"u{t}", role="user", content=text)]  # fixed ids: handles, and so counts, repeat
        calls = tuple(
            ToolCall(id=f"c{t}_{i}", name=rng.choice(["read_file", "run_tests"]), args={"path": f"src/m{t}_{i}.py"})
            for i in range(rng.choice([1, 2]))
        )
        turn.append(Message(id=f"a{t}", role="assistant", tool_calls=calls))
        for i, call in enumerate(calls):
            lines = _filler(rng, 6000 if rng.random() < 1 / 7 else rng.randint(100, 900))
            if t in path_turns and i == 0:
                path = f"src/pkg_{rng.randint(1, 9)}/module_{len(out.paths)}.py"
                out.paths.append(path)
                lines.insert(len(lines) // 2, f"wrote {path}; tests: {rng.randint(50, 400)} passed")
            if t in figure_turns and i == len(calls) - 1:
                figure = f"{rng.randint(100, 999)} ms"
                out.figures.append(figure)
                lines.insert(len(lines) // 3, f"measured p95 latency for /api/r{len(out.figures)}: {figure}")
            turn.append(
                Message(id=f"r{t}_{i}", role="tool", tool_call_id=call.id, name=call.name, content="\n".join(lines))
            )
        turn.append(Message(id=f"d{t}", role="assistant", content=f"Done with task {t}; the change looks right."))
        out.turns.append(turn)
    return out


@pytest.fixture(scope="module")
def replayed() -> tuple[ContextSession, str, Planted, list[tuple[int, int]]]:
    planted = agent_session()
    session = ContextSession(model="gpt-4o", max_tokens=WINDOW)
    after: list[tuple[int, int]] = []
    for turn in planted.turns:
        session.add(*turn[:-1])
        request = session.build_request()
        assert request.tokens <= WINDOW
        assert not find_tool_pair_problems(list(request.messages))
        if request.compaction is not None:
            after.append((request.compaction.after.used_tokens, request.tokens))
        session.add(turn[-1])
    final = session.build_request()
    text = "\n".join(m.text + "".join(c.args_json() for c in m.tool_calls) for m in final.messages)
    return session, text, planted, after


@pytest.mark.slow
def test_user_facts_paths_and_figures_stay_in_view_after_300_turns_in_32k(replayed) -> None:  # type: ignore[no-untyped-def]
    _, text, planted, _ = replayed
    facts = sum(value in text and ticket in text for value, ticket in planted.facts)
    paths = sum(path in text for path in planted.paths)
    figures = sum(figure in text for figure in planted.figures)
    assert facts / len(planted.facts) >= 0.9, facts
    assert (paths + figures) / (len(planted.paths) + len(planted.figures)) >= 0.8, (paths, figures)


@pytest.mark.slow
def test_every_planted_item_is_found_by_archive_search_in_the_top_3(replayed) -> None:  # type: ignore[no-untyped-def]
    session, text, planted, _ = replayed

    def found(answer: str, query: str) -> bool:
        hits = session.search_archive(query, k=3)
        return answer in text or any(answer in session.read_archived(h.handle, limit=None) for h in hits)

    assert all(found(ticket, ticket) for _, ticket in planted.facts)
    assert all(found(path, path) for path in planted.paths)


@pytest.mark.slow
def test_every_original_is_recoverable_after_the_replay(replayed) -> None:  # type: ignore[no-untyped-def]
    session, _, planted, _ = replayed
    given_messages = [m for turn in planted.turns for m in turn]
    assert session.originals() == given_messages


@pytest.mark.slow
def test_auto_compaction_lands_near_the_target_not_far_below(replayed) -> None:  # type: ignore[no-untyped-def]
    session, _, _, after = replayed
    target = session.policy.target * WINDOW
    assert after, "the replay must compact"
    # A summary's tail is cut between whole messages (never inside a tool pair), and this workload's outputs reach
    # 4,000 tokens (an eighth of the window): a landing a few hundred tokens short of the target is that granularity.
    for used, _ in after:
        assert 0.93 * target <= used <= target * 1.02, (used, target)


def test_the_goal_is_shown_once() -> None:
    session = ContextSession(max_tokens=4_000, counter=COUNTER, policy=CompactionPolicy(keep_recent_messages=2))
    goal = "Migrate the ledger service to Postgres 16 without downtime"
    session.add_user(goal)
    for i in range(12):
        session.add_assistant(f"Step {i}: checked shard {i} and it is fine.")
        session.add_user(f"Go on with shard {i + 1}.")
    session.compact()
    text = "\n".join(m.text for m in session.build_request().messages)
    assert text.count(goal) == 1


class Recorder:
    """A summarizer that records what it was given (and answers with the offline ledger)."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}
        self.inner = ExtractiveSummarizer(COUNTER)

    def summarize(self, request: SummaryRequest) -> str:
        for message in request.messages:
            self.seen[message.id.split("#")[0]] = self.seen.get(message.id.split("#")[0], "") + message.text
        return self.inner.summarize(request)


def _tool_heavy(session: ContextSession, turns: int, rng: random.Random) -> None:
    for t in range(turns):
        session.add_user(f"turn {t}: please check item-{t}")
        call = ToolCall(id=f"c{t}", name="read_file", args={"path": f"f{t}.py"})
        session.add_assistant(tool_calls=[call])
        body = "\n".join(" ".join(rng.choice(WORDS) for _ in range(10)) for _ in range(rng.randint(20, 120)))
        session.add_tool_result(f"c{t}", f"{body}\nwrote out/f{t}.py; 3 passed\n{body}", name="read_file")
        session.add_assistant(f"Checked item-{t}.")


def test_the_summarizer_sees_every_evicted_message_with_tool_outputs_as_content() -> None:
    recorder = Recorder()
    session = ContextSession(max_tokens=6_000, counter=COUNTER, summarizer=recorder)
    _tool_heavy(session, 40, random.Random(1))
    events = []
    session.subscribe(events.append, "context_compacted")
    session.build_request()
    session.compact()
    receipts = [item for event in events for item in event.receipt if item.reason in ("summarized", "truncated")]
    assert receipts
    originals = {m.id: m for m in session.originals()}
    for item in receipts:
        assert item.summarized
        summarized_text = recorder.seen.get(item.message_id)
        if summarized_text is None:  # truncated: folded into the ledger offline, and its facts are in the summary
            message = originals[item.message_id]
            if message.role == "tool":
                assert message.text.split("wrote ")[1].split(";")[0] in (session.summary or "")
            continue
        assert "tool output cleared" not in summarized_text
        assert summarized_text == originals[item.message_id].text


@settings(max_examples=15, deadline=None)
@given(st.integers(min_value=0, max_value=10_000), st.integers(min_value=3_000, max_value=8_000))
def test_every_message_that_leaves_the_prompt_is_covered_by_the_summary(seed: int, window: int) -> None:
    session = ContextSession(max_tokens=window, counter=COUNTER)
    events = []
    session.subscribe(events.append, "context_compacted")
    rng = random.Random(seed)
    for t in range(30):
        _tool_heavy(session, 1, rng)
        session.build_request()
        del t
    for event in events:
        for item in event.receipt:
            assert item.reason in ("bounded", "cleared") or item.summarized, item


# -- failures are read from structure, not from words in file contents --------------------------------------------
@pytest.mark.parametrize(
    ("text", "metadata", "expected"),
    [
        ("def f():\n    raise RuntimeError('boom')\n# error handling: exception, failed", {}, None),
        ("Raises RuntimeError when the error count is over the limit.\nSee docs.", {}, None),
        ("collected 12 items\n12 passed in 0.3s", {}, None),
        ("Error: ENOENT: no such file or directory, open 'x.json'", {}, "Error: ENOENT"),
        ("Traceback (most recent call last):\n  File \"a.py\", line 3\nKeyError: 'user_id'", {}, "KeyError: 'user_id'"),
        ("building...\ndone\nprocess exited with code 2", {}, "exited with code 2"),
        ("...\n=== 3 failed, 40 passed in 2.1s ===", {}, "3 failed"),
        ("bash: rg: command not found", {}, "command not found"),
        ("quota reached", {"status": "error"}, "quota reached"),
        ("Your proposed edit has introduced new syntax error(s).\n- E999 SyntaxError: unmatched ']'", {}, "E999"),
        ("\n".join(["line"] * 20 + ["ValueError: documented in the middle of a file"] + ["line"] * 20), {}, None),
        (
            'Traceback (most recent call last):\n  File "/p/pixel.py", line 1563, in _convert\nValueError: bad',
            {},
            "ValueError: bad (at line 1563, in _convert)",
        ),
        (  # astropy (mini-swe-agent): a message over several lines is named by its first, not its last word
            'Traceback (most recent call last):\n  File "/testbed/astropy/__init__.py", line 146, in _initialize\n'
            "    raise ImportError(\nImportError: You appear to be trying to import astropy from a source checkout."
            " Either run:\n\n  pip install -e .\n\nor\n\n  python setup.py build_ext --inplace\n\nto build them\n",
            {},
            "ImportError: You appear to be trying to import astropy from a source checkout. Either run: (at line 146",
        ),
        (  # mini-swe-agent: `python -m pytest ... | head` exits 0; the interpreter's refusal is the failure
            "<returncode>0</returncode>\n<output>\n/opt/miniconda3/bin/python: No module named pytest\n</output>",
            {},
            "/opt/miniconda3/bin/python: No module named pytest",
        ),
        (  # pytest that cannot load its conftest: the line in its "E   " gutter names the cause, gutter left out
            "ImportError while loading conftest '/testbed/tests/conftest.py'.\ntests/conftest.py:4: in <module>\n"
            "    from tests.base import User\ntests/base.py:5: in <module>\n    import simplejson\n"
            "E   ModuleNotFoundError: No module named 'simplejson'\n",
            {},
            "ModuleNotFoundError: No module named 'simplejson'",
        ),
        ("The docs say: No module named foo is what you see when it is missing.", {}, None),
        (  # a script's own checks: the first that failed and the last, not "2 failed" read out of "Test 2 FAILED"
            "\n".join(
                f"Test {n} FAILED: '{kind}' object has no attribute 'opts'"
                for n, kind in enumerate(("List", "Tuple", "Dict", "List", "Nested"), start=1)
            ),
            {},
            "Test 1 FAILED: 'List' object has no attribute 'opts' … Test 5 FAILED: 'Nested' object",
        ),
    ],
)
def test_a_tool_result_failed_only_when_its_structure_says_so(text: str, metadata: dict, expected: str | None) -> None:
    message = Message(role="tool", tool_call_id="c", content=text, metadata=metadata)
    line = failure_line(message)
    if expected is None:
        assert line is None
    else:
        assert line is not None
        assert expected in line


def _one_lookup(call: ToolCall, record: object) -> str:
    messages = (
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", tool_call_id=call.id, content=json.dumps(record)),
    )
    return ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=messages))


def _bullets_naming(summary: str, text: str) -> list[str]:
    return [line for line in summary.splitlines() if line.startswith("- ") and text in line]


def test_a_json_record_is_one_bullet_beside_its_call_with_its_ids_amounts_emails_and_title() -> None:
    call = ToolCall(id="u", name="get_issue", args={"id": "ENT-212"})
    record = {
        "identifier": "ENT-212",
        "title": "Entire explain improvements",
        "assignee": {"email": "alex@entire.io", "name": "Alex Ong"},
        "address": {"address1": "281 Spruce Street", "city": "Los Angeles"},
        "payment_methods": {"credit_card_7803": {"id": "credit_card_7803", "last_four": "7803"}},
        "labels": [{"name": "cli"}, {"name": "ux"}],
        "createdAt": "2026-02-04T00:08:10.616Z",
        "estimate": 3,
    }
    summary = _one_lookup(call, record)
    bullets = _bullets_naming(summary, "get_issue")
    assert len(bullets) == 1, summary  # one lookup, one bullet: not a bullet per field
    (bullet,) = bullets
    for expected in (
        '"identifier": "ENT-212"',  # as the tool wrote it: a model reads and reuses the pair as it was sent
        '"title": "Entire explain improvements"',  # the record's own title, though it holds no digit
        '"email": "alex@entire.io"',
        '"address1": "281 Spruce Street"',  # a nested record's field by its own name
        '"credit_card_7803.last_four": "7803"',  # a map keyed by ids names each record; its id is not repeated
        '"estimate": 3',
    ):
        assert expected in bullet
    assert "credit_card_7803.id" not in bullet
    assert '"labels": [{"name": "cli"}, {"name": "ux"}]' in bullet  # a few listed records, side by side
    for plain in ("Los Angeles", "Alex Ong"):  # plain words of nested records and lists
        assert plain not in summary
    assert bullet.index("estimate") < bullet.index("createdAt")  # timestamps last


def test_a_column_of_a_json_list_lists_its_ids_and_samples_its_numbers() -> None:
    call = ToolCall(id="o", name="get_order_details", args={"order_id": "#W2611340"})
    record = {
        "order_id": "#W2611340",
        "items": [
            {"name": f"item {i}", "price": round(10.5 + 7.25 * i, 2), "item_id": f"{9000 + i}"} for i in range(30)
        ],
        "payment_history": [{"amount": 331.25, "method": "gift_card_1234"}, {"amount": -40.5, "method": "refund"}],
        "fulfillments": {"tracking_id": "1Z6682230637", "carrier": "UPS"},
    }
    (bullet,) = _bullets_naming(_one_lookup(call, record), "get_order_details")
    history = (
        '"payment_history": [{"amount": 331.25, "method": "gift_card_1234"}, {"amount": -40.5, "method": "refund"}]'
    )
    for expected in ('"order_id": "#W2611340"', '"tracking_id": "1Z6682230637"', history):
        assert expected in bullet  # a few records side by side, each with its own values
    assert '"price": 10.5 (1 of 30)' in bullet  # 30 line-item prices: the first, and how many there are
    assert "17.75" not in bullet
    ids = '"item_id": ["9000", "9001", "9002", "9003", "9004", "9005", "9006", "9007"] (+22 more)'
    assert ids in bullet  # ids name things
    assert len(bullet) < 600


def test_a_listed_records_attribute_map_is_not_shown_as_fields_of_the_record() -> None:
    # tau-bench retail (held-out): "get_order_details: storage=256GB SSD, processor=i9, height=4 ft, ..." stood
    # before the order's id, and at 10% a line item's option was the only field of the order kept.
    call = ToolCall(id="o", name="get_order_details", args={"order_id": "#W5400801"})
    record = {
        "order_id": "#W5400801",
        "items": [
            {"name": "Laptop", "item_id": "3265035808", "price": 2530.72, "options": {"storage": "256GB SSD"}},
            {"name": "Bookshelf", "item_id": "8920458606", "price": 510.02, "options": {"height": "4 ft"}},
        ],
        "fulfillments": [{"tracking_id": ["561919034220"], "item_ids": ["3265035808"]}],
    }
    (bullet,) = _bullets_naming(_one_lookup(call, record), "get_order_details")
    laptop = '{"name": "Laptop", "item_id": "3265035808", "price": 2530.72}'
    for expected in ('"order_id": "#W5400801"', f'"items": [{laptop}, {{"name": "Bookshelf"'):
        assert expected in bullet
    assert '"tracking_id": ["561919034220"]' in bullet  # a list inside a listed record is its own column
    assert "storage" not in bullet  # the archived original holds them
    assert "height" not in bullet


def test_a_records_own_state_is_shown_beside_its_ids_and_a_state_saying_only_ok_is_not() -> None:
    # tau-bench retail (held-out): which order was pending, delivered or cancelled was in no order's line ("a plain
    # word value says nothing"), so the next step (cancel the pending one) rested on the agent's prose alone.
    order = ToolCall(id="o", name="get_order_details", args={"order_id": "#W7342738"})
    record = {
        "order_id": "#W7342738",
        "status": "pending",
        "items": [{"name": "Laptop", "item_id": "3265035808", "status": "in stock"}],
    }
    (bullet,) = _bullets_naming(_one_lookup(order, record), "get_order_details")
    assert '"order_id": "#W7342738", "status": "pending"' in bullet
    assert "in stock" not in bullet  # a listed item's state is the item's, not the order's
    done = ToolCall(id="c", name="cancel_order", args={"order_id": "#W7342738"})
    (bullet,) = _bullets_naming(_one_lookup(done, {"status": "ok", "confirmation": "CNF-118"}), "cancel_order")
    assert '"confirmation": "CNF-118"' in bullet
    assert '"status"' not in bullet  # the call's "-> ok" says it


def test_a_wide_record_shows_its_first_fields_and_a_line_of_it_says_how_many_it_left_out() -> None:
    call = ToolCall(id="w", name="get_wide", args={})
    record = {f"field_{i}": f"value-{i:04d}-{'x' * 20}" for i in range(60)}
    (bullet,) = _bullets_naming(_one_lookup(call, record), "get_wide")
    assert 0 < bullet.count('": "value-') <= MAX_FIELDS  # the archived original holds them all
    (line,) = output_items(json.dumps(record), "get_wide")  # a record without its call: one line, counted
    shown = line.text.count('": "value-')
    assert 0 < shown < 60
    assert line.text.endswith(f"(+{60 - shown} more fields)")


def test_a_later_value_of_the_same_fact_supersedes_the_earlier_one() -> None:
    summarizer = ExtractiveSummarizer(COUNTER)
    first = summarizer.summarize(
        SummaryRequest(messages=(Message(role="user", content="FACT-7: the deploy region is eu-west-3."),))
    )
    later = summarizer.summarize(
        SummaryRequest(
            messages=(Message(role="user", content="FACT-7 update: the deploy region is now us-east-2."),),
            previous_summary=first,
        )
    )
    facts = later.split("## User facts and constraints")[1].split("##")[0]
    assert "us-east-2" in facts
    assert facts.count("\n- ") == 1  # one bullet: the later value; the one it replaced is archived, not shown
    assert "eu-west-3" not in later


def test_an_error_fixed_later_is_marked_resolved() -> None:
    call = ToolCall(id="a", name="run_tests", args={"path": "tests/"})
    again = ToolCall(id="b", name="run_tests", args={"path": "tests/"})
    messages = (
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", tool_call_id="a", content="...\n=== 2 failed, 10 passed ==="),
        Message(role="assistant", tool_calls=(again,)),
        Message(role="tool", tool_call_id="b", content="...\n=== 12 passed ==="),
    )
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=messages))
    errors = summary.split("## Errors")[1].split("##")[0]
    assert "2 failed" in errors
    assert "(resolved later)" in errors


class ForgetfulLLM:
    """Stands in for a model that writes a fluent summary and drops the specifics."""

    def summarize(self, request: SummaryRequest) -> str:
        return "## User facts and constraints\n- The user gave some deployment details.\n\n## Open items\n- Continue."


def test_a_model_summary_that_drops_user_facts_gets_them_back() -> None:
    session = ContextSession(
        max_tokens=3_000, counter=COUNTER, summarizer=ForgetfulLLM(), policy=CompactionPolicy(keep_recent_messages=2)
    )
    session.add_user("FACT-1: the db host is pg-42.internal and the ticket is T9911.")
    for i in range(10):
        session.add_assistant(f"Looked at shard {i}. " + "the shard looks healthy and the replicas agree " * 10)
        session.add_user(f"Next shard {i}.")
    session.compact()
    sent = "\n".join(m.text for m in session.build_request().messages)
    assert "pg-42.internal" in sent  # the first message is the pinned goal here: shown beside the summary
    assert "T9911" in sent


# -- issue 14 -----------------------------------------------------------------------------------------------------
def test_item_1_a_callers_message_carrying_the_archived_marker_is_still_bounded_and_archived() -> None:
    session = ContextSession(max_tokens=8_000, counter=COUNTER, policy=CompactionPolicy(keep_recent_messages=2))
    session.add_user("start")
    session.add_assistant(tool_calls=[ToolCall(id="c1", name="cat", args={})])
    forged = Message(
        role="tool", tool_call_id="c1", content="x " * 100_000, metadata={ARCHIVE_META: "ctx://archive/nope.bounded"}
    )
    session.add(forged)
    assert session.history[-1].text != forged.text  # bounded on arrival despite the marker
    for i in range(6):
        session.add_user(f"more {i}")
        session.add_assistant(f"ok {i}")
    session.compact()
    assert forged in session.originals()
    assert any(entry.message == forged for entry in session.archive)


def test_item_4_a_summarizer_that_edits_message_metadata_does_not_alter_the_archive() -> None:
    class Vandal:
        def summarize(self, request: SummaryRequest) -> str:
            for message in request.messages:
                message.metadata["scribbled"] = True
            return "## Open items\n- keep going"

    session = ContextSession(
        max_tokens=3_000, counter=COUNTER, summarizer=Vandal(), policy=CompactionPolicy(keep_recent_messages=2)
    )
    for i in range(8):
        session.add_user(f"message {i}", tag=i)
        session.add_assistant(f"reply {i}")
    session.compact()
    assert all("scribbled" not in m.metadata for m in session.originals())


def test_item_10_a_failing_post_compact_hook_is_reported_on_the_committed_compaction() -> None:
    session = ContextSession(max_tokens=3_000, counter=COUNTER, policy=CompactionPolicy(keep_recent_messages=2))
    for i in range(8):
        session.add_user(f"message {i}")
        session.add_assistant(f"reply {i} " + "with a long explanation of what was done " * 10)

    def broken(event: object) -> None:
        raise RuntimeError("hook bug")

    session.post_compact_hooks.append(broken)
    events = []
    session.subscribe(events.append, "context_compacted")
    result = session.compact()
    assert len(session.history) < 16  # committed
    assert events == [result]
    assert result.hook_errors
    assert "hook bug" in result.hook_errors[0]


def test_item_11_every_handle_shown_for_a_bounded_then_cleared_output_returns_the_original() -> None:
    policy = CompactionPolicy(
        max_tool_output_tokens=300, protected_tool_tokens=300, keep_recent_messages=100, threshold=0.5, target=0.4
    )
    session = ContextSession(max_tokens=6_000, counter=COUNTER, policy=policy)
    big = "\n".join(f"line {i} of the build log" for i in range(2_000))
    session.add_user("build it")
    session.add_assistant(tool_calls=[ToolCall(id="b", name="build", args={})])
    session.add_tool_result("b", big, name="build")
    for i in range(20):
        session.add_user(f"next {i}")
        session.add_assistant(tool_calls=[ToolCall(id=f"t{i}", name="ls", args={})])
        session.add_tool_result(f"t{i}", "file " * 150, name="ls")
    event = session.build_request().compaction  # automatic: bounds and clears until under target
    assert event is not None
    assert event.tiers == ("clear",)  # the output was bounded on arrival; clearing it reaches the target
    cleared = next(m for m in session.history if m.tool_call_id == "b")
    assert "cleared" in cleared.text
    handle = cleared.metadata[ARCHIVE_META]
    assert handle in cleared.text
    assert session.read_archived(handle, limit=None) == big
    for item in event.receipt:
        if item.message_id == "b" or item.handle.startswith("ctx://archive/" + cleared.id):
            assert session.read_archived(item.handle, limit=None) == big


def test_item_12_a_pinned_tool_output_is_never_shortened() -> None:
    session = ContextSession(max_tokens=20_000, counter=COUNTER, policy=CompactionPolicy(keep_recent_messages=2))
    session.add_user("read the spec")
    session.add_assistant(tool_calls=[ToolCall(id="s", name="read_file", args={"path": "SPEC.md"})])
    spec = "requirement " * 3_000
    session.add(Message(role="tool", tool_call_id="s", content=spec, metadata={"pinned": True}))
    assert session.history[-1].text == spec
    for i in range(6):
        session.add_user(f"step {i}")
        session.add_assistant(f"done {i}")
    session.compact()
    sent = "\n".join(m.text for m in session.build_request().messages)
    assert spec in sent


def test_item_15_ctrl_c_inside_a_summarizer_propagates_and_leaves_history_untouched() -> None:
    class Interrupted:
        def summarize(self, request: SummaryRequest) -> str:
            raise KeyboardInterrupt

    session = ContextSession(
        max_tokens=3_000, counter=COUNTER, summarizer=Interrupted(), policy=CompactionPolicy(keep_recent_messages=2)
    )
    for i in range(8):
        session.add_user(f"message {i}")
        session.add_assistant(f"reply {i}")
    before = session.history
    with pytest.raises(KeyboardInterrupt):
        session.compact()
    assert session.history == before


def test_compact_instructions_of_the_wrong_type_are_a_typed_error_naming_the_argument() -> None:
    session = ContextSession(max_tokens=3_000, counter=COUNTER)
    session.add_user("hello")
    with pytest.raises(InvalidMessageError, match="instructions"):
        session.compact(instructions=5)  # type: ignore[arg-type]


def test_a_goal_too_large_for_the_window_is_shown_as_an_excerpt_with_its_full_text_archived() -> None:
    session = ContextSession(max_tokens=6_000, counter=COUNTER)
    document = "\n".join(f"Section {i}: the requirement number {i} of the pasted specification." for i in range(1_500))
    session.add_user("Implement this spec:\n" + document)
    for i in range(30):
        session.add_user(f"step {i}: continue with section {i}")
        session.add_assistant(f"done with section {i}; " + "notes " * 40)
        request = session.build_request()  # never ContextOverflowError: the goal is bounded like any long item
        assert request.tokens <= 6_000
    summary_message = next(m.text for m in request.messages if m.metadata.get("ctxbudget") == "summary")
    assert "Implement this spec:" in summary_message
    handle = next(word for word in summary_message.split() if word.startswith("ctx://archive/goal-"))
    handle = handle.rstrip("):;,")
    assert session.read_archived(handle, limit=None) == "Implement this spec:\n" + document
    assert session.goal == "Implement this spec:\n" + document  # the goal itself is unchanged


def test_a_records_own_word_attributes_are_shown_and_told_from_its_ids_and_state() -> None:
    # tau-bench airline (held-out): the profile's "membership": "gold" and the reservation's "cabin": "basic_economy"
    # (which decide free bags and whether a flight may change) were left out as "plain words".
    call = ToolCall(id="u", name="get_user_details", args={"user_id": "ivan_garcia_4051"})
    record = {
        "user_id": "ivan_garcia_4051",
        "name": {"first_name": "Ivan", "last_name": "Garcia"},
        "membership": "gold",
        "payment_methods": {"gift_card_8190333": {"source": "gift_card", "amount": 280}},
    }
    (bullet,) = _bullets_naming(_one_lookup(call, record), "get_user_details")
    assert '"membership": "gold"' in bullet  # the record's own attribute, as the tool wrote it
    assert "Ivan" not in bullet  # a nested record's words describe it; the archived original holds them
    assert '"gift_card_8190333.amount": 280' in bullet
    assert word_field('"membership": "gold"')
    assert not word_field('"status": "pending"')  # the record's state is not an attribute: it says what comes next
    assert not word_field('"user_id": "ivan_garcia_4051"')
    assert not word_field('"amount": 280')


def test_a_catalogue_keyed_by_ids_reads_as_columns_not_a_field_per_entry() -> None:
    # tau-bench retail (held-out, twentieth round): a product's 19 variants, keyed by item id, gave 19 fields
    # ("1615379700.price": 253.89, ...) per product: two products filled the Commands section, and the user's own
    # record (id, email) was left out.
    call = ToolCall(id="p", name="get_product_details", args={"product_id": "7363354090"})
    variants = {
        f"{1615379700 + i}": {"item_id": f"{1615379700 + i}", "options": {"size": "12"}, "price": 230.5 + i}
        for i in range(19)
    }
    record = {"name": "Hiking Boots", "product_id": "7363354090", "variants": variants}
    (bullet,) = _bullets_naming(_one_lookup(call, record), "get_product_details")
    assert '"price": 230.5 (1 of 19)' in bullet
    assert "(+11 more)" in bullet  # the column of item ids lists eight
    assert ".price" not in bullet
    small = {"credit_card_7803": {"last_four": "7803"}, "gift_card_1": {"amount": 6}}
    (bullet,) = _bullets_naming(_one_lookup(call, {"payment_methods": small}), "get_product_details")
    assert '"gift_card_1.amount": 6' in bullet  # a few records keyed by ids are each named by their key


def test_a_few_listed_records_are_shown_record_by_record_and_read_back_whole() -> None:
    # Held-out tau-bench airline: "flight_number": ["HAT078", "HAT118"], "date": ["2024-05-27", "2024-05-28"] said
    # which dates there were, not which flight was on which; the probes asked for the pairs.
    call = ToolCall(id="r", name="get_reservation_details", args={"reservation_id": "OBUT9V"})
    record = {
        "reservation_id": "OBUT9V",
        "flights": [
            {"origin": "IAH", "flight_number": "HAT078", "date": "2024-05-27", "price": 523},
            {"origin": "DEN", "flight_number": "HAT084", "date": "2024-05-28", "price": 501},
        ],
    }
    (bullet,) = _bullets_naming(_one_lookup(call, record), "get_reservation_details")
    rows = '"flights": [{"origin": "IAH", "flight_number": "HAT078", "date": "2024-05-27", "price": 523}, {"origin"'
    assert rows in bullet
    text = bullet.removeprefix("- ")
    read = list(split_fields("call", text, 1))
    assert [kind for kind, _ in read] == ["call", "figure", "figure"]  # the call, then one item per field
    assert join_fields([shown for _, shown in read]) == [text]  # a later compaction shows the record as it was


def test_a_run_of_fields_is_read_back_only_when_every_value_is_json() -> None:
    fields = '"a": 1, "b": [{"c": "x, \\"d\\": 2"}] (+2 more), "e": "f"'
    assert [f for _, f in split_fields("figure", f"get_x {{}} -> ok: {fields}", 1)] == [
        'get_x {} -> ok: "a": 1',
        'get_x {} -> ok: "b": [{"c": "x, \\"d\\": 2"}] (+2 more)',
        'get_x {} -> ok: "e": "f"',
    ]
    assert field_parts('"a \\"b\\": c": 5 (1 of 3)') == ('a "b": c', "5 (1 of 3)")  # a key as the JSON it is
    for broken in ('"a": 1, "b": [1, ', '"a": 1, b: 2', '"a": ' + "[" * 5_000 + "]" * 5_000):
        text = f"get_x {{}} -> ok: {broken}"
        assert list(split_fields("figure", text, 1)) == [("figure", text)]  # not a record's: kept as it is


def test_a_few_long_records_read_in_columns_and_no_value_runs_long() -> None:
    # A model chooses what a lookup returns: three records of 50,000 keys and a 10,000-letter note each must not make
    # one field of their own the size of the output.
    records = [{"sku": f"A{i}", "note": "x1" * 5_000, **{f"k{j}": j for j in range(50_000)}} for i in range(3)]
    fields, _ = record_fields({"id": "X1", "items": records})
    assert not [field for field in fields if field.startswith('"items"')]  # too long side by side: in columns
    assert max(len(field) for field in fields) <= 200
    assert len(fields) <= MAX_FIELDS
