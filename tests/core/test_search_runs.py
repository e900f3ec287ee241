"""Searching commands and their runs: tool use written as text, and questions about which run of a command.

Each case is read from a held-out transcript (``benchmarks/quality/heldout``): mini-swe-agent's text format on
pytest-7432, and marshmallow-1359's and sqlfluff-2419's repeated runs of one command.
"""

from __future__ import annotations

from ctxbudget import Archive
from ctxbudget.archive._order import order_asked
from ctxbudget.archive._text import CALL_TERM, query_terms, tokenize
from ctxbudget.messages import Message, ToolCall
from ctxbudget.messages._text_actions import action, is_result_turn

FENCE = "```"


def _turn(archive: Archive, role: str, text: str) -> Message:
    message = Message(role=role, content=text)  # type: ignore[arg-type]
    archive.put_message(message, "summarized")
    return message


def _run(archive: Archive, command: str, output: str, narration: str = "") -> Message:
    """A bash call and its result (cleared, as compaction does); returns the result message."""
    call = ToolCall(id=f"c{len(archive)}", name="bash", args={"command": command})
    archive.put_message(Message(role="assistant", content=narration, tool_calls=(call,)), "summarized")
    result = Message(role="tool", content=output, tool_call_id=call.id, name="bash")
    archive.put_message(result, "cleared")
    return result


# -- tool use written as text ---------------------------------------------------------------------------------------
def test_a_reply_with_one_command_block_is_a_call_and_the_returncode_turn_its_result() -> None:
    reply = Message(
        role="assistant",
        content=f"THOUGHT: `testing/test_skipping.py` seems relevant. I'll run it.\n\n{FENCE}bash\n"
        f"pytest testing/test_skipping.py\n{FENCE}",
    )
    read = action(reply)
    assert read is not None
    call, said = read
    assert (call.name, call.args, said) == ("bash", {"command": "pytest testing/test_skipping.py"},
                                            "`testing/test_skipping.py` seems relevant. I'll run it.")  # fmt: skip
    assert is_result_turn(Message(role="user", content="<returncode>1</returncode>\n<output>\nE   boom\n</output>"))
    assert not is_result_turn(Message(role="user", content="Please run <returncode>0</returncode> again"))


def test_a_reply_with_two_command_blocks_or_a_code_snippet_only_is_text() -> None:
    two = f"Let me do both.\n{FENCE}bash\nls\n{FENCE}\nand\n{FENCE}bash\npwd\n{FENCE}"
    snippet = f"The hook reads:\n{FENCE}python\nif runxfail:\n    pass\n{FENCE}\nThat is the bug."
    assert action(Message(role="assistant", content=two)) is None
    assert action(Message(role="assistant", content=snippet)) is None
    mixed = f"The hook reads:\n{FENCE}python\npass\n{FENCE}\nSo I run:\n{FENCE}bash\ngit diff\n{FENCE}"
    read = action(Message(role="assistant", content=mixed))
    assert read is not None
    assert read[0].args == {"command": "git diff"}


def test_a_command_written_as_text_and_its_result_are_one_hit_that_names_the_command() -> None:
    # pytest-7432: "how are the skipping tests run" is answered by the command; indexed as the assistant's talk, the
    # block was a line among the replies that discuss the skipping tests, and its result a user turn.
    archive = Archive()
    _turn(archive, "assistant", "THOUGHT: The skipping tests cover marks; running them is the next step once the "
          "skipping module is read and the skipping tests are understood.")  # fmt: skip
    _turn(archive, "assistant", f"THOUGHT: `testing/test_skipping.py` seems relevant. I'll run it.\n\n{FENCE}bash\n"
          f"pytest testing/test_skipping.py\n{FENCE}")  # fmt: skip
    result = _turn(archive, "user", "<returncode>0</returncode>\n<output>\ncollected 77 items\n\n"
                   "testing/test_skipping.py ........ [100%]\n\n===== 77 passed in 2.76s =====\n</output>")  # fmt: skip
    _turn(archive, "assistant", "THOUGHT: All tests in the skipping tests file passed; the skipping tests run fast.")
    hits = archive.search("how are the skipping tests run", k=3)
    assert [(hit.message_id, hit.source) for hit in hits][:1] == [(result.id, "bash")]
    assert hits[0].call == 'bash {"command":"pytest testing/test_skipping.py"}'


def test_a_result_turn_with_a_nonzero_returncode_reports_a_failure() -> None:
    archive = Archive()
    _turn(archive, "assistant", f"Now let me run it.\n{FENCE}bash\npython reproduce_issue.py\n{FENCE}")
    failed = _turn(archive, "user", "<returncode>1</returncode>\n<output>\nboom\n</output>")
    _turn(archive, "assistant", f"Let me list the scripts.\n{FENCE}bash\nls *.py\n{FENCE}")
    _turn(archive, "user", "<returncode>0</returncode>\n<output>\nreproduce_issue.py\nsetup.py\n</output>")
    assert archive.search("why did reproduce_issue.py fail", k=1)[0].message_id == failed.id


# -- which run ------------------------------------------------------------------------------------------------------
def test_order_words_ask_for_the_earliest_or_the_latest_run() -> None:
    assert order_asked("why did the reproduction script first fail") == -1
    assert order_asked("what does L060 report for NVL now") == 1
    assert order_asked("is the pip-installed astropy still installed") == 1
    assert order_asked("which test failed after the signature change") == 0  # after an event: not the latest run
    assert order_asked("which lint errors came first and which last") == 0
    # eighteenth held-out round (matplotlib): the order word names the event, not the run asked for
    assert order_asked("what error remained after the first fix") == 0
    assert order_asked("is it still failing after the last edit") == 1


def test_first_asks_for_the_earliest_run_of_a_command_that_fails_the_way_asked() -> None:
    # marshmallow-1359: the script first failed on the missing package; the second run (after pip install -e .)
    # failed on the bug, and its narration names "the reproduction script", which the first one's does not.
    archive = Archive()
    first = _run(archive, "python reproduce_issue.py", "Traceback (most recent call last):\n  File "
                 "\"/testbed/reproduce_issue.py\", line 1\nModuleNotFoundError: No module named 'marshmallow'",
                 narration="Now let me run it to see if it reproduces the error:")  # fmt: skip
    _run(archive, "pip install -e .", "Successfully installed marshmallow-3.13.0")
    _run(archive, "python reproduce_issue.py", "Traceback (most recent call last):\n  File \"/testbed/src/"
         "marshmallow/fields.py\", line 1117\nAttributeError: 'List' object has no attribute 'opts'",
         narration="Now let me run the reproduction script again:")  # fmt: skip
    _run(archive, "python reproduce_issue.py", "Schema created successfully", narration="Run the script again.")
    assert archive.search("why did the reproduction script first fail", k=1)[0].message_id == first.id


def test_now_asks_for_the_latest_run_that_reports_what_is_asked() -> None:
    archive = Archive()
    _run(archive, "sqlfluff lint test.sql --rules L060", "L060 | Use 'COALESCE' instead of 'IFNULL' or 'NVL'.")
    _run(archive, "python3 fix_rule.py", "")
    latest = _run(archive, "sqlfluff lint test.sql --rules L060", "L060 | Use 'COALESCE' instead of 'NVL'.")
    top = archive.search("what does L060 report for NVL now", k=1)[0]
    assert top.message_id == latest.id


def test_a_question_about_how_something_was_done_asks_for_a_call() -> None:
    for query in ("how are the skipping tests run", "how was the edit to skipping.py applied", "how did it get fixed"):
        assert CALL_TERM in query_terms(query, tokenize), query
    for query in ("how does --commit work", "how many tests ran", "what is the batch upload timeout"):
        assert CALL_TERM not in query_terms(query, tokenize), query


def test_now_shows_the_latest_of_one_command_run_again_not_each_run() -> None:
    # sqlfluff-2419: the rule file was read three times between edits; "what does L060 report for NVL now" filled
    # the top 3 with those reads (and a git diff of the same file, taken for a run of the same command), above the
    # lint run that answers it.
    archive = Archive()
    rule = '"""Use ``COALESCE`` instead of ``IFNULL`` or ``NVL``."""\nclass Rule_L060(BaseRule):\n'
    rule += "    # Only care if the function is ``IFNULL`` or ``NVL``.\n" * 3
    reads = [_run(archive, "cat src/sqlfluff/rules/L060.py", rule) for _ in range(3)]
    diff = "--- a/src/sqlfluff/rules/L060.py\n+++ b/src/sqlfluff/rules/L060.py\n- # Only care if ``IFNULL`` or ``NVL``."
    _run(archive, "git diff src/sqlfluff/rules/L060.py", diff)
    lint = _run(archive, 'echo "SELECT nvl(foo, 0) AS bar FROM baz;" > t.sql && sqlfluff lint t.sql --rules L060',
                '[{"code": "L060", "description": "Use \'COALESCE\' instead of \'NVL\'."}]')  # fmt: skip
    shown = [hit.message_id for hit in archive.search("what does L060 report for NVL now", k=3)]
    assert lint.id in shown
    assert [read.id for read in reads if read.id in shown] == [reads[-1].id]


def test_a_line_that_reads_out_the_output_before_is_its_own_hit_not_the_next_commands() -> None:
    # pytest-7432: "Wait, `test_xfail_unexpected` failed with `[XPASS(strict)]`" reads out the run before it and is
    # written beside the next command (cat pyproject.toml ...); as that command's narration, a hit showed the config.
    archive = Archive()
    _turn(archive, "assistant", f"THOUGHT: Let me run the xfail tests.\n{FENCE}bash\npytest -rx test_xfail.py\n{FENCE}")
    _turn(archive, "user", "<returncode>1</returncode>\n<output>\ntest_xfail.py xF\n===== FAILURES =====\n"
          "_____ test_xfail_unexpected _____\n[XPASS(strict)]\n===== 1 failed, 1 xfailed =====\n</output>")  # fmt: skip
    reading = _turn(archive, "assistant", "THOUGHT: Wait, `test_xfail_unexpected` failed with `[XPASS(strict)]`. "
                    "Let me check `pyproject.toml`.\n" + f"{FENCE}bash\ncat pyproject.toml\n{FENCE}")  # fmt: skip
    _turn(archive, "user", "<returncode>0</returncode>\n<output>\n[tool.pytest.ini_options]\nxfail_strict = true\n"
          "</output>")  # fmt: skip
    hits = archive.search("test_xfail_unexpected XPASS strict", k=3)
    assert reading.id in [hit.message_id for hit in hits]


def test_a_failure_word_not_in_the_archive_still_weighs_as_fail() -> None:
    # sqlfluff-2419: "what broke the first pytest run" asks for the pytest run whose conftest could not import yaml;
    # "broke" occurs nowhere, so the failure weighed no more than its one term, under texts that say "pytest" and
    # "run" more often than the failed run does.
    archive = Archive()
    _turn(archive, "assistant", "The rule tests run under pytest: run pytest from /testbed so that pytest finds them.")
    _turn(archive, "assistant", "L060 fails on IFNULL and on NVL alike; the fixture lists which cases should fail.")
    for package in ("pyyaml", "tblib", "regex"):
        _run(archive, f"pip install {package}", f"Successfully installed {package}\nWARNING: Running pip as 'root'")
    answer = _run(archive, "python -m pytest test/rules/yaml_test_cases_test.py -k L060 -xvs 2>&1 | head -30",
                  "ImportError while loading conftest '/testbed/test/conftest.py'.\n"
                  "E   ModuleNotFoundError: No module named 'yaml'")  # fmt: skip
    assert archive.search("what broke the first pytest run", k=1)[0].message_id == answer.id
