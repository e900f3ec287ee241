"""The ``ctxbudget`` command line: inspect and compact real transcripts, and watch a long session stay in budget.

Commands::

    ctxbudget --version
    ctxbudget inspect TRANSCRIPT [--format NAME] [--model NAME] [--max-tokens N] [--key KEY] [--target F]
                                 [--keep-recent N] [--include-sidechains] [--max-bytes N] [--ignore-sidecar]
                                 [--top N] [--json] [--progress | --no-progress]
    ctxbudget compact TRANSCRIPT -o OUT [--output-format NAME] [--in-place] [--force] [--format NAME]
                                 [--model NAME] [--max-tokens N] [--key KEY] [--target F] [--keep-recent N]
                                 [--include-sidechains] [--max-bytes N] [--ignore-sidecar] [--instructions TEXT]
                                 [--progress | --no-progress]
    ctxbudget demo [--turns N] [--max-tokens N] [--driver core|langchain] [--quiet | --verbose]
                   [--progress | --no-progress]

Transcripts are OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, Claude Code session JSONL,
LangChain and LlamaIndex dumps, SWE-agent, mini-swe-agent and tau-bench trajectories, ATIF trajectories, or
documents ``compact`` wrote, told from the content (``--format`` forces one; see
:mod:`ctxbudget.transcripts.formats`). They are streamed, within ``--max-bytes``: memory holds the window, one
message and the ids seen, whatever the file's size (:mod:`ctxbudget.cli._analysis`). The model is ``--model``, else
the one the transcript names, else gpt-4o; the report says which. ``compact`` writes the input's format
(``--output-format`` chooses openai, responses, anthropic, atif, langchain, llamaindex or ctxbudget; Claude Code as
anthropic, SWE-agent, mini-swe-agent and tau-bench as openai); beside any format but ctxbudget it writes the full
document (summary and archive) as ``<OUT stem>.ctxbudget.json``, which a later ``inspect`` or ``compact`` of OUT
reads (:mod:`ctxbudget.cli._files`). ``compact`` does nothing, and says so, when the compaction would not pay for
itself (``--force`` compacts anyway).

``--target`` and ``--keep-recent`` set the compaction policy (:class:`~ctxbudget.compaction.policy.CompactionPolicy`
``target`` and ``keep_recent_messages``). ``inspect`` runs the compaction ``compact`` would, so both report the
same number of archived originals. Progress bars go to stderr, when it is a terminal or ``--progress`` forces them
(:mod:`ctxbudget.cli._bars`); never to stdout. ``compact`` writes all or nothing (temporary files renamed over
their targets once all are written), through symbolic links, with the umask's mode; ``OUT`` may be the transcript
itself only with ``--in-place``. Compacting a ctxbudget document ``compact`` wrote carries its summary and archive
forward: every original stays recoverable. Output uses ``rich`` (``pip install -e ".[cli]"`` in the clone;
``pip install "ctxbudget[cli]"`` once published); ``inspect --json`` does not.

Exit codes:
    0  success (``compact`` with nothing worth doing included: it says so and writes nothing).
    1  runtime failure: compaction could not make the history fit, a write failed, or the demo broke an invariant.
    2  usage error or bad input: bad arguments, an unreadable, malformed or oversized transcript, an unknown model.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..compaction.policy import CompactionPolicy
from ..errors import CompactionError, ContextOverflowError, CtxBudgetError, InvalidPolicyError, UsageError
from ..transcripts.formats import OUTPUT_FORMATS, READ_FORMATS
from ..transcripts.formats._stream import MAX_BYTES
from ._commands import inspect_report, print_inspect, run_compact
from ._demo import (
    DRIVER_NAMES,
    DemoConfig,
    Driver,
    TurnReport,
    core_driver,
    default_driver,
    driver_named,
    run_demo,
    stages,
)
from ._progress import Progress, no_progress

__all__ = ["EXIT_FAILURE", "EXIT_OK", "EXIT_USAGE", "build_parser", "main"]

EXIT_OK = 0
"""Success."""
EXIT_FAILURE = 1
"""A runtime failure (compaction, writing, a broken demo invariant)."""
EXIT_USAGE = 2
"""Bad arguments or bad input (unreadable, malformed or oversized transcript, unknown model)."""

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
_INSTALL = (
    'rich is not installed; the ctxbudget CLI needs it: pip install -e ".[cli]" from the root of your ctxbudget '
    'clone (once ctxbudget is published on PyPI: pip install "ctxbudget[cli]")'
)
_POLICY_FLAGS = {"target": "--target", "keep_recent_messages": "--keep-recent"}
_FLAG_NAMES = (("keep_recent_messages", "--keep-recent"), ("max_tokens", "--max-tokens"))


def _rich() -> Any:
    """Import rich lazily; the core never needs it."""
    try:
        import rich  # noqa: PLC0415 - optional dependency, imported only when the CLI renders
    except ImportError as exc:  # pragma: no cover - exercised by hiding the module in a test
        raise ImportError(_INSTALL) from exc
    return rich


def _console(*, stderr: bool = False) -> Any:
    _rich()
    from rich.console import Console  # noqa: PLC0415 - optional dependency

    return Console(stderr=stderr, highlight=False)


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


def _policy(args: argparse.Namespace) -> CompactionPolicy | None:
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ctxbudget`` command with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad arguments, 0 on --help
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    commands = {"inspect": _inspect, "compact": _compact, "demo": _demo}
    try:
        return commands[args.command](args)
    except BrokenPipeError:  # the reader went away (`ctxbudget inspect ... | head`): not an error of ours
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at interpreter exit
        return EXIT_OK
    except UsageError as exc:
        return _error(_flags(exc), EXIT_USAGE)
    except (CtxBudgetError, OSError) as exc:
        return _error(f"{type(exc).__name__}: {_flags(exc)}", EXIT_FAILURE)
    except ImportError as exc:
        return _error(str(exc), EXIT_FAILURE)


def _flags(exc: BaseException) -> str:
    """The error's message, with the Python parameters a CLI user cannot pass named as the flags that set them."""
    message = " ".join(str(exc).split())  # one line
    if isinstance(exc, (CompactionError, ContextOverflowError)) or type(exc).__name__ == "SystemPromptTooLargeError":
        for name, flag in _FLAG_NAMES:
            message = message.replace(f"raise {name}", f"raise {flag}").replace(f"lower {name}", f"lower {flag}")
            message = message.replace(f"({name})", f"({flag})")
    return message


def _error(message: str, code: int) -> int:
    print(f"ctxbudget: error: {message}", file=sys.stderr)
    return code


def _bars(args: argparse.Namespace) -> contextlib.AbstractContextManager[Progress]:
    """Progress bars on stderr for the long steps, when wanted (see :mod:`ctxbudget.cli._bars`)."""
    try:
        from ._bars import step_bars  # noqa: PLC0415 - imports rich
    except ImportError as exc:  # without rich, `inspect --json` still runs, without bars
        if args.progress:
            raise ImportError(_INSTALL) from exc
        return contextlib.nullcontext(no_progress)
    return step_bars(args.progress)


# -- inspect and compact -------------------------------------------------------------------------------------------
def _inspect(args: argparse.Namespace) -> int:
    policy = _policy(args)
    console = None if args.json else _console()
    with _bars(args) as progress:
        report = inspect_report(args, policy, progress)
    return print_inspect(report, console)  # after the bars: they take over stdout while they draw


def _compact(args: argparse.Namespace) -> int:
    policy = _policy(args)
    console = _console()
    with _bars(args) as progress:
        said = run_compact(args, policy, progress)
    console.print(said)
    return EXIT_OK


# -- demo ----------------------------------------------------------------------------------------------------------
def _demo(args: argparse.Namespace) -> int:
    console = _console()
    from ._demo_view import TURN_HEADER, print_turn, stage_table, summary_table, turn_progress  # noqa: PLC0415

    config = DemoConfig(turns=args.turns, max_tokens=args.max_tokens)
    driver: Driver = default_driver() if args.driver is None else driver_named(args.driver)
    if not args.quiet:
        name = args.driver or ("core" if driver is core_driver else "langchain")
        console.print(
            f"[bold]ctxbudget demo[/] ({name} driver): a {config.turns}-turn coding-agent session in a "
            f"{config.max_tokens:,}-token window, offline: simulated model, strict provider checks on every call"
        )
    if args.verbose:
        console.print(f"[dim]{TURN_HEADER}[/]")
    reports: list[TurnReport] = []
    with turn_progress(config, args.progress, quiet=args.quiet) as advance:

        def on_turn(report: TurnReport) -> None:
            reports.append(report)
            advance(report)
            if args.verbose:
                print_turn(console, report)

        result = run_demo(config, on_turn=on_turn, driver=driver)
    if not args.quiet:
        console.print(stage_table(stages(reports), config.max_tokens))
    console.print(summary_table(result))
    if not result.ok:
        return _error("the demo broke an invariant (see the summary table)", EXIT_FAILURE)
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
