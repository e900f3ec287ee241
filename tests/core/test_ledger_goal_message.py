"""What the goal's own message asks is the goal, shown beside the summary, never the current task.

mini-swe-agent's first message is a PR description and a template of rules and workflow steps ("Verify your fix
works by running your script again"). In a small window the session pins an excerpt of it, the middle archived: the
steps of that middle are then no longer found in the goal's text, and read as the user's newest requests they
became "Now: Verify your fix works ..." and the "Latest request" when the patch was done.
"""

from __future__ import annotations

from ctxbudget import Message
from ctxbudget.compaction.summarize import ExtractiveSummarizer, SummaryRequest
from ctxbudget.messages import TiktokenCounter

STEPS = (
    "## Recommended Workflow\n\n1. Analyze the codebase by finding and reading relevant files\n"
    "2. Create a script to reproduce the issue\n3. Edit the source code to resolve the issue\n"
    "4. Verify your fix works by running your script again\n5. Test edge cases to ensure your fix is robust\n"
)
GOAL = Message(
    role="user",
    id="goal",
    content="<pr_description>\nFields.DateTime fails when its parent is a List field.\n</pr_description>\n\n"
    + "Some background on the environment you work in, over several lines.\n" * 30
    + STEPS
    + "Submit your changes as a git patch when you are done.\n" * 10,
)
EXCERPT = "<pr_description> Fields.DateTime fails when its parent is a List field. </pr_description> [... omitted ...]"
WORK = [
    Message(role="assistant", content="I'll edit src/marshmallow/fields.py to use self.root.opts."),
    Message(role="user", content="ok"),
]


def _summary(goal_id: str | None) -> str:
    request = SummaryRequest(messages=(GOAL, *WORK), goal=EXCERPT, goal_id=goal_id, max_tokens=600)
    return ExtractiveSummarizer(TiktokenCounter()).summarize(request)


def test_the_goal_messages_requests_are_not_the_task_or_the_latest_request() -> None:
    summary = _summary("goal")
    assert "Now: " not in summary
    assert "## Latest request" not in summary
    assert "Verify your fix works" not in summary


def test_without_the_goals_id_its_omitted_steps_read_as_the_newest_requests() -> None:
    """What the id prevents: the same span, the goal known by its excerpt alone."""
    summary = _summary(None)
    assert "Verify your fix works" in summary.split("## Latest request", 1)[-1] or "Now: " in summary


def test_a_requests_list_items_stay_apart_in_the_latest_request() -> None:
    asks = Message(role="user", content="Please rename the flag\nPlease update the docs\nPlease bump the version")
    request = SummaryRequest(messages=(*WORK, asks), max_tokens=400)
    latest = ExtractiveSummarizer(TiktokenCounter()).summarize(request).split("## Latest request\n- ", 1)[1]
    assert "the flag; Please update the docs; Please bump the version" in latest


def test_the_goals_own_paste_is_neither_its_bullet_nor_its_template_comments() -> None:
    """A SWE-bench task (astropy-13033, held-out): its issue template's guidance, in HTML comments, had filled "User
    facts" under a "User pasted 224 lines ..." bullet for the very message the goal shows."""
    template = (
        "<!-- This comments are hidden when you submit the issue,\nso you do not need to remove them! -->\n"
        "<!-- Please be sure to check out our contributing guidelines,\nhttps://example.org/CONTRIBUTING.md -->\n"
    )
    goal = Message(
        role="user",
        id="goal",
        content=f"<pr_description>\n{template}TimeSeries: misleading exception when a required column is missing."
        "\n</pr_description>\nThe staging database is db-stg-4 on port 5433 in this setup.\n"
        + "    ts.check()\n"
        * 300,
    )
    shown = "TimeSeries: misleading exception when a required column is missing. [... omitted ...]"  # its excerpt
    request = SummaryRequest(messages=(goal, *WORK), goal=shown, goal_id="goal", max_tokens=600)
    summary = ExtractiveSummarizer(TiktokenCounter()).summarize(request)
    assert "User pasted" not in summary  # the goal is that paste, shown beside the summary
    assert "<!--" not in summary
    assert "contributing guidelines" not in summary
    assert "- The staging database is db-stg-4 on port 5433" in summary  # its facts the excerpt omits still are
