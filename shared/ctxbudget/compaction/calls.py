"""What a tool call is: a **command** (a shell string), a **file operation** or another **call**, and its name.

A command's exact text matters (it is what was run); a file operation is read from the tool's name (or an editor's
sub-command) and its path argument; anything else is a lookup or an action, named with its arguments. A file read
(``cat``, ``sed -n``, a ``view``) or a search shows files: the values in its output are the files', not current facts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ..messages.message import ToolCall
from .textscan import clip

__all__ = [
    "COMMAND_SEPARATOR",
    "CallKind",
    "FileOp",
    "call_kind",
    "call_label",
    "edited_line",
    "file_op",
    "is_file_read",
    "is_install_command",
    "is_read_command",
    "is_search",
    "is_thought",
    "only_writes",
    "reads_document",
    "reads_source",
    "shell_command",
    "shell_reads",
    "shell_writes",
    "unquoted",
]

CallKind = Literal["command", "file", "call"]

_SHELL_ARGS = ("command", "cmd", "script", "shell", "commands", "code", "bash")
_PATH_ARGS = ("path", "file_path", "filepath", "filename", "file", "notebook_path", "target_file", "target", "dest")
_EDITOR_COMMANDS = {"view": "read", "create": "created", "str_replace": "edited", "insert": "edited"}
_OPS = (
    (re.compile(r"(?:^|_)(?:multi)?edit|replace|patch|modify|insert|apply", re.I), "edited"),
    (re.compile(r"write|create|save|new_file|touch", re.I), "wrote"),
    (re.compile(r"delete|remove|unlink|(?:^|_)rm(?:$|_)", re.I), "deleted"),
    (re.compile(r"read|view|open|cat|get_file|show|head|tail|load", re.I), "read"),
)
_SEARCH_TOOL = re.compile(r"grep|glob|search|find|(?:^|_)ls(?:$|_)|list_dir|list_files|codebase", re.I)
_SHELL_READ = re.compile(
    r"^\s*(?:cd \S+ && )?(?:cat|less|more|head|tail|bat|nl|sed -n|grep|rg|ag|wc|ls|find|tree|open|goto|scroll_\w+|"
    r"git (?:show|diff|log))\b"
)
"""A command that shows a file (or lists files); one that also writes one (``cat > f << EOF``) is no read."""
_SHELL_INSTALL = re.compile(
    r"^\s*(?:cd \S+ && )?(?:sudo )?(?:pip3?|python3? -m pip|uv pip|uv|npm|pnpm|yarn|apt(?:-get)?|conda|mamba|gem|"
    r"cargo|go|poetry|brew|apk|dnf|yum)\s+(?:install|add|i|get|sync)\b"
)
"""A command that installs packages (``pip install -e .``, ``npm i``, ``apt-get install -y``)."""
_THINKING = re.compile(r"think|thought|reason|reflect", re.IGNORECASE)
"""A tool or argument named for reasoning (``think(thought=...)``): a message a tool posts is no thought."""


@dataclass(frozen=True)
class FileOp:
    """A file operation: ``op`` (read, wrote, edited, created, deleted) on ``path``."""

    op: str
    path: str


def shell_command(call: ToolCall) -> str | None:
    """The shell command ``call`` runs (its command argument), or ``None`` when it runs none."""
    for key in _SHELL_ARGS:
        value = call.args.get(key)
        if isinstance(value, str) and value.strip() and not _editor_command(call):
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return " ".join(value)
    return None


def _editor_command(call: ToolCall) -> str | None:
    """The sub-command of a file-editor tool (``str_replace_editor`` with ``command: view``), else ``None``."""
    value = call.args.get("command")
    if isinstance(value, str) and value in _EDITOR_COMMANDS and any(k in call.args for k in _PATH_ARGS):
        return value
    return None


def _path_arg(call: ToolCall) -> str | None:
    for key in _PATH_ARGS:
        value = call.args.get(key)
        if isinstance(value, str) and value.strip() and len(value) < 500:
            return value.strip()
    return None


def is_search(call: ToolCall) -> bool:
    """A search or listing tool (Grep, Glob, LS, find_files): its path is where it looked, not a file it used."""
    return _SEARCH_TOOL.search(call.name) is not None


def file_op(call: ToolCall) -> FileOp | None:
    """The file operation a call performs, from its name (or editor sub-command) and its path argument."""
    path = _path_arg(call)
    if path is None or is_search(call):
        return None
    editor = _editor_command(call)
    if editor is not None:
        return FileOp(_EDITOR_COMMANDS[editor], path)
    for pattern, op in _OPS:
        if pattern.search(call.name):
            return FileOp(op, path)
    return None  # a call that takes a path (run_tests(path=...)) is not a file operation


def is_thought(call: ToolCall, result_text: str | None) -> bool:
    """The call only carries the agent's reasoning: a ``think`` tool, one prose argument, an empty result.

    Such a call does nothing and returns nothing: its argument is what the agent thought, not a command or a lookup.
    """
    if result_text is None or result_text.strip() or len(call.args) != 1:
        return False
    ((key, value),) = call.args.items()
    named = _THINKING.search(call.name) or _THINKING.search(key)
    return bool(named) and isinstance(value, str) and len(value.split()) >= 8


def call_kind(call: ToolCall) -> CallKind:
    """Command, file operation or other call."""
    if shell_command(call) is not None:
        return "command"
    return "file" if file_op(call) is not None else "call"


def call_label(call: ToolCall, limit: int = 160) -> str:
    """How a call is named in a summary: the command as run, the file and operation, or name(arg=value, ...)."""
    command = shell_command(call)
    if command is not None:
        return f"{call.name}: {clip(command, min(limit, 140))}"
    operation = file_op(call)
    if operation is not None:
        return f"{call.name} {operation.path}"
    return clip(f"{call.name} {call.args_json()}", limit)  # a lookup or an action: its arguments, exactly


def is_read_command(command: str) -> bool:
    """The shell command only shows files or lists them (``cat``, ``sed -n``, ``grep``, ``ls``, ``git diff``)."""
    return _SHELL_READ.match(command) is not None and not shell_writes(command)


_SHELL_SHOW = re.compile(r"^\s*(?:cd \S+ && )?(?:cat|head|tail|nl|less|more|bat|sed -n)\b")
"""A command that shows a file's lines (not a search or a listing: those name files they did not read)."""


def shell_reads(command: str) -> list[str]:
    """The files a command that only shows files reads (``cat a.py``, ``sed -n '1,40p' a.py | head``), in order."""
    if not is_read_command(command):
        return []
    found: dict[str, None] = {}
    for segment in COMMAND_SEPARATOR.split(unquoted(command)):
        if _SHELL_SHOW.match(segment):
            for word in segment.split()[1:]:
                if _FILE_LIKE.match(word):  # an operand that names a file (not a flag, a count or a quoted range)
                    found[word.removeprefix("./")] = None
    return list(found)


def is_install_command(command: str) -> bool:
    """The shell command installs packages: its output is the installer's progress, its outcome is whether it did."""
    return _SHELL_INSTALL.match(command) is not None


def is_file_read(call: ToolCall | None) -> bool:
    """The call reads a file (or lists one): values inside its output are the file's, not current facts."""
    if call is None:
        return False
    command = shell_command(call)
    if command is not None:
        return is_read_command(command)
    if is_search(call):
        return True  # what a search shows is the content of the files it matched
    operation = file_op(call)
    return operation is not None and operation.op == "read"


_NEW_TEXT_ARGS = ("new_string", "new_str")
"""The argument an edit tool takes the replacing text in (Claude Code's Edit, SWE-agent's str_replace_editor)."""
_OLD_TEXT_ARGS = ("old_string", "old_str")
"""The argument it takes the replaced text in, in the same order."""
_EDITED_LINE_CHARS = 200
_EDITED_BLOCK_LINES = 400
"""An edit of more new lines than this is a block rewritten, not read line by line."""
_SOURCE_SUFFIXES = frozenset(
    (
        "py", "pyi", "go", "rs", "ts", "tsx", "js", "jsx", "mjs", "cjs", "java", "kt", "kts", "scala", "c", "h", "cc",
        "cpp", "cxx", "hpp", "hh", "cs", "rb", "php", "swift", "m", "mm", "sh", "bash", "zsh", "lua", "r", "jl", "ex",
        "exs", "erl", "hs", "ml", "clj", "dart", "vue", "svelte", "sql", "pl", "proto", "toml", "yaml", "yml", "json",
        "ini", "cfg", "conf", "env", "properties", "xml", "gradle", "tf", "hcl", "lock", "mod", "sum", "ps1", "psm1",
        "psd1", "fish", "nu", "elv", "xsh", "bat", "cmd", "css", "scss", "less", "groovy", "zig", "nim",
    )
)  # fmt: skip
"""What a source or configuration file is named (``fields.py``, ``settings.toml``): what it holds is code and values."""
_DOCUMENT_SUFFIXES = frozenset(("md", "mdx", "markdown", "rst", "adoc", "asciidoc", "org"))
"""What a document is named: what it says was written or updated is what it says, not what the work did."""


def reads_source(call: ToolCall | None) -> bool:
    """The call reads a source or configuration file (by its path's suffix): every line of it is the file's.

    A log or a report that was read (``app.log``, ``results.txt``) can hold the work's measurements; code and
    configuration only hold what the file says (``bytes := make([]byte, 6)``, ``TIMEOUT = 30``).
    """
    return _reads(call, _SOURCE_SUFFIXES)


def reads_document(call: ToolCall | None) -> bool:
    """The call reads a document (``README.md``, ``STATE.md``).

    A path it says was "updated" or "generated" is its text ("See: PROJECT.md (updated 2026-02-11)", "the generated
    API client"), not a file the work wrote.
    """
    return _reads(call, _DOCUMENT_SUFFIXES)


def _reads(call: ToolCall | None, suffixes: frozenset[str]) -> bool:
    """The call reads files, and every file it shows is named with one of ``suffixes``."""
    if call is None or not is_file_read(call) or is_search(call):
        return False
    command = shell_command(call)
    if command is None:
        operation = file_op(call)
        return operation is not None and _suffix(operation.path) in suffixes
    first = COMMAND_SEPARATOR.split(unquoted(command, lambda _quoted: ""), 1)[0]  # what the first command shows
    paths = [word for word in first.split() if _FILE_LIKE.match(word)]
    return bool(paths) and all(_suffix(path) in suffixes for path in paths)


def edited_line(call: ToolCall) -> str | None:
    """The line an edit call leaves changed (``new_string``, ``new_str``), if it changes one short line.

    It is the edited file's state after the call: "trailers.go: edited -> now: ... id.Pattern ...". An edit of
    several lines changes the lines of its new text that its old text (``old_string``, ``old_str``) did not hold,
    whitespace aside (an aligned block re-aligned is unchanged): one such line is shown, a block rewritten is not.
    """
    for key, old_key in zip(_NEW_TEXT_ARGS, _OLD_TEXT_ARGS, strict=True):
        value = call.args.get(key)
        if isinstance(value, str):
            before = call.args.get(old_key)
            was = {" ".join(ln.split()) for ln in before.splitlines()} if isinstance(before, str) else set()
            lines = value.splitlines()
            if len(lines) > _EDITED_BLOCK_LINES:
                return None
            changed = [ln.strip() for ln in lines if ln.strip() and " ".join(ln.split()) not in was]
            return changed[0] if len(changed) == 1 and len(changed[0]) <= _EDITED_LINE_CHARS else None
    return None


def _suffix(path: str) -> str:
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[1].lower() if "." in name else ""


_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_]\w*)\1")


def unquoted(command: str, replace: Callable[[str], str] = lambda _quoted: "Q") -> str:
    r"""``command`` with each quoted shell string (``"a | b"``, ``'x > y'``) given to ``replace`` for what stands there.

    What a quoted string holds separates and redirects nothing. A backslash escapes the next character inside double
    quotes. A quote never closed is a character like any other (and so is every quote of its kind after it: none of
    them closes either). One pass of ``str.find``: ``echo "\"\"\"...`` never closed costs its length, not its
    square.
    """
    if '"' not in command and "'" not in command:
        return command
    out: list[str] = []
    kept = look = 0  # kept: where the text not yet copied starts; look: where the next quote is looked for
    doubles = singles = True
    while True:
        double = command.find('"', look) if doubles else -1
        single = command.find("'", look) if singles else -1
        if double < 0 and single < 0:
            break
        start = double if double >= 0 and (single < 0 or double < single) else single
        end = _closing_double(command, start) if start == double else command.find("'", start + 1)
        if end < 0:  # never closed: no later quote of its kind closes either
            doubles, singles = (False, singles) if start == double else (doubles, False)
            look = start + 1
            continue
        out += (command[kept:start], replace(command[start : end + 1]))
        kept = look = end + 1
    out.append(command[kept:])
    return "".join(out)


def _closing_double(text: str, start: int) -> int:
    """The double quote that closes the one at ``start`` (not escaped: an even run of backslashes before it), or -1."""
    at = start + 1
    while (at := text.find('"', at)) >= 0:
        before = at
        while before > start + 1 and text[before - 1] == "\\":
            before -= 1
        if (at - before) % 2 == 0:
            return at
        at += 1
    return -1


COMMAND_SEPARATOR = re.compile(r"&&|\|\||;|\|")
"""What separates the commands of a command line (``&&``, ``||``, ``;``, a pipe)."""
_REDIRECT = re.compile(r"(?<![\d&>])(>>?)\s*([^\s;|&<>()]+)")
_WRITERS = (
    (re.compile(r"^sed\s+(?:\S+\s+)*?(?:-i\S*|--in-place\S*)\s"), "edited"),
    (re.compile(r"^(?:tee|touch|cp|mv|install)\s"), "wrote"),
    (re.compile(r"^(?:rm|unlink)\s"), "deleted"),
)
_FILE_LIKE = re.compile(r"^(?!-)(?!\$)(?=[^./]*[./])[\w./~+-]*$")
"""A word that names a file: a ``.`` or ``/`` in it (looked ahead for, so ``.....!`` fails in one pass)."""


def shell_writes(command: str) -> list[FileOp]:
    """The files a shell command writes, each once, in order.

    Redirections (``> f``, ``cat > f << EOF``), ``sed -i``, and the target of ``tee``, ``cp``, ``mv`` and
    ``touch``; the file ``rm`` deletes. Heredoc bodies and quoted strings are not read (``if a > b:`` inside a
    script is no redirection).
    """
    found: dict[str, str] = {}
    for plain in _plain_lines(command):
        for op, path in _redirect_targets(plain):
            found.setdefault(path, op)
        for segment in COMMAND_SEPARATOR.split(plain):
            words = segment.split()
            for pattern, op in _WRITERS:
                if not words or not pattern.match(segment.strip() + " "):
                    continue
                # a removal's every operand is gone (rm a.py b.py); a copy, a move or a write names its target last
                targets = words[1:] if op == "deleted" else words[-1:]
                for target in targets:
                    if _FILE_LIKE.match(target):
                        found[target] = op if op == "deleted" else found.get(target, op)
    return [FileOp(op, path.removeprefix("./")) for path, op in found.items() if path != "/dev/null"]


def _plain_lines(command: str) -> list[str]:
    """The lines of a shell command without heredoc bodies, quoted strings taken out.

    A quoted path (``> "out.txt"``) is the path; any other quoted string (``"$DIR/t.toml"``, a script) is ``Q?``,
    which names no file (a plain ``Q`` would read as one: ``cat > "$DIR/t.toml"`` wrote no file ``Q``), and an empty
    one is nothing.
    """
    lines: list[str] = []
    ending: str | None = None
    for line in command.splitlines()[:400]:
        if ending is not None:
            ending = None if line.strip() == ending else ending
            continue
        lines.append(line)
        heredoc = _HEREDOC.search(line)
        ending = heredoc.group(2) if heredoc else None
    # a quoted string may span lines (python -c "...\n..."): quotes are taken out of the whole command at once
    return unquoted("\n".join(lines), _placeholder).splitlines()


def _placeholder(quoted: str) -> str:
    inner = quoted[1:-1]
    return inner if _TARGET.match(inner) else "Q?" if inner.strip() else ""


_FILING = re.compile(r"^(?:cat|echo|printf|tee|cp|mv|touch|rm|unlink|mkdir|cd)\b")
"""A command that only files text (writes, copies, moves, removes), or changes directory."""


def only_writes(command: str) -> bool:
    """The shell command only writes files (``cat > t.py << 'EOF' ...``, ``echo x > f``, ``cp a b``): nothing runs.

    Its files are its outcome: a summary names them as written, and the command adds nothing when it said nothing.
    """
    segments = [seg.strip() for line in _plain_lines(command) for seg in COMMAND_SEPARATOR.split(line)]
    return bool(shell_writes(command)) and all(_FILING.match(seg) for seg in segments if seg)


_TARGET = re.compile(r"^[\w./~+-]+$")


def _redirect_targets(line: str) -> list[tuple[str, str]]:
    return [
        ("edited" if arrows == ">>" else "wrote", path)
        for arrows, path in _REDIRECT.findall(line)
        if _TARGET.match(path) and not path.startswith("-")
    ]
