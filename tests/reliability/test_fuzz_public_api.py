"""Every public function, every tool a model can call, every model reply: fuzzed by default, one slot at a time.

The hand-written table in ``test_fuzz_entry_points`` covers constructors and methods with care; this module makes
sure nothing public is left out of fuzzing because nobody wrote it down:

* **functions**: every function in the ``__all__`` of :data:`SURFACES` is called with a fuzzed value in one
  parameter and a valid example (:data:`EXAMPLES`, by parameter name) in each other required one. A new public
  function is fuzzed as soon as it is exported; :func:`test_every_public_function_is_fuzzed` fails, naming the
  parameter, when one of its required parameters has no example (add one) and it is not in :data:`NOT_FUZZED`
  (say why).
* **tools** (a model's entry points; the archive search and read-back tools among them): every tool a factory in
  :data:`TOOL_SOURCES` returns is called with a fuzzed value in each of its arguments (read from the tool's own
  schema), the others from :data:`TOOL_EXAMPLES` or the schema's defaults. A new tool a factory returns is fuzzed
  with no change here; a new factory is one line in :data:`TOOL_SOURCES`.
* **model replies** (model summaries): each entry of :data:`MODEL_REPLIES` runs the path that reads what a model
  returned, with the fuzzed value as the reply. Register a new reader there (one line: the reply in, the path run).

Acceptable outcomes, as everywhere: a result, or a :class:`~ctxbudget.errors.CtxBudgetError`; never a raw
exception, never a hang (the alarm), and a model that was returned must come back through JSON as it was.
Behaviour beyond that (a search result's size, a summary's trusted sections) belongs to each surface's own tests.
"""

from __future__ import annotations

import atexit
import importlib
import inspect
import shutil
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from ctxbudget import (
    Archive,
    CompactionPolicy,
    ContextItem,
    ContextSession,
    Message,
    PackageBinding,
    PlannerConfig,
    ToolSchema,
)
from ctxbudget.compaction.summarize import SummaryRequest
from ctxbudget.messages._validation import short_repr
from ctxbudget.messages.tokens import CharCounter
from hypothesis import given, settings
from langchain_core.messages import AIMessage, HumanMessage
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.storage.chat_store import SimpleChatStore
from llama_index.core.tools import FunctionTool, ToolOutput

from llamaindex_ctxbudget import BudgetedMemory, archive_tools, bound_tools

from .fuzzing import VALUES, Entry, check, round_trips

SURFACES = (
    "ctxbudget",
    *(
        f"ctxbudget.{layer}"
        for layer in ("messages", "providers", "archive", "context", "compaction", "session", "stores")
    ),
    *(f"ctxbudget.{layer}" for layer in ("shared_session", "transcripts", "cli")),
    "llamaindex_ctxbudget",
    "langchain_ctxbudget",
)
"""Packages whose exported functions are fuzzed: the top-level face (with the names it held before the layers were
split out, still fuzzed under their old names), every layer's face, and both adapters. The cognitive face's wire
validators are the A3S contract's own checks, held by ``tests/cognitive`` against the contract's examples."""
MAX_EXAMPLES = 15


# -- valid examples for the slots not being fuzzed -------------------------------------------------------------
def _user() -> Message:
    return Message(role="user", content="where is the config?")


def _item() -> ContextItem:
    return ContextItem(id="i", source="s", content="the config lives in /etc/app.toml")


def _binding() -> PackageBinding:
    return PackageBinding.create(
        package_id="acme/docs",
        package_version="1.0.0",
        lifecycle_generation=1,
        generation_digest="sha256:" + "a" * 64,
        surface_id="domain-knowledge",
        format_version="0.2",
        content_digest="sha256:" + "b" * 64,
    )


def _event() -> object:
    session = ContextSession(max_tokens=1_000, counter=CharCounter())
    events: list[object] = []
    session.subscribe(events.append)
    session.add_user("q")
    return events[-1]


def _memory() -> BudgetedMemory:
    return BudgetedMemory.from_defaults(max_tokens=8_000)


_FILES = Path(tempfile.mkdtemp(prefix="ctxbudget-fuzz-"))
"""Where examples of path parameters point (the paths themselves are never fuzzed: see NOT_FUZZED); removed at exit."""
atexit.register(shutil.rmtree, _FILES, ignore_errors=True)


def _transcript_file() -> Path:
    path = _FILES / "transcript.json"
    path.write_text('[{"role": "user", "content": "hi"}]', encoding="utf-8")
    return path


FRAGMENT = {"id": "f", "source_id": "s", "trust": "user", "value": "text"}
EXAMPLES: dict[str, Callable[[], Any]] = {
    # by parameter name
    "archive": Archive,
    "bound": lambda: False,
    "chat": lambda: ChatMessage(role="user", content="q"),
    "config": PlannerConfig,
    "content": lambda: "body",
    "counter": CharCounter,
    "data": lambda: '{"role": "user", "content": "hi"}',
    "domain": lambda: "ctxbudget.test",
    "event": _event,
    "fragments": lambda: [FRAGMENT],
    "hits": list,
    "item": _item,
    "items": lambda: [_item()],
    "key": lambda: "k",
    "kinds_or_providers": list,
    "markdown": lambda: "# Compact Instructions\nkeep the ids\n",
    "max_tokens": lambda: 200,
    "memory": _memory,
    "message": _user,
    "messages": lambda: [_user()],
    "model": lambda: "gpt-4o",
    "mutable_fragment_ids": list,
    "name": lambda: "o200k_base",
    "original_fragments": lambda: [FRAGMENT],
    "provider_binding": lambda: None,
    "query": lambda: "config",
    "request": lambda: SummaryRequest(messages=(_user(),)),
    "session": lambda: ContextSession(max_tokens=1_000, counter=CharCounter()),
    "source": lambda: "s",
    "spec": lambda: {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}},
    "state": lambda: {"messages": []},
    "store": SimpleChatStore,
    "stored_binding": _binding,
    "text": lambda: "some text to work on",
    "tool": lambda: ToolSchema(name="lookup"),
    "tools": list,
    "trust": lambda: "user",
    "type": lambda: "note",
    "usage": lambda: {"prompt_tokens": 10, "completion_tokens": 2},
    "value": lambda: ["v"],
    # by function and parameter, where the name alone is not enough
    "ctxbudget.escape_attribute.value": lambda: "v",
    "ctxbudget.messages_from_openai.messages": lambda: [{"role": "user", "content": "q"}],
    "ctxbudget.messages_from_anthropic.messages": lambda: [{"role": "user", "content": "q"}],
    "ctxbudget.messages_from_responses.items": lambda: [{"role": "user", "content": "q"}],
    "ctxbudget.providers.message_from_openai.message": lambda: {"role": "user", "content": "q"},
    "ctxbudget.providers.is_responses_item.item": lambda: {"type": "message", "role": "user", "content": "q"},
    "ctxbudget.tool_from_anthropic.spec": lambda: {"name": "lookup", "input_schema": {"type": "object"}},
    "ctxbudget.tool_from_responses.spec": lambda: {"type": "function", "name": "lookup", "parameters": {}},
    "langchain_ctxbudget.from_langchain.message": lambda: HumanMessage("q"),
    "langchain_ctxbudget.usage_of.message": lambda: AIMessage("a"),
    "llamaindex_ctxbudget.tool_calls_of.chat": lambda: ChatMessage(role="assistant", content="a"),
    "llamaindex_ctxbudget.bound_tools.tools": lambda: [FunctionTool.from_defaults(_echo, name="echo")],
    "ctxbudget.load_transcript.path": _transcript_file,
    "root": lambda: _FILES,
    "trusted": lambda: False,
    "llamaindex_ctxbudget.persist_simple_chat_store.path": lambda: _FILES / "store.json",
}
"""A valid value for a parameter, by ``<function>.<parameter>`` or, failing that, by parameter name."""

NOT_FUZZED: dict[str, str] = {
    "ctxbudget.cli.main.argv": "the command line: sys.argv's strings (tests/cli holds what a user can type there)",
    "ctxbudget.find_instruction_files.root": "a generated path could walk the whole disk",
    "ctxbudget.find_instruction_files.cwd": "a generated path could walk the whole disk",
    "ctxbudget.load_compact_instructions.root": "a generated path could walk the whole disk",
    "ctxbudget.load_compact_instructions.cwd": "a generated path could walk the whole disk",
    "ctxbudget.load_instruction_items.root": "a generated path could walk the whole disk",
    "ctxbudget.load_instruction_items.cwd": "a generated path could walk the whole disk",
    "ctxbudget.load_transcript.path": "a generated path could name a device that never ends (/dev/zero)",
    "llamaindex_ctxbudget.persist_simple_chat_store.path": "it writes a file wherever the generated path points",
}
"""``<function>.<parameter>`` (or a whole ``<function>``) never fuzzed, and why."""


def _echo(text: Any) -> str:
    """A user's tool that answers anything (what a wrapped tool raises is the user's own)."""
    return f"echo {short_repr(text)} " * 300


KNOWN_RAW: dict[str, tuple[Any, str]] = {
    # An entry that raises a raw exception for a value of the wrong type: its name, a value that shows it (tried
    # first) and where. The mark is strict: once it is fixed, remove its line here. All 26 found when this module
    # was written (issue 26) are fixed.
}
"""Entries known to fail, with a value that shows it and where: each is a strict ``xfail`` until it is fixed."""


def _example(function: str, parameter: str) -> Callable[[], Any] | None:
    return EXAMPLES.get(f"{function}.{parameter}") or EXAMPLES.get(parameter)


def public_functions() -> dict[str, Callable[..., Any]]:
    """Every function the surfaces export, by its first exported name (a re-export is fuzzed once)."""
    found: dict[str, Callable[..., Any]] = {}
    seen: set[int] = set()
    for surface in SURFACES:
        module = importlib.import_module(surface)
        names = [*module.__all__, *sorted(getattr(module, "_MOVED", ()))]  # the top-level face's former names too
        for name in names:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # a former name of the face: it warns, on purpose
                value = getattr(module, name)
            if inspect.isfunction(value) and id(value) not in seen:
                seen.add(id(value))
                found[f"{surface}.{name}"] = value
    return found


def _caller(name: str, function: Callable[..., Any], slot: str) -> Callable[[Any], object]:
    parameters = inspect.signature(function).parameters

    def call(value: Any) -> object:
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for parameter in parameters.values():
            if parameter.name == slot:
                given_value = value
            elif parameter.default is inspect.Parameter.empty and parameter.kind not in (
                parameter.VAR_POSITIONAL,
                parameter.VAR_KEYWORD,
            ):
                example = _example(name, parameter.name)
                assert example is not None, f"{name}: no example for {parameter.name!r}"
                given_value = example()
            else:
                continue
            if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.VAR_POSITIONAL):
                args.append(given_value)
            else:
                kwargs[parameter.name] = given_value
        return function(*args, **kwargs)

    return call


def _missing(name: str, function: Callable[..., Any]) -> list[str]:
    """Required parameters of ``name`` that have no example and are not excused."""
    return [
        parameter.name
        for parameter in inspect.signature(function).parameters.values()
        if parameter.default is inspect.Parameter.empty
        and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
        and _example(name, parameter.name) is None
        and f"{name}.{parameter.name}" not in NOT_FUZZED
        and name not in NOT_FUZZED
    ]


def function_entries() -> list[Entry]:
    entries = []
    for name, function in public_functions().items():
        if name in NOT_FUZZED or _missing(name, function):
            continue
        for parameter in inspect.signature(function).parameters.values():
            if parameter.kind is parameter.VAR_KEYWORD or f"{name}.{parameter.name}" in NOT_FUZZED:
                continue
            entries.append(Entry(f"{name}({parameter.name}=v)", _caller(name, function, parameter.name)))
    return entries


# -- tools a model calls ---------------------------------------------------------------------------------------
def _memory_with_archive() -> BudgetedMemory:
    memory = BudgetedMemory.from_defaults(max_tokens=2_000)
    call = {"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
    memory.put(ChatMessage(role="user", content="find the config"))
    memory.put(ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [call]}))
    output = "\n".join(f"line {i}: config value {i}" for i in range(2_000))
    memory.put(ChatMessage(role="tool", content=output, additional_kwargs={"tool_call_id": "c1"}))
    return memory


def _archived_handle() -> str:
    memory = _memory_with_archive()
    return next(entry.handle for entry in memory.session.archive.entries())


TOOL_SOURCES: dict[str, Callable[[], Sequence[Any]]] = {
    "llamaindex_ctxbudget.archive_tools": lambda: archive_tools(_memory_with_archive()),
    "llamaindex_ctxbudget.bound_tools": lambda: bound_tools(
        [FunctionTool.from_defaults(_echo, name="echo")], _memory_with_archive()
    ),
}
"""Factories of the tools a model calls (LlamaIndex ``BaseTool``s): every tool each returns is fuzzed. The LangChain
middleware's tools are answered inside ``wrap_tool_call`` from the agent state, so they need a tool-call request
and state to be fuzzed this way; register a factory of ``(tool, call)`` here when they get one."""

TOOL_EXAMPLES: dict[str, Callable[[], Any]] = {
    "handle": _archived_handle,
    "query": lambda: "config value",
    "text": lambda: "hello",
}
"""A valid argument by name, for arguments whose schema has no default."""


def _storable(output: object) -> None:
    """A tool's output goes into the conversation as a tool message: it must be one a message can hold."""
    assert isinstance(output, ToolOutput), f"a tool returned {type(output).__name__}"
    Message(role="tool", tool_call_id="c1", content=str(output.content))


def _tool_caller(source: str, index: int, slot: str) -> Callable[[Any], object]:
    def call(value: Any) -> object:
        tool = TOOL_SOURCES[source]()[index]
        kwargs: dict[str, Any] = {}
        for name, info in tool.metadata.fn_schema.model_fields.items():
            if name == slot:
                kwargs[name] = value
            elif info.is_required():
                kwargs[name] = TOOL_EXAMPLES[name]()
        return tool.call(**kwargs)

    return call


def tool_entries() -> list[Entry]:
    entries = []
    for source, factory in TOOL_SOURCES.items():
        for index, tool in enumerate(factory()):
            for field in tool.metadata.fn_schema.model_fields:
                name = f"{source}:{tool.metadata.name}({field}=v)"
                entries.append(Entry(name, _tool_caller(source, index, field), then=_storable))
    return entries


# -- what a model returns ----------------------------------------------------------------------------------------
class _Replies:
    """A summarizer that answers with the given value, whatever it is."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply

    def summarize(self, request: SummaryRequest) -> Any:
        return self.reply


def _compacted_with(reply: Any) -> object:
    session = ContextSession(
        max_tokens=4_000,
        counter=CharCounter(),
        summarizer=_Replies(reply),
        policy=CompactionPolicy(keep_recent_messages=2),
    )
    for turn in range(6):
        session.add_user(f"question {turn}: where is setting {turn}?")
        session.add_assistant(f"answer {turn}: setting {turn} is in file_{turn}.toml")
    event = session.compact("keep the file names")
    ContextSession.restore(session.snapshot().to_json(), counter=CharCounter())
    return event


def _llamaindex_compacted_with(reply: Any) -> object:
    memory = BudgetedMemory.from_defaults(max_tokens=4_000, summarizer=_Replies(reply))
    for turn in range(6):
        memory.put(ChatMessage(role="user", content=f"question {turn}: where is setting {turn}?"))
        memory.put(ChatMessage(role="assistant", content=f"setting {turn} is in file_{turn}.toml"))
    memory.compact()
    return memory.get()


MODEL_REPLIES: dict[str, Callable[[Any], object]] = {
    "ContextSession.compact(summary reply v)": _compacted_with,
    "BudgetedMemory.compact(summary reply v)": _llamaindex_compacted_with,
}
"""Paths that read what a model returned, by name: each takes the reply and runs the path."""


def reply_entries() -> list[Entry]:
    return [Entry(name, reader) for name, reader in MODEL_REPLIES.items()]


ENTRIES = [*function_entries(), *tool_entries(), *reply_entries()]


def _marks(entry: Entry) -> list[pytest.MarkDecorator]:
    known = KNOWN_RAW.get(entry.name)
    return [pytest.mark.xfail(strict=True, reason=f"known, not yet fixed: {known[1]}")] if known else []


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name, marks=_marks(e)) for e in ENTRIES])
def test_any_value_in_any_public_slot_is_a_typed_error_or_a_result(entry: Entry) -> None:
    checked = Entry(entry.name, entry.call, then=entry.then or round_trips)
    if entry.name in KNOWN_RAW:  # the value that shows it, first: the known failure is deterministic
        check(checked, KNOWN_RAW[entry.name][0])

    @settings(max_examples=MAX_EXAMPLES)
    @given(value=VALUES)
    def any_value(value: Any) -> None:
        check(checked, value)

    any_value()


def test_every_public_function_is_fuzzed() -> None:
    functions = public_functions()
    missing = {name: params for name, function in functions.items() if (params := _missing(name, function))}
    assert not missing, f"add an example to EXAMPLES (or a reason to NOT_FUZZED) for: {missing}"
    assert set(NOT_FUZZED) <= {f"{n}.{p}" for n, f in functions.items() for p in inspect.signature(f).parameters}
    slots = {
        name: [p for p in inspect.signature(f).parameters if f"{name}.{p}" not in NOT_FUZZED]
        for name, f in functions.items()
    }
    fuzzed = {entry.name.split("(", 1)[0] for entry in ENTRIES}
    assert {name for name, params in slots.items() if params} <= fuzzed
    for name in (name for name, f in functions.items() if not inspect.signature(f).parameters):
        functions[name]()  # nothing to fuzz: it runs
    assert set(KNOWN_RAW) <= {entry.name for entry in ENTRIES}
    assert {"ctxbudget.messages_from_openai", "llamaindex_ctxbudget.from_chat_message"} <= fuzzed, "converters"


def test_every_tool_a_factory_returns_is_fuzzed() -> None:
    tools = {f"{source}:{tool.metadata.name}" for source, make in TOOL_SOURCES.items() for tool in make()}
    fuzzed = {entry.name.split("(", 1)[0] for entry in ENTRIES}
    assert tools <= fuzzed
    assert {"llamaindex_ctxbudget.archive_tools:search_archive"} <= tools, "the search tool is fuzzed"
