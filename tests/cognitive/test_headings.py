"""ATX heading lines, as the folder provider splits documents at them: the CommonMark rule, in linear time.

A heading line is up to three spaces, one to six ``#``, then the end of the line or a space or tab. Its text is
the rest without the blanks around it and without a closing ``#`` run that follows a blank. The parser uses
string methods only: a line of any length with any run of inner spaces is read in one pass (the regex it replaces,
``(.*?)`` before optional trailing blanks under ``fullmatch``, took 15 s on a 40 kB line).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ctxbudget.cognitive import FolderKnowledgeProvider
from ctxbudget.cognitive._markdown import heading_text, split_sections
from ctxbudget.cognitive.folder import MANIFEST_NAME
from hypothesis import given
from hypothesis import strategies as st

# The regex the parser replaces, kept as the reference on short lines (where its backtracking costs nothing).
_REFERENCE = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")


def reference(line: str) -> str | None:
    match = _REFERENCE.fullmatch(line)
    return None if match is None else match.group(2) or ""


@pytest.mark.parametrize(
    ("line", "text"),
    [
        ("# Title", "Title"),
        ("###### Six", "Six"),
        ("   ## Indented three", "Indented three"),
        ("## Closed ##", "Closed"),
        ("## Closed ##   ", "Closed"),
        ("#\tTabbed\t#\t", "Tabbed"),
        ("# Hash# inside", "Hash# inside"),
        ("# Not closed#", "Not closed#"),  # a closing run needs a blank before it
        ("# C#", "C#"),
        ("#", ""),
        ("#   ", ""),
        ("# #", "#"),  # as the reference reads it: the only '#' after the opening is the text
        ("#######", None),  # seven: not a heading
        ("#Title", None),  # no blank after the opening
        ("    # Four spaces", None),  # indented code, not a heading
        ("Title #", None),
        ("", None),
    ],
)
def test_heading_lines_follow_the_atx_rule(line: str, text: str | None) -> None:
    assert heading_text(line) == text
    assert reference(line) == text


_LINES = st.text(alphabet=st.sampled_from([" ", "\t", "#", "a", "b", "\u00a0", "\x0c", "\r", "é"]), max_size=24)


@given(st.one_of(_LINES, st.builds(lambda a, b: a + b, st.sampled_from(["#", "## ", " # ", "###### "]), _LINES)))
def test_the_parser_reads_every_line_as_the_reference_regex_does(line: str) -> None:
    assert heading_text(line) == reference(line)


def test_a_200_kb_heading_line_with_inner_spaces_is_read_in_linear_time() -> None:
    # Quadratic backtracking would take hours here; this returns at once (no timing assertion: it simply finishes).
    line = "# a" + " " * 200_000 + "b" + " \t" * 1_000 + "c ##  "
    assert heading_text(line) == "a" + " " * 200_000 + "b" + " \t" * 1_000 + "c"
    sections = split_sections("doc.md", line + "\n\nbody")
    assert [s.heading for s in sections] == ["a b c"]


def test_a_package_with_a_200_kb_heading_line_builds(tmp_path: Path) -> None:
    manifest = {
        "packageId": "acme/notes",
        "packageVersion": "1.0.0",
        "lifecycleGeneration": 1,
        "surfaceId": "domain-knowledge",
        "formatVersion": "0.2",
    }
    (tmp_path / MANIFEST_NAME).write_text(json.dumps(manifest), encoding="utf-8")
    (tmp_path / "doc.md").write_text("# a" + " " * 200_000 + "b\n\ntext\n", encoding="utf-8")
    provider = FolderKnowledgeProvider(tmp_path)
    assert [s.heading for s in split_sections("doc.md", provider.documents["doc.md"])] == ["a b"]
