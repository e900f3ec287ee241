"""What both fake servers share: the loopback HTTP server, its statistics, and scripted replies."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from typing_extensions import Self

from ..messages.message import Message, ToolCall, ToolSchema

__all__ = ["FakeServer", "FakeServerStats", "Script", "ScriptCall", "prefix_digest", "tool_loop_script"]


@dataclass(frozen=True)
class ScriptCall:
    """What a script sees: the request number and the request as ctxbudget messages and tools."""

    turn: int
    messages: list[Message]
    tools: list[ToolSchema]


Script = Callable[[ScriptCall], Message]
"""Returns the assistant reply (text, or tool calls) for one accepted request."""


def tool_loop_script(*, parallel_every: int = 3, id_prefix: str = "call") -> Script:
    """A scripted agent: calls tools after a user message, answers in text after tool results.

    Every ``parallel_every`` turns it makes two calls at once; arguments fill each property with ``<name>-<turn>``.
    """

    def reply(call: ScriptCall) -> Message:
        last = call.messages[-1] if call.messages else None
        if last is None or last.role == "tool" or not call.tools:
            return Message(role="assistant", content=f"Done with step {call.turn}.")
        count = 2 if parallel_every and call.turn % parallel_every == 0 else 1
        tools = [call.tools[(call.turn + k) % len(call.tools)] for k in range(count)]
        calls = tuple(
            ToolCall(id=f"{id_prefix}_{call.turn}_{k}", name=tool.name, args=_arguments(tool, call.turn))
            for k, tool in enumerate(tools)
        )
        return Message(role="assistant", tool_calls=calls)

    return reply


def _arguments(tool: ToolSchema, turn: int) -> dict[str, Any]:
    properties = tool.parameters.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    return {name: f"{name}-{turn}" for name, spec in properties.items() if isinstance(spec, Mapping)}


@dataclass
class FakeServerStats:
    """What a fake server saw."""

    requests: int = 0
    accepted: int = 0
    orphaned: int = 0
    """Requests refused for a tool call without its result, or a result without its call."""
    over_window: int = 0
    """Requests refused for a prompt over the window."""
    malformed: int = 0
    """Requests refused for anything else."""
    cached_tokens: int = 0
    """Prompt tokens reported as read from the cache, over all accepted requests."""
    max_prompt_tokens: int = 0
    errors: list[str] = field(default_factory=list)
    """Every error message sent, in order."""


class FakeServer:
    """The loopback HTTP server both fakes share; subclasses answer :meth:`handle`.

    Args:
        max_tokens: the window: a prompt over it is refused.
        script: the replies (default :func:`tool_loop_script`).
    """

    def __init__(self, *, max_tokens: int, script: Script | None = None) -> None:
        self.max_tokens = max_tokens
        self.script = script or tool_loop_script()
        self.stats = FakeServerStats()
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL to give the SDK client."""
        if self._httpd is None:
            raise RuntimeError("the fake server is not running: use it as a context manager or call start()")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> Self:
        """Listen on a free loopback port, in a daemon thread."""
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and wait (at most 5 s) for the thread."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd, self._thread = None, None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def handle(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Answer one POST: ``(status, JSON body)``."""
        raise NotImplementedError

    def _refuse(self, kind: str, message: str) -> str:
        with self._lock:
            self.stats.requests += 1
            setattr(self.stats, kind, getattr(self.stats, kind) + 1)
            self.stats.errors.append(message)
        return message

    def _accept(self, prompt: int, cached: int) -> int:
        with self._lock:
            self.stats.requests += 1
            self.stats.accepted += 1
            self.stats.cached_tokens += cached
            self.stats.max_prompt_tokens = max(self.stats.max_prompt_tokens, prompt)
            return self.stats.accepted

    def _reply(self, turn: int, messages: list[Message], tools: list[ToolSchema]) -> Message:
        return self.script(ScriptCall(turn=turn, messages=messages, tools=tools))


def _handler(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw)
                status, payload = server.handle(self.path.split("?", 1)[0], body)
            except Exception as exc:  # a fake must answer, never hang the client: report the bug as a 500
                status, payload = 500, {"error": {"message": f"fake server error: {exc!r}", "type": "server_error"}}
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


def prefix_digest(previous: str, segment: object) -> str:
    text = json.dumps(segment, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(f"{previous}|{text}".encode(), digest_size=16).hexdigest()
