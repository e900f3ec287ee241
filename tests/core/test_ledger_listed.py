"""A file a search or a listing only named is worth less than one the work touched: running it again names it.

Claude Code (entire, git status): six ``(found by Grep)`` test files nobody opened, and a ``.vscode`` extension's
``server-node.js (listed by Bash)``, filled "Files and artifacts" while the session's findings about gc dropped out.
"""

from __future__ import annotations

from ctxbudget.compaction._artifacts import merge_artifact
from ctxbudget.compaction._ledger_select import Selection
from ctxbudget.compaction.salience import Salient
from ctxbudget.compaction.textscan import informative_tokens
from ctxbudget.messages import TiktokenCounter


def _artifact(text: str) -> Salient:
    return Salient("artifact", text, text.split(" ", 1)[0].lower(), 3, informative_tokens(text))


def test_a_file_only_listed_is_worth_a_quarter_of_one_the_work_touched() -> None:
    # Held-out at 10% (rounds 19 to 21): files a Glob or a Grep only named still outranked what the work found; at a
    # quarter, three more probes stay in view and none leaves.
    selection = Selection(TiktokenCounter(), max_tokens=400, max_items=None, bonus=lambda item: 0.0)
    touched = selection._scored(_artifact("cmd/entire/cli/checkpoint/committed.go: read"), (0.5, 0.5), 100)
    for how in ("found by Grep", "listed by Bash"):
        listed = selection._scored(_artifact(f"cmd/entire/cli/checkpoint/committed.go ({how})"), (0.5, 0.5), 100)
        assert listed.value == touched.value / 4


def test_a_command_that_only_showed_files_is_worth_less_than_one_that_changed_something() -> None:
    """mini-swe-agent at 10%: four ``sed -n`` reads of fields.py stayed while ``pip install -e .`` went."""
    selection = Selection(TiktokenCounter(), max_tokens=400, max_items=None, bonus=lambda item: 0.0)

    def value(command: str) -> float:
        text = f"bash: {command} -> ok"
        item = Salient("command", text, f"bash: {command}", 3, informative_tokens(text))
        return selection._scored(item, (0.5, 0.5), 100).value

    changed = value("cd /testbed && pip install -e .")
    for read in ("sed -n '1090,1130p' src/marshmallow/fields.py", "cd /testbed && cat setup.py", "grep -rn root src"):
        assert value(read) < changed
    assert value("cat > fix.py << 'EOF'") == changed  # a cat that writes a file is no read


def test_a_file_listed_by_several_tools_is_one_bullet_that_names_them() -> None:
    # Eighth held-out round (entireio/skills): "plugin.json (listed by Bash) -> plugin.json (found by WebSearch;
    # listed by WebFetch) -> - **Malformed plugin.json**: ...": an earlier merged listing became the detail.
    earlier = _artifact("plugin.json (found by WebSearch; listed by WebFetch) -> - **Malformed plugin.json**: x")
    merged = merge_artifact(earlier, _artifact("plugin.json (listed by Bash)"), "plugin.json")
    assert merged.text == "plugin.json (found by WebSearch; listed by WebFetch, Bash) -> - **Malformed plugin.json**: x"
    again = merge_artifact(merged, _artifact("plugin.json (found by Glob, Grep)"), "plugin.json")
    assert again.text.startswith("plugin.json (found by WebSearch, Glob, Grep; listed by WebFetch, Bash) -> ")
