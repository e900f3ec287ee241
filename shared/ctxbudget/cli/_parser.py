"""The ``ctxbudget`` command's arguments: its parser, the argument types, and the policy the flags ask for.

:func:`build_parser` holds every command and flag (exit codes and transcript formats in its epilog);
:func:`policy_of` turns ``--target`` and ``--keep-recent`` into a compaction policy. Run by
:func:`ctxbudget.cli.app.main`, which also re-exports :func:`build_parser`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..compaction.policy import CompactionPolicy
from ..errors import InvalidPolicyError
from ..transcripts.formats import OUTPUT_FORMATS, READ_FORMATS
from ..transcripts.formats._stream import MAX_BYTES
from ._demo import DRIVER_NAMES

__all__ = ["build_parser", "policy_of"]

_EPILOG = """\
exit codes:
  0  success (compact with nothing worth doing included: it says so and writes nothing)
  1  runtime failure: compaction could not make the history fit, a write failed, or the demo broke an invariant
  2  usage error or bad input: bad arguments, an unreadable, malformed or oversized transcript, an unknown model

transcript formats (told from the content; --format NAME forces one):
  openai          OpenAI Chat Completions: a list of messages, a request body {"model", "messages", ...}, or JSONL
  responses       OpenAI Responses input items: a list, or a request body {"input", "instructions", ...}
  anthropic       Anthropic Messages: a request body {"system", "messages", ...} or a list of messages
  claude-code     a Claude Code session JSONL (~/.claude/projects/*/*.jsonl), read as Claude Code sends it: from its
                  last compact_boundary on; sidechains skipped (--include-sidechains reads a subagent's own file)
  langchain       LangChain messages_to_dict / dumpd dumps
  llamaindex      a LlamaIndex SimpleChatStore JSON ({"store": {key: [...]}}; --key picks the conversation)
  swe-agent       a SWE-agent .traj (history / trajectory)
  mini-swe-agent  a mini-swe-agent .traj.json (messages, info, trajectory_format)
  tau-bench       tau-bench results (a list of {"task_id", "traj", ...}; --key N picks result N, default 0)
  atif            an ATIF trajectory (Harbor's Agent Trajectory Interchange Format; needs pip install atif)
  ctxbudget       a ctxbudget.compacted/1 document that compact wrote

model: --model NAME, else the model the transcript names (a request's model, Claude Code's message.model, a
trajectory's configuration), else gpt-4o; the report says which and where it came from.

compact's output (--output-format NAME): openai, responses, anthropic (what the client's create() takes), atif,
langchain, llamaindex, or ctxbudget (the full document: messages with metadata, summary, archive of every
original). Default: the input's format; Claude Code -> anthropic, SWE-agent, mini-swe-agent, tau-bench -> openai.
Beside any format but ctxbudget, the full document is written as <OUT stem>.ctxbudget.json; inspect and compact of
OUT read it. compact does nothing (exit 0, nothing written) when the compaction would not pay for itself: under
the auto-compaction threshold and saving less than 5% of the window or 25% of the prompt; --force compacts anyway.
"""
_POLICY_FLAGS = {"target": "--target", "keep_recent_messages": "--keep-recent"}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``ctxbudget`` command (exit codes in its epilog)."""
    parser = argparse.ArgumentParser(
        prog="ctxbudget",
        description="Treat an LLM context window as a budget: inspect and compact transcripts, or run the demo.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    inspect = commands.add_parser(
        "inspect", help="report window usage of a transcript", epilog=_EPILOG, formatter_class=parser.formatter_class
    )
    _transcript_args(inspect)
    inspect.add_argument("--top", type=_whole, default=10, help="how many of the largest items to list (default 10)")
    inspect.add_argument("--json", action="store_true", help="print the report as JSON (no rich needed)")
    compact = commands.add_parser(
        "compact", help="compact a transcript into a file", epilog=_EPILOG, formatter_class=parser.formatter_class
    )
    _transcript_args(compact)
    compact.add_argument("-o", "--output", required=True, type=Path, help="where to write the compacted transcript")
    compact.add_argument(
        "--output-format",
        metavar="NAME",
        help=f"{', '.join(OUTPUT_FORMATS)} (default: the input's format; Claude Code -> anthropic, SWE-agent, "
        "mini-swe-agent and tau-bench -> openai). Any format but ctxbudget is written with the full ctxbudget "
        "document beside it, as <OUT stem>.ctxbudget.json",
    )
    compact.add_argument(
        "--in-place",
        action="store_true",
        help="allow OUT (or the .ctxbudget.json document beside it) to be the transcript itself (it is replaced, "
        "through a symbolic link to its target; without this flag that is refused, exit 2)",
    )
    compact.add_argument(
        "--force",
        action="store_true",
        help="compact even when the compaction would not pay for itself (by default compact then writes nothing)",
    )
    compact.add_argument("--instructions", help="focus for the summary, like /compact <instructions>")
    demo = commands.add_parser(
        "demo", help="a long simulated agent session, offline", epilog=_EPILOG, formatter_class=parser.formatter_class
    )
    demo.add_argument("--turns", type=_positive, default=300, help="user turns to simulate (default 300)")
    demo.add_argument("--max-tokens", type=_positive, default=32_000, help="the window (default 32,000)")
    demo.add_argument(
        "--driver",
        choices=DRIVER_NAMES,
        help="core: a bare ContextSession; langchain: create_agent + ContextBudgetMiddleware "
        "(default: langchain when installed, else core)",
    )
    detail = demo.add_mutually_exclusive_group()
    detail.add_argument("--quiet", action="store_true", help="only the final summary table, no progress")
    detail.add_argument("--verbose", action="store_true", help="also one line per turn, and every compaction")
    _progress_arg(demo)
    return parser


def _version() -> str:
    from .. import __version__  # noqa: PLC0415 - the package is fully imported by the time the parser is built

    return __version__


def _progress_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bars on stderr (never stdout); default: only when stderr is a terminal",
    )


def _whole(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _positive(text: str) -> int:
    value = _whole(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value}")
    return value


_UNITS = {"": 1, "k": 1_000, "m": 1_000_000, "g": 1_000_000_000, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}


def _size(text: str) -> int:
    """A byte count: ``5000000``, ``500M``, ``2G``, ``1GiB``."""
    number = text.strip().lower().rstrip("b") if not text.strip().lower().endswith("ib") else text.strip().lower()
    digits = number.rstrip("kmgib")
    unit = number[len(digits) :]
    if unit not in _UNITS or not digits.isdigit():
        raise argparse.ArgumentTypeError(f"expected a size in bytes such as 500000000, 500M or 2G, got {text!r}")
    value = int(digits) * _UNITS[unit]
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text!r}")
    return value


def _transcript_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("transcript", type=Path, help="the transcript file (.json, .jsonl or .traj), or a pipe")
    parser.add_argument(
        "--format",
        metavar="NAME",
        help=f"read the transcript as {', '.join(READ_FORMATS)} (default: told from the content)",
    )
    parser.add_argument(
        "--model",
        help="model whose window and tokenizer to use (default: the model the transcript names, else gpt-4o)",
    )
    parser.add_argument("--max-tokens", type=_positive, help="the prompt budget; default: the model's input window")
    parser.add_argument(
        "--key", help="LlamaIndex chat store key, or tau-bench result index, to read (default: the first)"
    )
    parser.add_argument(
        "--target",
        metavar="FRACTION",
        help="compact down to this fraction of the window, in (0, 0.8] (default 0.6)",
    )
    parser.add_argument(
        "--keep-recent",
        metavar="N",
        help="keep at least the N most recent messages out of the summary (default: sized by tokens)",
    )
    parser.add_argument(
        "--include-sidechains",
        action="store_true",
        help="Claude Code: read sidechain events (a subagent's own agent-*.jsonl file) as the conversation",
    )
    parser.add_argument(
        "--max-bytes",
        type=_size,
        default=MAX_BYTES,
        metavar="N",
        help=f"refuse a transcript larger than this (default {MAX_BYTES >> 30} GiB; 500M, 8G, ...)",
    )
    parser.add_argument(
        "--ignore-sidecar",
        action="store_true",
        help="read the file alone, not the <stem>.ctxbudget.json document compact wrote beside it",
    )
    _progress_arg(parser)


def policy_of(args: argparse.Namespace) -> CompactionPolicy | None:
    """The compaction policy ``--target`` / ``--keep-recent`` ask for; ``None`` for the defaults.

    Raises:
        InvalidPolicyError: a value that is not a number, or out of range; the message names the flag.
    """
    changes: dict[str, object] = {}
    if args.target is not None:
        changes["target"] = _number("--target", "target", args.target, float, "a fraction such as 0.5")
    if args.keep_recent is not None:
        changes["keep_recent_messages"] = _number(
            "--keep-recent", "keep_recent_messages", args.keep_recent, int, "a whole number of messages"
        )
    if not changes:
        return None
    try:
        return CompactionPolicy(**changes)
    except InvalidPolicyError as exc:
        field = exc.field or "policy"
        flag = _POLICY_FLAGS.get(field, field)
        raise InvalidPolicyError(f"{flag}: {str(exc).removeprefix(f'{field}: ')}", field=field) from None


def _number(flag: str, field: str, text: str, kind: type[float] | type[int], what: str) -> float | int:
    try:
        return kind(text)
    except ValueError:
        raise InvalidPolicyError(f"{flag}: expected {what}, got {text!r}", field=field) from None
