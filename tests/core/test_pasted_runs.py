"""A run's output the user pasted is read as output: its failure is an open error, its lines are no statements.

Twenty-fourth held-out round (Claude Code, entireio/cli): the user wrote "I think we need to apply the mock in more
places:" and pasted 77 lines of ``go test`` output. Their lines became the user's "facts" (``ok
github.com/entireio/cli/cmd/entire/cli/agent 2.112s``, ``Captured state before prompt: 1 untracked files`` three
times), and the failure itself was nowhere in the Errors.
"""

from __future__ import annotations

from ctxbudget import Message
from ctxbudget.compaction.outcomes import failure_line
from ctxbudget.compaction.statements import user_statements
from ctxbudget.compaction.summarize import ExtractiveSummarizer, SummaryRequest
from ctxbudget.messages import TiktokenCounter

RUN = "\n".join(
    [
        "We need to apply the mock in more places. These still fail:",
        "--- FAIL: TestRunEnableWithStrategy_PreservesLocalSettings (0.00s)",
        "    setup_test.go:408: runEnableWithStrategy() error = no agents installed",
        *(f"Captured state before prompt: {n} untracked files, transcript at line {n + 2}" for n in range(3)),
        "FAIL",
        "FAIL    github.com/entireio/cli/cmd/entire/cli    4.207s",
        *(f"ok      github.com/entireio/cli/cmd/entire/cli/pkg{n}    1.{n}12s" for n in range(40)),
    ]
)


def test_a_pasted_runs_lines_are_not_the_users_statements() -> None:
    said = [statement.text for statement in user_statements(RUN) if statement.kind != "paste"]
    assert said == ["We need to apply the mock in more places."]


def test_a_pasted_runs_failure_is_an_open_error() -> None:
    messages = (
        Message(role="user", content="Make `entire enable` check that an agent is installed."),
        Message(role="assistant", content="Done: `IsInstalled()` is checked before enabling."),
        Message(role="user", content=RUN),
    )
    summary = ExtractiveSummarizer(TiktokenCounter()).summarize(SummaryRequest(messages=messages))
    errors = summary.split("## Errors", 1)[1]
    assert "- the user pasted a failure -> --- FAIL: TestRunEnableWithStrategy_PreservesLocalSettings" in errors
    assert "Captured state" not in summary
    assert "pkg3" not in summary


def test_the_goals_own_failure_is_not_repeated_beside_it_unless_its_excerpt_omits_it() -> None:
    # mini-swe-agent's task (matplotlib-26291): the traceback is the goal's; shown whole, its failure is there
    report = (
        "<pr_description>\n[Bug]: Error while creating inset axes\n"
        + "Some context about the figure and the demo this follows, said over several lines.\n" * 40
        + "AttributeError                            Traceback (most recent call last)\n"
        "File ~/envs/lib/python3.8/site-packages/matplotlib/offsetbox.py:399, in OffsetBox.get_window_extent(self)\n"
        "--> 399         renderer = self.figure._get_renderer()\n\n"
        "AttributeError: 'NoneType' object has no attribute '_get_renderer'\n</pr_description>"
    )
    goal = Message(role="user", id="goal", content=report)
    work = Message(role="assistant", content="I'll set `self.figure` in `__call__` when it is None.")

    def summary(shown: str) -> str:
        request = SummaryRequest(messages=(goal, work), goal=shown, goal_id="goal", max_tokens=800)
        return ExtractiveSummarizer(TiktokenCounter()).summarize(request)

    assert "the user pasted a failure" not in summary(report)
    excerpt = summary("<pr_description> [Bug]: Error while creating inset axes [... omitted ...]")
    assert (
        "- the user pasted a failure -> AttributeError: 'NoneType' object has no attribute '_get_renderer' (at "
        "line 399, in OffsetBox.get_window_extent(self))" in excerpt
    )


def test_an_ipython_traceback_names_the_frame_it_was_raised_in() -> None:
    output = (
        "AttributeError                            Traceback (most recent call last)\n"
        "File ~/envs/lib/python3.8/site-packages/matplotlib/_tight_bbox.py:28, in adjust_bbox(fig)\n"
        "---> 28     ax.apply_aspect(locator(ax, None))\n\n"
        "File ~/envs/lib/python3.8/site-packages/matplotlib/offsetbox.py:399, in OffsetBox.get_window_extent(self)\n"
        "--> 399         renderer = self.figure._get_renderer()\n\n"
        "AttributeError: 'NoneType' object has no attribute '_get_renderer'\n\nI was expecting anything\n"
    )
    assert failure_line(Message(role="tool", tool_call_id="c", content=output)) == (
        "AttributeError: 'NoneType' object has no attribute '_get_renderer' (at line 399, in "
        "OffsetBox.get_window_extent(self))"
    )
