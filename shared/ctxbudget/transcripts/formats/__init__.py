"""The transcript formats ``ctxbudget inspect`` and ``ctxbudget compact`` read and write.

Read (:func:`ctxbudget.transcripts.reading.load_transcript`, detected from the content, ``--format NAME`` to force):

=============== ==========================================================================================
``openai``      Chat Completions: a list of messages, a request body ``{"model", "messages", "tools", ...}``,
                or JSONL (one message per line); read exactly, so writing it back gives the original
``responses``   Responses ``input`` items: a list, or a request body ``{"input", "instructions", "tools", ...}``
``anthropic``   Anthropic Messages: a request body ``{"system", "messages", "tools", ...}`` or a list of
                messages; ``tool_use`` / ``tool_result`` / ``thinking`` blocks kept
``claude-code`` a Claude Code session JSONL (``~/.claude/projects/*/*.jsonl``), see :mod:`._claude_code`
``langchain``   LangChain ``messages_to_dict`` or ``dumpd`` dumps
``llamaindex``  a LlamaIndex ``SimpleChatStore`` JSON (``--key`` picks the conversation)
``swe-agent``   a SWE-agent ``.traj`` (``history`` / ``trajectory``), see :mod:`._trajectories`
``mini-swe-agent`` a mini-swe-agent ``.traj.json`` (``messages`` with ``info`` and ``trajectory_format``)
``tau-bench``   tau-bench results (a list of ``{"task_id", "traj", ...}`` or one; ``--key`` picks the entry)
``atif``        an ATIF trajectory (Harbor's interchange format), see :mod:`._atif`; needs the ``atif`` extra
``ctxbudget``   a ``ctxbudget.compacted/1`` document that ``ctxbudget compact`` wrote
=============== ==========================================================================================

Every format is streamed (:mod:`._stream`): JSONL line by line, a JSON document's long lists element by element.

Written (``compact --output-format``): ``openai``, ``responses``, ``anthropic`` (exactly what the client's
``create`` takes), ``atif``, ``langchain`` and ``llamaindex`` (the frameworks' own dumps, written without importing
them), and ``ctxbudget`` (the full document); by default the input's format, and for formats that cannot be
written back (see :data:`DEFAULT_OUTPUT`): Claude Code as ``anthropic``, SWE-agent, mini-swe-agent and tau-bench as
``openai``.
"""

from __future__ import annotations

from ...errors import UsageError
from ._detect import READ_FORMATS
from ._writers import DEFAULT_OUTPUT, OUTPUT_FORMATS, PROVIDER_FORMATS, render

__all__ = [
    "DEFAULT_OUTPUT",
    "OUTPUT_FORMATS",
    "PROVIDER_FORMATS",
    "READ_FORMATS",
    "check_name",
    "default_output_format",
    "render",
]


def check_name(name: object, choices: tuple[str, ...], flag: str) -> str:
    """``name`` when it is one of ``choices``, else a :class:`~ctxbudget.errors.UsageError` listing them.

    Raises:
        UsageError: an unknown name (the message names the flag, the value and the valid names).
    """
    if isinstance(name, str) and name in choices:
        return name
    raise UsageError(f"{flag}: unknown format {name!r}; expected one of {', '.join(choices)}", field=flag.lstrip("-"))


def default_output_format(transcript_format: str) -> str:
    """The output format ``compact`` writes for a transcript read as ``transcript_format``."""
    return DEFAULT_OUTPUT.get(transcript_format, "ctxbudget")
