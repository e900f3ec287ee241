"""The real-transcript probe set (and the held-out transcripts beside it) is well formed: public sources recorded,
probes taken from where they say.

These check the data, not a score: every probe's answer is verbatim in the message it names, in the first 70% of its
transcript; the set spans at least eight transcripts of four kinds with fifteen probes each; every file has its
repository, commit and a permissive licence in the README. No network, no benchmark run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.bench_real import budget_for, header_tokens, run_claude_code, transcript_tokens
from benchmarks.quality.real import HELDOUT, PROBE_KINDS, REAL, RealTranscript, answer_in, cut, load_set

SET = load_set()
HELD = load_set(HELDOUT)
EVERY = (*SET, *HELD)
"""The set and the held-out transcripts: the same checks of their data."""
PERMISSIVE = ("MIT", "Apache-2.0", "BSD", "CC-BY")


def _id(transcript: RealTranscript) -> str:
    return transcript.name


def test_the_set_spans_eight_transcripts_of_four_kinds() -> None:
    assert len(SET) >= 8
    assert len({t.kind for t in SET}) >= 4
    assert {"claude-code", "tau-bench"} <= {t.kind for t in SET}
    assert {t.kind for t in SET} & {"swe-agent", "mini-swe-agent"}
    assert {t.kind for t in SET} & {"openai", "anthropic", "responses"}


@pytest.mark.parametrize("transcript", EVERY, ids=_id)
def test_every_probe_answer_is_in_the_message_it_names_early_in_the_transcript(transcript: RealTranscript) -> None:
    assert len(transcript.probes) >= 15
    early = cut(transcript)
    for probe in transcript.probes:
        assert 0 <= probe.message < early, f"{probe.answer!r}: message {probe.message} is not in the first 70%"
        assert answer_in(probe, transcript.messages), f"{probe.answer!r} is not in message {probe.message}"


@pytest.mark.parametrize("transcript", EVERY, ids=_id)
def test_probes_are_short_exact_strings_with_a_question(transcript: RealTranscript) -> None:
    for probe in transcript.probes:
        assert probe.kind in PROBE_KINDS
        assert 3 <= len(probe.answer) <= 80, probe.answer
        assert probe.answer == probe.answer.strip()
        assert len(probe.question.split()) >= 3, probe.question
    answers = [probe.answer for probe in transcript.probes]
    assert len(answers) == len(set(answers)), "a probe is listed twice"


@pytest.mark.parametrize("transcript", EVERY, ids=_id)
def test_every_file_is_under_a_megabyte(transcript: RealTranscript) -> None:
    assert transcript.file.stat().st_size < 1_000_000


@pytest.mark.parametrize(("folder", "transcripts"), [(REAL, SET), (HELDOUT, HELD)], ids=["set", "held-out"])
def test_sources_are_recorded_with_commit_and_a_permissive_licence(
    folder: Path, transcripts: tuple[RealTranscript, ...]
) -> None:
    readme = (folder / "README.md").read_text(encoding="utf-8")
    rows = [line for line in readme.splitlines() if line.startswith("| `")]
    for transcript in transcripts:
        row = next((r for r in rows if r.startswith(f"| `{transcript.file.name}` |")), None)
        assert row is not None, f"{transcript.file.name} has no row in the README's source table"
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        repository, path, commit, licence = cells[2], cells[3], cells[4], cells[5]
        assert re.search(r"[\w.-]+/[\w.-]+", repository), repository
        assert path.strip("`"), "no path recorded"
        assert re.fullmatch(r"`[0-9a-f]{40}`", commit), commit
        assert licence in PERMISSIVE, licence
    assert "Permission is hereby granted, free of charge" in readme  # the licence notice is quoted


@pytest.mark.parametrize(("folder", "transcripts"), [(REAL, SET), (HELDOUT, HELD)], ids=["set", "held-out"])
def test_every_transcript_in_the_folder_has_probes(folder: Path, transcripts: tuple[RealTranscript, ...]) -> None:
    described = {t.file.name for t in transcripts}
    on_disk = {p.name for p in Path(folder).iterdir() if p.suffix != ".md" and not p.name.endswith(".probes.json")}
    assert on_disk == described
    assert not {t.name for t in SET} & {t.name for t in HELD}  # held out: none of them is in the set


def _sources(folder: Path) -> set[tuple[str, str, str]]:
    """Each transcript row's source in ``folder``'s README: path, commit and entry (a results file holds many runs)."""
    readme = (folder / "README.md").read_text(encoding="utf-8")
    out = set()
    for row in (line for line in readme.splitlines() if line.startswith("| `")):
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        entry = re.search(r"\bentry (\d+) of\b", cells[6])
        out.add((cells[3], cells[4], entry.group(1) if entry else ""))
    return out


def test_no_held_out_transcript_is_a_file_of_the_set() -> None:
    # Held out means the extraction was not tuned on it: the same source file under another name would not be.
    shared = _sources(REAL) & _sources(HELDOUT)
    assert not shared, f"held-out files come from the set's sources: {sorted(shared)}"


def test_the_claude_code_compaction_is_split_at_its_boundary() -> None:
    compacted = [t for t in SET if t.span == "before_compact_boundary"]
    assert compacted, "no transcript holds Claude Code's own compaction"
    for transcript in compacted:
        assert transcript.kind == "claude-code"
        kept = transcript.claude_code_kept
        assert kept
        assert kept[0].role == "user"
        assert kept[0].text.startswith("This session is being continued from a previous conversation")
        assert all(kept[0].text not in m.text for m in transcript.messages), "the summary leaked into the span"
        outcome = run_claude_code(transcript)
        assert outcome is not None
        assert len(outcome.found) == len(transcript.probes)
    assert all(run_claude_code(t) is None for t in SET if t.span == "all")


@pytest.mark.parametrize("transcript", SET, ids=_id)
def test_budgets_hold_the_header_and_a_share_of_the_rest(transcript: RealTranscript) -> None:
    tokens, header = transcript_tokens(transcript), header_tokens(transcript)
    assert header < tokens
    for fraction in (0.3, 0.1):
        budget = budget_for(transcript, fraction)
        assert header < budget < tokens
        assert budget - header == int((tokens - header) * fraction)
    assert budget_for(transcript, 0.3, of_whole=True) == int(tokens * 0.3)
