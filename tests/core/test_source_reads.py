"""What a source or configuration file holds is the file's: a line of its code is no figure of the work.

Claude Code's Read shows a file behind a line-number gutter (``    43→	bytes := make([]byte, 6) // 6 bytes = 12
hex chars``), which read as a measurement ("6 bytes") and filled "Commands and results" with lines of id.go. A log
or a report that was read can still hold the work's measurements.
"""

from __future__ import annotations

import pytest
from ctxbudget import Message, ToolCall
from ctxbudget.compaction.calls import reads_source
from ctxbudget.compaction.salience import salient_items

GO = "    42→func Generate() string {\n    43→\tbytes := make([]byte, 6) // 6 bytes = 12 hex chars\n    44→}\n"
LOG = "request served\np95 latency: 212 ms\nthroughput: 1,840 rps\n"


def _items(call: ToolCall, output: str) -> list[str]:
    messages = (
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", tool_call_id=call.id, content=output),
    )
    return [f"{item.kind}: {item.text}" for item in salient_items(messages)]


@pytest.mark.parametrize(
    ("call", "source"),
    [
        (ToolCall(id="r", name="Read", args={"file_path": "/repo/id/id.go"}), True),
        (ToolCall(id="r", name="bash", args={"command": "sed -n '1090,1130p' src/marshmallow/fields.py"}), True),
        (ToolCall(id="r", name="bash", args={"command": "cat ./pyproject.toml | head -40"}), True),
        (ToolCall(id="r", name="Read", args={"file_path": "/var/log/app.log"}), False),
        (ToolCall(id="r", name="bash", args={"command": "cat results.txt"}), False),
        (ToolCall(id="r", name="bash", args={"command": "cat a.py notes.txt"}), False),  # not all of it is code
        (ToolCall(id="r", name="bash", args={"command": "python bench.py"}), False),  # a run, not a read
        (ToolCall(id="r", name="Grep", args={"pattern": "x", "path": "src/a.py"}), False),  # a search's hits
    ],
)
def test_a_read_of_source_or_configuration_is_known_by_its_paths_suffix(call: ToolCall, source: bool) -> None:
    assert reads_source(call) is source


def test_reading_a_source_file_reports_no_figure_from_its_code_and_a_log_still_does() -> None:
    go = _items(ToolCall(id="r", name="Read", args={"file_path": "/repo/id/id.go"}), GO)
    assert not [item for item in go if "bytes" in item]
    log = _items(ToolCall(id="l", name="Read", args={"file_path": "/var/log/app.log"}), LOG)
    assert any("p95 latency: 212 ms" in item for item in log)


def test_a_diff_that_was_shown_says_which_files_are_modified() -> None:
    """``git diff`` or ``cat patch.txt``: the files the diff changes, whatever changed them (a script, sed -i)."""
    diff = (
        "diff --git a/src/marshmallow/fields.py b/src/marshmallow/fields.py\nindex 0b18e7dd..102b0cfd 100644\n"
        "--- a/src/marshmallow/fields.py\n+++ b/src/marshmallow/fields.py\n@@ -1114,7 +1114,7 @@\n"
        "-            or getattr(schema.opts, self.SCHEMA_OPTS_VAR_NAME)\n"
        "+            or (self.root and getattr(self.root.opts, self.SCHEMA_OPTS_VAR_NAME, None))\n"
    )
    for command in ("git diff", "cat patch.txt"):
        items = _items(ToolCall(id="d", name="bash", args={"command": command}), diff)
        assert "artifact: src/marshmallow/fields.py: modified" in items
    # A search's hits are the matched files' lines, whatever they say.
    hits = _items(ToolCall(id="g", name="Grep", args={"pattern": "diff"}), diff)
    assert not [item for item in hits if item.endswith(": modified")]


def test_an_edit_of_one_line_says_the_line_it_left() -> None:
    """Claude Code's Edit: what the file holds now is in the call, not in its result ("The file ... updated.")."""
    edit = ToolCall(
        id="e",
        name="Edit",
        args={
            "file_path": "/repo/trailers/trailers.go",
            "old_string": "\tcheckpointTrailerRegex = regexp.MustCompile(`([0-9a-f]{12})`)",
            "new_string": "\tcheckpointTrailerRegex = regexp.MustCompile(`(` + id.Pattern + `)`)",
        },
    )
    items = _items(edit, "The file /repo/trailers/trailers.go has been updated.")
    now = "checkpointTrailerRegex = regexp.MustCompile(`(` + id.Pattern + `)`)"
    assert f"artifact: /repo/trailers/trailers.go: edited -> now: {now}" in items
    block = ToolCall(id="b", name="Edit", args={"file_path": "/repo/a.go", "old_string": "x", "new_string": "a\nb"})
    assert "artifact: /repo/a.go: edited" in _items(block, "ok")  # a block of lines: no line to say


def test_an_edit_of_a_block_that_changes_one_line_of_it_says_that_line() -> None:
    """Claude Code (held-out telemetry_delay): the edit that set PostHog's shutdown timeout rewrote the whole config
    literal, re-aligned; the one line it changed is the file's new state, the re-aligned lines are not changes."""
    old = "client, err := posthog.NewWithConfig(key, posthog.Config{\n\tEndpoint:     PostHogEndpoint,\n})"
    new = (
        "client, err := posthog.NewWithConfig(key, posthog.Config{\n\tEndpoint:        PostHogEndpoint,\n"
        "\tShutdownTimeout: 100 * time.Millisecond, // Don't block CLI exit\n})"
    )
    edit = ToolCall(id="e", name="Edit", args={"file_path": "/repo/telemetry.go", "old_string": old, "new_string": new})
    items = _items(edit, "The file /repo/telemetry.go has been updated.")
    now = "ShutdownTimeout: 100 * time.Millisecond, // Don't block CLI exit"
    assert f"artifact: /repo/telemetry.go: edited -> now: {now}" in items
    two = new.replace("})", "\tBatchUploadTimeout: 200 * time.Millisecond,\n})")
    rewrite = ToolCall(id="t", name="Edit", args={"file_path": "/repo/t.go", "old_string": old, "new_string": two})
    assert "artifact: /repo/t.go: edited" in _items(rewrite, "ok")  # two lines changed: no one line to say
