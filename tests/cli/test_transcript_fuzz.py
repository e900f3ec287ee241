"""Any JSON value anywhere in a real transcript: every reader gives a transcript or a typed error, never a raw one.

Each public transcript (``tests/data/transcripts``) has one value replaced, at a path drawn from the document, by
any JSON value (wrong types, lone surrogates, NaN, deep nesting); it is then read with its format detected and
forced. The result is a :class:`~ctxbudget.transcripts.reading.Transcript` whose messages write back to all three
provider formats, or a :class:`~ctxbudget.errors.UsageError` (a ``TranscriptError`` naming where, or an unknown-format
error). Also pins :mod:`ctxbudget.transcripts.formats`' public names.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from ctxbudget.errors import UsageError
from ctxbudget.providers import to_anthropic_request, to_openai_request, to_responses_request
from ctxbudget.transcripts import formats as transcript_formats
from ctxbudget.transcripts import parse_transcript
from hypothesis import given, settings
from hypothesis import strategies as st

DATA = Path(__file__).parents[1] / "data" / "transcripts"
FILES = sorted(p.name for p in DATA.iterdir() if p.suffix in (".json", ".jsonl", ".traj"))
FORCED = {"langchain-dumpd": "langchain", "ctxbudget-compacted": "ctxbudget"}
SIDECHAINS = {"claude_code_subagent_spotter.jsonl"}  # a subagent's own file: read with include_sidechains

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=8),
    st.sampled_from(["\ud800", "", "user", "assistant", "tool", "tool_use", "tool_result", "summary", "message"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10,
)


def _rows(name: str) -> list[Any]:
    text = (DATA / name).read_text(encoding="utf-8")
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [json.loads(text)]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``value`` (keys and indexes), the root excluded."""
    found: list[tuple[Any, ...]] = []
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        found.append((*path, key))
        found.extend(_paths(child, (*path, key)))
    return found


def _replace(root: list[Any], path: tuple[Any, ...], value: Any) -> list[Any]:
    copy = json.loads(json.dumps(root))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return copy


PATHS = {name: _paths(_rows(name)) for name in FILES}


@pytest.mark.parametrize("name", FILES)
@settings(max_examples=60, deadline=None)
@given(data=st.data(), value=VALUES)
def test_any_value_anywhere_is_a_transcript_or_a_typed_error(name: str, data: st.DataObject, value: Any) -> None:
    path = data.draw(st.sampled_from(PATHS[name]), label="path")
    rows = _replace(_rows(name), path, value)
    jsonl = name.endswith(".jsonl")
    text = "\n".join(json.dumps(row) for row in rows) if jsonl else json.dumps(rows[0])
    sidechains = name in SIDECHAINS
    original = parse_transcript((DATA / name).read_text(encoding="utf-8"), jsonl=jsonl, include_sidechains=sidechains)
    for forced in (None, FORCED.get(original.format, original.format)):
        try:
            transcript = parse_transcript(text, source=name, jsonl=jsonl, format=forced, include_sidechains=sidechains)
        except UsageError as error:
            problems = [] if str(error).startswith((name, "--format")) else [str(error)]
            assert problems == []  # every error names the file (or the flag)
            continue
        for write in (to_openai_request, to_responses_request, to_anthropic_request):
            with contextlib.suppress(UsageError):  # a message no provider can take is refused, typed
                write(transcript.messages, transcript.tools)


def test_the_public_names_are_pinned() -> None:
    assert sorted(transcript_formats.__all__) == [
        "DEFAULT_OUTPUT",
        "OUTPUT_FORMATS",
        "PROVIDER_FORMATS",
        "READ_FORMATS",
        "check_name",
        "default_output_format",
        "render",
    ]
    assert set(transcript_formats.DEFAULT_OUTPUT.values()) <= set(transcript_formats.OUTPUT_FORMATS)
