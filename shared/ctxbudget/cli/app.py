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
from typing import Any

from ..errors import CompactionError, ContextOverflowError, CtxBudgetError, UsageError
from ._commands import inspect_report, print_inspect, run_compact
from ._demo import DemoConfig, Driver, TurnReport, core_driver, default_driver, driver_named, run_demo, stages
from ._parser import build_parser, policy_of
from ._progress import Progress, no_progress

__all__ = ["EXIT_FAILURE", "EXIT_OK", "EXIT_USAGE", "build_parser", "main"]

EXIT_OK = 0
"""Success."""
EXIT_FAILURE = 1
"""A runtime failure (compaction, writing, a broken demo invariant)."""
EXIT_USAGE = 2
"""Bad arguments or bad input (unreadable, malformed or oversized transcript, unknown model)."""

_INSTALL = (
    'rich is not installed; the ctxbudget CLI needs it: pip install -e ".[cli]" from the root of your ctxbudget '
    'clone (once ctxbudget is published on PyPI: pip install "ctxbudget[cli]")'
)
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
    policy = policy_of(args)
    console = None if args.json else _console()
    with _bars(args) as progress:
        report = inspect_report(args, policy, progress)
    return print_inspect(report, console)  # after the bars: they take over stdout while they draw


def _compact(args: argparse.Namespace) -> int:
    policy = policy_of(args)
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
