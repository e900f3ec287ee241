"""The search evaluation's sessions and natural questions, each with the exact answer string found by reading them.

Sources: the natural coding session of :mod:`.natural` among the quick ``coding`` workload's turns, and the real
public transcripts shipped in the repository (a Claude Code session, SWE-agent on pydicom-1458, two tau-bench
airline conversations; sources and licences in ``tests/data/transcripts/NOTICE.md`` and
``benchmarks/quality/data/README.md``). Each question is what a model would ask once the answer has been compacted
out of its view; the answer is a string that occurs in the original messages (:func:`check` says where).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbudget import Message
from ctxbudget.transcripts import parse_transcript

from ..quality.probes import message_text
from ..quality.trajectories import load_trajectory, model_calls
from .natural import NATURAL_QUESTIONS, SYSTEM, natural_calls

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPTS = ROOT / "tests" / "data" / "transcripts"


@dataclass(frozen=True)
class Source:
    """One session to archive and the questions asked over it."""

    name: str
    system_prompt: str
    calls: Callable[[], Iterable[tuple[Message, ...]]]
    questions: tuple[tuple[str, str], ...]
    window: int


def _transcript_calls(path: Path, fmt: str) -> Callable[[], Iterator[tuple[Message, ...]]]:
    def calls() -> Iterator[tuple[Message, ...]]:
        messages = list(parse_transcript(path.read_text(encoding="utf-8"), format=fmt).messages)
        yield from model_calls([m for m in messages if m.role != "system"])

    return calls


def _system(path: Path, fmt: str) -> str:
    messages = parse_transcript(path.read_text(encoding="utf-8"), format=fmt).messages
    return "\n".join(m.text for m in messages if m.role == "system") or "You are a helpful agent."


def _trajectory(name: str) -> Callable[[], Iterator[tuple[Message, ...]]]:
    def calls() -> Iterator[tuple[Message, ...]]:
        yield from load_trajectory(name).calls

    return calls


CLAUDE_CODE = (
    ("what did the test run print", "2 passed in 0.00s"),
    ("which commit hash did the multiply_numbers commit get", "6322cf4"),
    ("why did the gitignore commit fail", "Exit code 1"),
    ("which files were left untracked after the first commit", "src/__pycache__/math_utils.cpython-312.pyc"),
    ("what does the stop hook say about unstaged changes", "Cannot exit with unstaged changes."),
    ("what assertions does the multiply test make", "assert multiply_numbers(-1, 1) == -1"),
    ("which pytest version ran the tests", "pytest-9.0.2"),
    ("what was in the gitignore before the edit", ".claude/*.local.json"),
    ("where is multiply_numbers defined", "src/math_utils.py:9"),
    ("what python files are in the project", "/tmp/tmpw6sk2trg/tests/__init__.py"),
    ("which branch is the repo on", "On branch master"),
)
TAU_BENCH_DOWNGRADE = (
    ("what is the customer's email address", "omar.davis7857@example.com"),
    ("where does the customer live", "281 Spruce Street"),
    ("how much will the downgrade save in total", "23,553"),
    ("how much was refunded for reservation JG7FMM", "-6594"),
    ("what is the economy fare of flight HAT028 from MCO to BOS", '"economy": 140'),
    ("which passengers are on reservation X7BYG1", "Juan"),
    ("how much is left on gift card 6847880", '"amount": 31'),
    ("which cabin is reservation LQ940Q in", '"cabin": "economy"'),
    ("what are the last four digits of the second visa card", '"last_four": "2172"'),
    ("which flights are on reservation BOH180", "HAT276"),
    ("why does the user want to downgrade", "tough time financially"),
    ("which payment method paid for reservation EQ1G6C", "gift_card_6847880"),
    ("when was reservation X7BYG1 created", "2024-05-12T05:51:40"),
    ("what does the economy seat on HAT277 from BOS to CLT cost", '"economy": 101'),
)
SWE_AGENT = (
    ("why did the reproduce script fail", "missing from the dataset: PixelRepresentation"),
    ("what did the reproduce script print after the fix", "Script completed successfully, no errors. Result: True"),
    ("why was the first edit rejected", "unmatched ']'"),
    ("what syntax error did the later edit attempts hit", "unmatched ')'"),
    ("where are the numpy_handler.py files", "/pydicom__pydicom/pydicom/waveforms/numpy_handler.py"),
    ("which line of numpy_handler raises the AttributeError", "line 293, in get_pixeldata"),
    ("how many lines does numpy_handler.py have", "(372 lines total)"),
    ("which transfer syntax does the issue's example use", "1.2.840.10008.1.2.1"),
    ("what index line does the submitted patch have", "index 8e8d319ae..6a1221b72"),
    ("which pydicom commit does the issue link to", "8da0b9b215ebfad5756051c891def88e426787e7"),
    ("which elements are required for pixel data", "'BitsAllocated', 'Rows', 'Columns', 'PixelRepresentation'"),
    ("what dtype does the reproduction array use", "dtype=np.float32"),
    ("which command located numpy_handler.py", "find_file"),
)

_CC = TRANSCRIPTS / "claude_code_coverage_test_fix.jsonl"

WINDOW = 1_000
"""Tokens of the window each source is replayed in: small, so nearly everything said is compacted."""

SOURCES: tuple[Source, ...] = (
    Source("natural coding session (+ coding workload)", SYSTEM, natural_calls, NATURAL_QUESTIONS, WINDOW),
    Source(
        "claude code (coverage-test-fix)",
        "You are Claude Code.",
        _transcript_calls(_CC, "claude-code"),
        CLAUDE_CODE,
        WINDOW,
    ),
    Source(
        "tau-bench airline (downgrade)",
        "You are an airline agent.",
        _trajectory("tau_bench"),
        TAU_BENCH_DOWNGRADE,
        WINDOW,
    ),
    Source("swe-agent (pydicom-1458)", "You are SWE-agent.", _trajectory("swe_agent"), SWE_AGENT, WINDOW),
)


def holders(source: Source) -> dict[str, list[str]]:
    """For each answer, the ids of the original messages that hold it."""
    texts = {m.id: message_text(m) for batch in source.calls() for m in batch}
    return {answer: [mid for mid, text in texts.items() if answer in text] for _, answer in source.questions}


def check(sources: Iterable[Source] = SOURCES) -> None:
    """Raise when an answer occurs in none of its source's messages."""
    for source in sources:
        for answer, found in holders(source).items():
            if not found:
                raise AssertionError(f"{source.name}: answer {answer!r} occurs in no message")


if __name__ == "__main__":  # python -m benchmarks.search.questions: where each answer is
    for source in SOURCES:
        print(json.dumps({"source": source.name, "holders": holders(source)}, indent=1))


REAL_WINDOW = 3_000
"""Window of the real-transcript probe set's sessions (they are long: most of the early 70% is compacted)."""


def real_sources(directory: Path | None = None) -> tuple[Source, ...]:
    """The real-transcript probe set (``benchmarks/quality/real``), each transcript a source with its probes' questions.

    ``directory`` is a ``benchmarks/quality`` folder holding ``real.py`` and ``real/`` (default: this tree's, when it
    has them); ``()`` when there is none.
    """
    module = _real_module(directory)
    if module is None:
        return ()
    sources = []
    for transcript in module.load_set():
        history = list(transcript.history)
        questions = tuple((probe.question, probe.answer) for probe in transcript.probes)
        sources.append(
            Source(
                f"real: {transcript.name}",
                transcript.system_prompt or "You are a helpful agent.",
                lambda history=history: model_calls(history),
                questions,
                REAL_WINDOW,
            )
        )
    return tuple(sources)


def _real_module(directory: Path | None) -> Any:
    import importlib
    import importlib.util

    if directory is None:
        try:
            return importlib.import_module("benchmarks.quality.real")
        except ImportError:
            return None
    if not (directory / "real.py").is_file():
        return None
    spec = importlib.util.spec_from_file_location("benchmarks.quality.real", directory / "real.py")
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules["benchmarks.quality.real"] = module
    spec.loader.exec_module(module)
    return module
