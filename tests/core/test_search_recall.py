"""Searching the archive finds what compaction left out: how natural questions reach the message holding the answer.

Each test is one general reading of a question or a text, found missing on real transcripts
(``benchmarks/bench_real.py``: the probes neither in the compacted request nor in a top-3 search hit).
"""

from __future__ import annotations

import json

from ctxbudget import Archive
from ctxbudget.archive._text import COUNT_TERM, FAILURE_TERM, STOPWORDS, analyze, query_terms, tokenize
from ctxbudget.messages import Message, ToolCall


def _call(archive: Archive, name: str, args: dict[str, object], result: str, narration: str = "") -> Message:
    """Archive an assistant call and its result (cleared, as compaction does); returns the result message."""
    call = ToolCall(id=f"c{len(archive)}", name=name, args=args)
    archive.put_message(Message(role="assistant", content=narration, tool_calls=(call,)), "cleared")
    result_message = Message(role="tool", content=result, tool_call_id=call.id, name=name)
    archive.put_message(result_message, "cleared")
    return result_message


def _say(archive: Archive, role: str, text: str) -> Message:
    message = Message(role=role, content=text)  # type: ignore[arg-type]
    archive.put_message(message, "summarized")
    return message


# -- question-framing words, in any inflection -------------------------------------------------------------------
def test_a_framing_word_is_dropped_from_a_query_in_any_inflection_not_only_as_listed() -> None:
    # "give", "gives", "anything" frame a question; their stems (giv, anyth) must not become query terms.
    for query in ("does the fixed stack give the expected matrix", "what gives", "did anything change"):
        terms = query_terms(query, tokenize)
        assert not {"giv", "gav", "anyth", "someth"} & set(terms), (query, terms)
    assert query_terms("does the fixed stack give the expected matrix", tokenize)[:4] == [
        "fix",
        "stack",
        "expect",
        "matrix",
    ]


def test_a_framing_verb_in_the_question_does_not_pull_up_texts_that_use_it() -> None:
    archive = Archive()
    answer = _call(archive, "bash", {"command": "python check_matrix.py"},
                   "Fixed result: [[1, 0], [0, 1]]\nExpected: [[1, 0], [0, 1]]\nMatch: True")  # fmt: skip
    _say(archive, "assistant", "The stack code gives up early and gives a wrong matrix.")
    _say(archive, "assistant", "Reading the stack module now.")
    top = archive.search("does the fixed stack give the expected matrix", k=1)[0]
    assert top.message_id == answer.id


# -- possessives and contractions -----------------------------------------------------------------------------
def test_possessive_and_contraction_fragments_are_not_terms() -> None:
    assert {"s", "t", "ll", "re", "ve", "don", "doesn", "isn"} <= STOPWORDS
    assert analyze(tokenize("Here's what's wrong: the worktree's index isn't read, don't prune")) == [
        "wrong",
        "worktre",
        "index",
        "read",
        "prun",
    ]
    assert "s" not in query_terms("where does the worktree's .git file point", tokenize)


def test_a_possessive_in_the_question_matches_the_noun_not_every_its_and_heres() -> None:
    archive = Archive()
    answer = _call(archive, "bash", {"command": "cat .worktrees/1/.git"}, "gitdir: /repo/.git/worktrees/1")
    _say(archive, "assistant", "Here's what's going on: it's the worktree's index that's stale, that's why it's slow.")
    _say(archive, "assistant", "The worktree index is stale after gc; the git dir is fine.")
    top = archive.search("where does the worktree's .git file point", k=1)[0]
    assert top.message_id == answer.id


# -- questions about a number -----------------------------------------------------------------------------------
def test_a_how_many_question_also_asks_for_a_count() -> None:
    assert COUNT_TERM in query_terms("how many loose objects are there", tokenize)
    assert COUNT_TERM in query_terms("How many retries did the job take?", tokenize)
    assert COUNT_TERM not in query_terms("which objects are loose", tokenize)


def test_how_many_finds_the_output_that_counts_them_over_talk_about_them() -> None:
    archive = Archive()
    _say(archive, "assistant", "Loose objects pile up: every save writes loose objects, and gc packs loose objects.")
    answer = _call(archive, "Bash", {"command": "git count-objects -v", "description": "Count loose objects"},
                   "count: 4553\nsize: 502244\nin-pack: 40120\npacks: 29")  # fmt: skip
    _say(archive, "user", "Why are there so many loose objects? The loose objects keep coming back.")
    top = archive.search("how many loose objects are there", k=1)[0]
    assert top.message_id == answer.id
    assert "count: 4553" in top.text


# -- length normalization -----------------------------------------------------------------------------------------
def test_a_long_record_naming_the_asked_field_reaches_the_top_three_over_short_remarks() -> None:
    # A tool's JSON record holds the answer under a key the question names; short remarks repeat the question's
    # words. Length normalization at BM25's usual b=0.75 ranks the record fourth, under all three remarks.
    archive = Archive()
    for i in range(12):
        _say(archive, "user", f"Note {i}: the weather in town {i} is mild and the trains run on time.")
    record = {
        "order_id": "ORD-5521", "customer_id": "cu_88", "created": "2024-05-01",
        "items": [{"sku": f"SKU-{i}", "name": f"item {i}", "quantity": i, "price": 10 + i} for i in range(4)],
        "shipping_method": "express_overnight", "shipping_address": {"city": "Denver", "zip": "80243"},
        "payment": {"source": "credit_card", "brand": "visa", "last_four": "2076"}, "notes": "leave at the door",
    }  # fmt: skip
    answer = _call(archive, "get_order_details", {"order_id": "ORD-5521"}, json.dumps(record))
    _say(archive, "user", "Can the shipping on my order be faster?")
    _say(archive, "assistant", "Your order will ship by the method you chose.")
    _say(archive, "assistant", "Shipping for this order is handled by our partner.")
    hits = archive.search("which shipping method does the order use", k=3)
    assert answer.id in [hit.message_id for hit in hits]
    assert "express_overnight" in next(hit.text for hit in hits if hit.message_id == answer.id)


# -- records' keys --------------------------------------------------------------------------------------------------
def test_two_words_of_a_question_also_ask_for_the_snake_case_key_they_name() -> None:
    terms = query_terms("which payment method does the user have", tokenize)
    assert {"payment_method", "payment_methods"} <= set(terms)
    assert "item_id" in query_terms("what are the hiking boots item id and price", tokenize)


def test_a_question_naming_a_records_key_finds_the_record_with_that_key_not_the_ones_sharing_its_words() -> None:
    # tau-bench retail task 54: "which payment method does the user have" is answered by get_user_details'
    # "payment_methods"; every order record names "payment_method_id" in its payment history, and the user's id.
    archive = Archive()
    user = {
        "name": {"first_name": "Amelia", "last_name": "Silva"}, "email": "amelia.silva7872@example.com",
        "payment_methods": {"gift_card_3491931": {"source": "gift_card", "balance": 73, "id": "gift_card_3491931"}},
        "orders": ["#W2586676", "#W5400801", "#W4597054"],
    }  # fmt: skip
    answer = _call(archive, "get_user_details", {"user_id": "amelia_silva_7726"}, json.dumps(user))
    for order in ("#W2586676", "#W5400801", "#W4597054"):
        record = {
            "order_id": order, "user_id": "amelia_silva_7726", "status": "delivered",
            "items": [{"name": "Water Bottle", "item_id": "6974536207", "price": 49.3}],
            "payment_history": [{"transaction_type": "payment", "amount": 49.3,
                                 "payment_method_id": "gift_card_3491931"}],
        }  # fmt: skip
        _call(archive, "get_order_details", {"order_id": order}, json.dumps(record))
    top = archive.search("which payment method does the user have", k=1)[0]
    assert top.message_id == answer.id


# -- framing words --------------------------------------------------------------------------------------------------
def test_current_frames_a_question_as_currently_does() -> None:
    # tau-bench airline task 9: "what cabin is the current reservation" is answered by the reservation's record;
    # "current" is in the user's and the agent's remarks about the reservation, never in a record.
    assert "current" not in query_terms("what cabin is the current reservation", tokenize)
    archive = Archive()
    record = {
        "reservation_id": "K1NW8N", "user_id": "mohamed_silva_9265", "origin": "JFK", "destination": "SFO",
        "flight_type": "round_trip", "cabin": "basic_economy",
        "flights": [{"origin": "JFK", "destination": "SFO", "flight_number": f"HAT0{n}", "date": "2024-05-26",
                     "price": 60 + n} for n in range(20, 24)],
        "passengers": [{"first_name": "Mohamed", "last_name": "Silva", "dob": "1960-11-26"}],
        "payment_history": [{"payment_id": "gift_card_8020792", "amount": 198}], "insurance": "no",
    }  # fmt: skip
    answer = _call(archive, "get_reservation_details", {"reservation_id": "K1NW8N"}, json.dumps(record))
    for i in range(10):
        _say(archive, "user", f"Note {i}: the weather in town {i} is mild and the trains run on time.")
    _say(archive, "user", "If my current reservation is in basic economy and can't be changed, could we cancel it?")
    _say(archive, "assistant", "To proceed with canceling your current reservation I need the cancellation reason.")
    top = archive.search("what cabin is the current reservation", k=1)[0]
    assert top.message_id == answer.id
    assert '"cabin": "basic_economy"' in top.text


# -- failure words ------------------------------------------------------------------------------------------------
def test_every_failure_word_asks_for_the_failure_in_any_form_the_query_takes() -> None:
    for query in ("what broke the first pytest run", "why was access denied", "what breaks the build"):
        assert FAILURE_TERM in query_terms(query, tokenize), query


def test_what_broke_a_run_finds_the_run_that_failed_over_texts_that_name_the_run() -> None:
    # mini-swe-agent on sqlfluff-2419: "what broke the first pytest run" asks for the run whose conftest failed to
    # import yaml; the test file it read and pip's install of pytest both say "run" and "pytest" more often.
    archive = Archive()
    test_file = '"""Runs the rule test cases."""\nimport pytest\n\ndef test__rule_test_case(case):\n    run(case)'
    _call(archive, "bash", {"command": "cat test/rules/yaml_test_cases_test.py"}, test_file)
    _call(archive, "bash", {"command": "pip install pytest 2>&1 | tail -2"},
          "Successfully installed pytest-9.0.3\nWARNING: Running pip as the 'root' user can result in broken "
          "permissions; run pip in a virtual environment")  # fmt: skip
    answer = _call(archive, "bash", {"command": "python -m pytest test/rules/yaml_test_cases_test.py -k L060"},
                   "ImportError while loading conftest '/testbed/test/conftest.py'.\n"
                   "E   ModuleNotFoundError: No module named 'yaml'")  # fmt: skip
    top = archive.search("what broke the pytest run", k=1)[0]
    assert top.message_id == answer.id
