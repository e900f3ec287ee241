"""ATIF, Harbor's Agent Trajectory Interchange Format, read and written with the ``atif`` package's pydantic models.

A trajectory is ``{"schema_version": "ATIF-v1.x", "agent": {...}, "steps": [...], ...}``; each step is a system
prompt, a user message or one agent turn (its message, reasoning, tool calls and their observation). Reading (each
step validated with ``atif.Step``, numbering checked, the steps streamed one at a time):

* a ``system`` step is a system message (the results of its observation, infrastructure events, appended);
* a ``user`` step is a user message;
* an ``agent`` step is an assistant message with its ``tool_calls``; each observation result that names a call
  (``source_call_id``) is that call's tool message, a result that names none (a non-tool action's output) is the
  user message that feeds it back; a result pointing at a subagent trajectory says so in its text;
* ``reasoning_content`` is kept with the message (and written back), not counted: providers do not send an earlier
  turn's reasoning again; an agent step's ``metrics.prompt_tokens`` is the prompt size the file reports for that
  step's request;
* the model is ``agent.model_name`` (else the last agent step's ``model_name``), the tools
  ``agent.tool_definitions`` (OpenAI function definitions); embedded ``subagent_trajectories`` are not read (the
  report says how many there are) and are written back untouched.

Writing gives a trajectory ``atif.Trajectory`` validates: the steps renumbered from 1, each message's own step
fields (timestamps, metrics, extras) put back, a tool result in the observation of the agent step that called it.
The ``atif`` package is an optional extra: ``pip install -e ".[atif]"`` in the clone (``pip install "ctxbudget[atif]"``
once published), or ``pip install atif``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from importlib import metadata
from typing import Any

from pydantic import ValidationError

from ...messages.message import ContentBlock, Message, ToolCall, ToolSchema
from ._items import Item, Reported
from ._stream import Rows
from ._where import Where

__all__ = ["ATIF_META", "INSTALL", "atif_model", "atif_stream", "is_atif", "render_atif", "require_atif"]

ATIF_META = "atif"
"""Metadata key holding a message's ATIF step fields (and, on a tool message, its result's), written back."""
INSTALL = (
    'ATIF needs the atif package (pydantic models of the format): pip install atif, or pip install -e ".[atif]" in '
    'your ctxbudget clone (once ctxbudget is published on PyPI: pip install "ctxbudget[atif]")'
)
SCHEMA_VERSION = "ATIF-v1.8"
"""What a trajectory written from another format declares (the ``atif`` package's version)."""
_AGENT_FIELDS = ("model_name", "reasoning_effort", "reasoning_content", "metrics", "llm_call_count")
_STEP_FIELDS = ("timestamp", "extra", "is_copied_context")


def require_atif() -> Any:
    """The ``atif`` module, or an :class:`ImportError` saying how to install it."""
    try:
        import atif  # noqa: PLC0415 - optional dependency, imported only for ATIF
    except ImportError as exc:
        raise ImportError(INSTALL) from exc
    return atif


def _version() -> str:
    """The installed ctxbudget's version, for the ``agent`` of a trajectory written from another format.

    The distribution's version, which ``ctxbudget.__version__`` equals (the CLI tests pin it), read without importing
    the package's face from below it; ``unknown`` for a source tree that was never installed.
    """
    try:
        return metadata.version("ctxbudget")
    except metadata.PackageNotFoundError:
        return "unknown"


def is_atif(document: Any) -> bool:
    """An ATIF trajectory: a ``schema_version`` starting ``ATIF`` and ``steps``."""
    version = document.get("schema_version") if isinstance(document, Mapping) else None
    return isinstance(version, str) and version.upper().startswith("ATIF") and "steps" in document


def atif_model(agent: Any, steps: Any) -> tuple[str | None, str | None]:
    """The model a trajectory names, and where: ``agent.model_name``, else the last agent step's ``model_name``."""
    name = agent.get("model_name") if isinstance(agent, Mapping) else None
    if isinstance(name, str) and name:
        return name, "agent.model_name"
    at = getattr(steps, "at", None)
    count = len(steps) if hasattr(steps, "__len__") else 0
    for index in range(count - 1, max(-1, count - 200), -1):
        step = at(index) if at is not None else None
        model = step.get("model_name") if isinstance(step, Mapping) and step.get("source") == "agent" else None
        if isinstance(model, str) and model:
            return model, f"steps[{index}].model_name"
    return None, None


def check_agent(agent: Any, source: str) -> None:
    """Validate the trajectory's ``agent`` with ``atif.Agent``."""
    atif = require_atif()
    _validated(atif.Agent, agent, Where(source, "agent"))


def _validated(model: Any, value: Any, where: Where) -> Any:
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "step"
        where.fail(field, str(first["msg"]).removeprefix("Value error, "))


def atif_stream(steps: Rows, source: str) -> Iterator[Item]:
    """The messages of an ATIF trajectory's steps (see the module docstring), validated one step at a time."""
    atif = require_atif()
    expected = 1
    for where, raw in steps:
        where.check_tree(raw)
        step = _validated(atif.Step, raw, where)
        if step.step_id != expected:
            where.fail("step_id", f"is {step.step_id}, expected {expected}: steps are numbered 1, 2, ... in order")
        expected += 1
        if step.source == "agent" and step.metrics is not None and step.metrics.prompt_tokens:
            yield Reported(step.metrics.prompt_tokens, f"{where.label}.metrics.prompt_tokens")
        yield from _messages(step, raw)


def _messages(step: Any, raw: Mapping[str, Any]) -> list[Message]:
    base = f"atif-{step.step_id}"
    fields = {key: raw[key] for key in (*_STEP_FIELDS, *_AGENT_FIELDS) if key in raw}
    content = _content(step.message)
    if step.source == "system":
        results = step.observation.results if step.observation is not None else []
        texts = [content if isinstance(content, str) else _joined(content), *(_result_text(r) for r in results)]
        raw_results = [r.model_dump(mode="json", exclude_none=True) for r in results]
        meta = {**fields, **({"results": raw_results} if raw_results else {})}
        return [Message(role="system", content="\n\n".join(t for t in texts if t), id=base, metadata=_meta(meta))]
    if step.source == "user":
        return [Message(role="user", content=content, id=base, metadata=_meta(fields))]
    calls = tuple(ToolCall(id=c.tool_call_id, name=c.function_name, args=c.arguments) for c in step.tool_calls or ())
    call_extras = {c.tool_call_id: c.extra for c in step.tool_calls or () if c.extra}
    meta = {**fields, **({"call_extras": call_extras} if call_extras else {})}
    out = [Message(role="assistant", content=content, tool_calls=calls, id=base, metadata=_meta(meta))]
    names = {call.id: call.name for call in calls}
    for k, result in enumerate(step.observation.results if step.observation is not None else ()):
        kept = result.model_dump(mode="json", exclude_none=True, exclude={"content", "source_call_id"})
        text = _result_text(result)
        if result.source_call_id is not None and result.source_call_id in names:
            out.append(
                Message(
                    role="tool",
                    content=text,
                    tool_call_id=result.source_call_id,
                    name=names[result.source_call_id],
                    id=f"{base}-r{k}",
                    metadata=_meta({"result": kept} if kept else {}),
                )
            )
        else:
            out.append(Message(role="user", content=text, id=f"{base}-r{k}", metadata=_meta({"result": kept})))
    return out


def _meta(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {ATIF_META: dict(fields)} if fields else {}


def _content(message: Any) -> str | tuple[ContentBlock, ...]:
    if isinstance(message, str):
        return message
    blocks = []
    for part in message:
        if part.type == "text":
            blocks.append(ContentBlock(type="text", text=part.text or ""))
        else:
            blocks.append(ContentBlock(type=part.type, data={"source": part.source.model_dump(mode="json")}))
    if all(block.type == "text" for block in blocks):
        return "\n".join(block.text or "" for block in blocks)
    return tuple(blocks)


def _joined(content: tuple[ContentBlock, ...]) -> str:
    return "\n".join(block.text or "" for block in content if block.text)


def _result_text(result: Any) -> str:
    content = result.content
    text = content if isinstance(content, str) else _joined(_content(content)) if content else ""  # type: ignore[arg-type]
    refs = result.subagent_trajectory_ref or []
    shown = [ref.trajectory_id or ref.trajectory_path for ref in refs]
    if shown:
        text = "\n".join(filter(None, [text, f"[subagent trajectory: {', '.join(s for s in shown if s)}]"]))
    return text


# -- writing -------------------------------------------------------------------------------------------------
def render_atif(
    messages: Sequence[Message], tools: Sequence[ToolSchema], envelope: Mapping[str, Any] | None, model: str | None
) -> dict[str, Any]:
    """An ATIF trajectory of ``messages`` (validated by ``atif.Trajectory``), as a JSON-able dict.

    ``envelope`` is an ATIF input's fields besides its steps (agent, session, notes, subagents), kept; without one
    the agent is ``ctxbudget`` with ``model`` and the tools.
    """
    atif = require_atif()
    steps: list[dict[str, Any]] = []
    callers: dict[str, dict[str, Any]] = {}  # call id -> the agent step that made it
    for message in messages:
        _add_step(steps, callers, message)
    for number, step in enumerate(steps, start=1):
        step["step_id"] = number
    body: dict[str, Any] = dict(envelope or {})
    if "agent" not in body:
        agent: dict[str, Any] = {"name": "ctxbudget", "version": _version()}
        if model:
            agent["model_name"] = model
        if tools:
            agent["tool_definitions"] = [_tool(tool) for tool in tools]
        body["agent"] = agent
    body.setdefault("schema_version", SCHEMA_VERSION)
    body["steps"] = steps
    trajectory = _validated(atif.Trajectory, body, Where("<output>", "trajectory"))
    return trajectory.to_json_dict()  # type: ignore[no-any-return]


def _tool(tool: ToolSchema) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name, "parameters": tool.parameters}
    if tool.description:
        function["description"] = tool.description
    return {"type": "function", "function": function}


def _add_step(steps: list[dict[str, Any]], callers: dict[str, dict[str, Any]], message: Message) -> None:
    fields = dict(message.metadata.get(ATIF_META) or {})
    if message.role == "tool":
        _add_result(steps, callers, message, fields)
        return
    text: Any = message.content if isinstance(message.content, str) else _parts(message.content)
    if message.role == "assistant":
        step: dict[str, Any] = {"source": "agent", "message": text}
        step.update({key: value for key, value in fields.items() if key in (*_STEP_FIELDS, *_AGENT_FIELDS)})
        extras = fields.get("call_extras") or {}
        if message.tool_calls:
            step["tool_calls"] = [
                {"tool_call_id": c.id, "function_name": c.name, "arguments": dict(c.args), **_extra(extras, c.id)}
                for c in message.tool_calls
            ]
            callers.update({call.id: step for call in message.tool_calls})
        steps.append(step)
        return
    if message.role == "user" and "result" in fields and steps and steps[-1]["source"] == "agent":
        result = {**fields["result"], "content": text}  # a non-tool action's output, fed back: its step's result
        steps[-1].setdefault("observation", {"results": []})["results"].append(result)
        return
    source = "system" if message.role == "system" else "user"
    step = {"source": source, "message": text}
    step.update({key: value for key, value in fields.items() if key in _STEP_FIELDS})
    if source == "system" and fields.get("results"):
        step["message"] = text if isinstance(text, str) else _joined(message.content)  # type: ignore[arg-type]
    steps.append(step)


def _extra(extras: Mapping[str, Any], call_id: str) -> dict[str, Any]:
    extra = extras.get(call_id) if isinstance(extras, Mapping) else None
    return {"extra": extra} if extra else {}


def _add_result(
    steps: list[dict[str, Any]], callers: dict[str, dict[str, Any]], message: Message, fields: Mapping[str, Any]
) -> None:
    result: dict[str, Any] = {**(fields.get("result") or {}), "content": message.text}
    caller = callers.get(message.tool_call_id or "")
    if caller is not None:
        result["source_call_id"] = message.tool_call_id
    else:  # answers no call a kept step made: the previous agent step's result, the call id kept in its extra
        caller = next((step for step in reversed(steps) if step["source"] == "agent"), None)
        result["extra"] = {**(result.get("extra") or {}), "tool_call_id": message.tool_call_id}
        if caller is None:
            caller = {"source": "system", "message": ""}
            steps.append(caller)
    caller.setdefault("observation", {"results": []})["results"].append(result)


def _parts(content: Sequence[ContentBlock]) -> list[dict[str, Any]] | str:
    parts: list[dict[str, Any]] = []
    for block in content:
        if block.text is not None:
            parts.append({"type": "text", "text": block.text})
        elif block.type in ("image", "audio") and isinstance(block.data.get("source"), Mapping):
            parts.append({"type": block.type, "source": dict(block.data["source"])})
    if all(part["type"] == "text" for part in parts):
        return "\n".join(part["text"] for part in parts)
    return parts
