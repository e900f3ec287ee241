"""The agent's own task list (Claude Code's TaskCreate / TaskUpdate and TodoWrite, Codex's update_plan) is its plan.

Read from a public Claude Code session (entireio/cli, "single log file"): at 30% its summary's Commands section held
14 bullets like ``TaskUpdate {"taskId":"3","status":"completed"} -> ok: Updated task #3 status`` and no word of what
was done or next.
"""

from __future__ import annotations

from ctxbudget import Message, SummaryRequest, ToolCall
from ctxbudget.compaction.summarize import ExtractiveSummarizer
from ctxbudget.providers import counter_for_model

COUNTER = counter_for_model("gpt-4o")


def calls(*made: tuple[str, dict[str, object], str]) -> list[Message]:
    messages: list[Message] = []
    for index, (name, args, result) in enumerate(made):
        call = ToolCall(id=f"c{index}", name=name, args=args)
        messages += [
            Message(role="assistant", tool_calls=(call,)),
            Message(role="tool", tool_call_id=call.id, content=result),
        ]
    return messages


def created(number: int, subject: str) -> tuple[str, dict[str, object], str]:
    return "TaskCreate", {"subject": subject, "description": "..."}, f"Task #{number} created successfully: {subject}"


def updated(number: int, status: str) -> tuple[str, dict[str, object], str]:
    return "TaskUpdate", {"taskId": str(number), "status": status}, f"Updated task #{number} status"


def test_created_and_updated_tasks_are_what_is_done_and_what_is_next_not_calls() -> None:
    messages = calls(
        created(1, "Change Init() to use a fixed filename"),
        created(2, "Update logging.md"),
        created(3, "Run fmt, lint and tests"),
        updated(1, "in_progress"),
        updated(1, "completed"),
        updated(2, "in_progress"),
    )
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=tuple(messages)))
    assert "- Done: task #1: Change Init() to use a fixed filename" in summary
    assert "- Task #2: Update logging.md (in progress)" in summary
    assert "- Task #3: Run fmt, lint and tests" in summary
    assert "TaskUpdate" not in summary
    assert "TaskCreate" not in summary


def test_a_deleted_task_is_history_not_an_open_item() -> None:
    # Eighth held-out round (entireio/skills): three tasks deleted after the user rejected their edits stayed under
    # "Open items" as "Task #1: Add name: frontmatter ... (deleted)".
    messages = calls(
        created(1, "Add name: frontmatter to SKILL.md"), created(2, "Write marketplace.json"), updated(1, "deleted")
    )
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=tuple(messages)))
    open_items = summary.split("## Open items", 1)[1].split("## ", 1)[0]
    assert "- Task #2: Write marketplace.json" in open_items
    assert "Task #1" not in open_items
    assert "- Task #1: Add name: frontmatter to SKILL.md (deleted)" in summary.split("## Notes", 1)[1]


def test_a_task_updated_after_a_compaction_is_merged_with_its_summary_bullet() -> None:
    summarizer = ExtractiveSummarizer(COUNTER)
    first = summarizer.summarize(
        SummaryRequest(
            messages=tuple(calls(created(1, "Change Init()"), created(2, "Update docs"), updated(1, "in_progress")))
        )
    )
    assert "- Task #1: Change Init() (in progress)" in first
    later = calls(updated(1, "completed"), updated(2, "in_progress"), updated(3, "completed"))
    second = summarizer.summarize(SummaryRequest(messages=tuple(later), previous_summary=first))
    assert "- Done: task #1: Change Init()" in second
    assert "- Task #2: Update docs (in progress)" in second
    assert "Task #1: Change Init() (in progress)" not in second  # one bullet per task: its latest state
    assert "- Done: task #3" in second  # a task whose subject this summary never saw


def test_a_whole_todo_list_is_one_plan_bullet_the_latest_replacing_the_earlier() -> None:
    def todos(*states: tuple[str, str]) -> tuple[str, dict[str, object], str]:
        items = [{"content": text, "status": status, "activeForm": text} for text, status in states]
        return "TodoWrite", {"todos": items}, "Todos have been modified successfully."

    messages = calls(
        todos(("Read the hook", "in_progress"), ("Fix the location", "pending"), ("Add a test", "pending")),
        todos(("Read the hook", "completed"), ("Fix the location", "in_progress"), ("Add a test", "pending")),
    )
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=tuple(messages)))
    assert "- Plan (1 of 3 done): now Fix the location; next Add a test" in summary
    assert summary.count("Plan (") == 1
