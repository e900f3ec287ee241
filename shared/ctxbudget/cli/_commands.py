"""``ctxbudget inspect`` and ``ctxbudget compact``: read, run (:mod:`ctxbudget.cli._analysis`), report or write.

The transcript is read and written by :mod:`ctxbudget.cli._files`.

Everything a command can refuse is refused before anything is written: the output's directory and the document
beside it are checked once the output format is known (from the input), ``-o`` naming the transcript itself needs
``--in-place``, and ``compact`` writes nothing when the compaction would not pay for itself (it says why).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import IO, Any

from ..archive.store import content_digest
from ..compaction.policy import CompactionPolicy
from ..errors import UsageError
from ..transcripts.formats import OUTPUT_FORMATS, PROVIDER_FORMATS, READ_FORMATS, check_name, default_output_format
from ..transcripts.formats._open import TranscriptStream
from ..transcripts.formats._writers import render
from ._analysis import Run, Settings, document, report, run_transcript, sent_messages
from ._archive import ArchiveSink
from ._files import document_path, open_input, stream_document, utf8, write_all
from ._progress import Progress
from ._targets import check_writable, same_file, target_of

__all__ = ["inspect_report", "print_inspect", "run_compact"]

EXIT_OK = 0


def _settings(args: argparse.Namespace, policy: CompactionPolicy | None) -> Settings:
    return Settings(
        model=args.model,
        max_tokens=args.max_tokens,
        policy=policy,
        instructions=getattr(args, "instructions", None),
        top=getattr(args, "top", 10),
        force=getattr(args, "force", False),
    )


def _open(args: argparse.Namespace) -> TranscriptStream:
    forced = None if args.format is None else check_name(args.format, READ_FORMATS, "--format")
    return open_input(
        args.transcript,
        key=args.key,
        format=forced,
        max_bytes=args.max_bytes,
        include_sidechains=args.include_sidechains,
        ignore_sidecar=args.ignore_sidecar,
    )


def inspect_report(args: argparse.Namespace, policy: CompactionPolicy | None, progress: Progress) -> dict[str, Any]:
    """``inspect``'s report (:func:`~ctxbudget.cli._analysis.report`)."""
    settings = _settings(args, policy)
    with _open(args) as stream, ArchiveSink(keep=False) as sink:
        run = run_transcript(stream, settings, sink, progress=progress, trial=True)
        return report(run)


def print_inspect(data: dict[str, Any], console: Any) -> int:
    """The report as JSON on stdout (no ``console``: ``--json``) or drawn with rich on ``console``."""
    if console is None:
        text = json.dumps(data, indent=2, ensure_ascii=False)
        utf8(text, "the report")  # checked before anything is printed
        print(text)
        return EXIT_OK
    from ._inspect import print_report  # noqa: PLC0415 - imports rich

    print_report(console, data)
    return EXIT_OK


def run_compact(args: argparse.Namespace, policy: CompactionPolicy | None, progress: Progress) -> str:
    """``compact``: run the transcript and write its compacted form (and the document beside it), or nothing.

    Returns what to print (rich markup).
    """
    output: Path = args.output
    if not output.name:  # "", "." or "/": a directory, and no name for the document written beside a file
        raise UsageError(f"-o: {str(output)!r} is a directory, not a file to write", field="output")
    target = target_of(output)
    if not target.parent.is_dir():
        raise UsageError(f"-o: directory {str(target.parent)!r} does not exist", field="output")
    if args.output_format is not None:
        check_name(args.output_format, OUTPUT_FORMATS, "--output-format")  # before any work
    settings = _settings(args, policy)
    with _open(args) as stream:
        chosen = args.output_format or default_output_format(stream.head.format)
        side = document_path(output) if chosen in PROVIDER_FORMATS else None
        _check_outputs(args, output, side)
        with ArchiveSink(keep=True, directory=target.parent) as sink:
            run = run_transcript(stream, settings, sink, progress=progress)
            if not run.worth and not settings.force:
                from rich.markup import escape  # noqa: PLC0415 - optional dependency, the CLI checked it is there

                return f"[yellow]Nothing to do[/]: {escape(run.why_not())}. Nothing written."
            _write(run, output, chosen, side, sink)
    info = document(run)["compaction"]
    from rich.markup import escape  # noqa: PLC0415 - optional dependency, the CLI checked it is there

    from ._inspect import archived_phrase  # noqa: PLC0415 - imports rich

    beside = f"; full document (summary, archive) in {escape(str(side))}" if side is not None else ""
    return (
        f"[green]Wrote {escape(str(output))}[/] ({chosen}{beside}): {len(sent_messages(run)):,} messages "
        f"({run.after:,} tokens); {run.compactions:,} compaction{'s' if run.compactions != 1 else ''}, tiers "
        f"{' -> '.join(run.tiers) or '-'}, {run.used:,} -> {run.after:,} tokens; "
        f"{archived_phrase(info['archived'], info['bounded_on_arrival'])}."
    )


def _check_outputs(args: argparse.Namespace, output: Path, side: Path | None) -> None:
    """Refuse, before any work, an output that would replace the transcript or cannot be written."""
    for path, flag in ((output, "-o"), (side, "-o (its .ctxbudget.json document)")):
        if path is None:
            continue
        if not args.in_place and same_file(path, args.transcript):
            raise UsageError(
                f"{flag}: {str(path)!r} is the transcript being compacted; pass --in-place to replace it",
                field="output",
            )
        check_writable(path, flag)


def _write(run: Run, output: Path, chosen: str, side: Path | None, sink: ArchiveSink) -> None:
    full = document(run)
    if side is None:
        write_all([(output, stream_document(full, sink))])
        return
    head = run.head
    rendered = render(
        sent_messages(run),
        head.tools,
        chosen,
        input_format=head.format,
        jsonl=head.jsonl,
        envelope=head.envelope,
        extra=head.extra,
        model=run.model,
        key=head.key,
    )
    data = utf8(rendered.text, f"the output for {output}")
    full["output"] = {"file": output.name, "format": chosen, "rows": [content_digest(row) for row in rendered.rows]}

    def write_output(handle: IO[bytes]) -> None:
        handle.write(data)

    write_all([(side, stream_document(full, sink)), (output, write_output)])
