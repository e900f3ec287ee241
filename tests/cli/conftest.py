"""Transcript fixtures in every supported format, written to tmp_path, plus the strict expectations they share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

# One short tool-using conversation; each format below encodes exactly these messages.
EXPECTED = [
    ("system", "You are a careful agent.", (), None),
    ("user", "What's the weather in Paris?", (), None),
    ("assistant", "", (("c1", "weather", {"city": "Paris"}),), None),
    ("tool", "18C and sunny", (), "c1"),
    ("assistant", "It is 18C and sunny in Paris.", (), None),
]


def openai_messages() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are a careful agent."},
        {"role": "user", "content": [{"type": "text", "text": "What's the weather in Paris?"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "18C and sunny"},
        {"role": "assistant", "content": "It is 18C and sunny in Paris."},
    ]


def langchain_dicts() -> list[dict[str, Any]]:
    def data(kind: str, content: str, **extra: Any) -> dict[str, Any]:
        base = {"content": content, "additional_kwargs": {}, "response_metadata": {}, "type": kind, "name": None}
        return {"type": kind, "data": {**base, "id": None, **extra}}

    return [
        data("system", "You are a careful agent."),
        data("human", "What's the weather in Paris?", example=False),
        data(
            "ai",
            "",
            tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "c1", "type": "tool_call"}],
            invalid_tool_calls=[],
            usage_metadata=None,
        ),
        data("tool", "18C and sunny", tool_call_id="c1", artifact=None, status="success"),
        data("ai", "It is 18C and sunny in Paris.", tool_calls=[], invalid_tool_calls=[]),
    ]


def langchain_dumpd() -> list[dict[str, Any]]:
    def lc(cls: str, **kwargs: Any) -> dict[str, Any]:
        return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls], "kwargs": kwargs}

    return [
        lc("SystemMessage", content="You are a careful agent.", type="system"),
        lc("HumanMessage", content="What's the weather in Paris?", type="human"),
        lc(
            "AIMessage",
            content="",
            type="ai",
            tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "c1", "type": "tool_call"}],
            invalid_tool_calls=[],
        ),
        lc("ToolMessage", content="18C and sunny", type="tool", tool_call_id="c1", status="success"),
        lc("AIMessage", content=[{"type": "text", "text": "It is 18C and sunny in Paris."}], type="ai"),
    ]


def llamaindex_store() -> dict[str, Any]:
    def text(role: str, value: str, **extra: Any) -> dict[str, Any]:
        return {"role": role, "additional_kwargs": extra, "blocks": [{"block_type": "text", "text": value}]}

    conversation = [
        text("system", "You are a careful agent."),
        text("user", "What's the weather in Paris?"),
        {
            "role": "assistant",
            "additional_kwargs": {},
            "blocks": [
                {
                    "block_type": "tool_call",
                    "tool_call_id": "c1",
                    "tool_name": "weather",
                    "tool_kwargs": {"city": "Paris"},
                }
            ],
        },
        text("tool", "18C and sunny", tool_call_id="c1"),
        text("assistant", "It is 18C and sunny in Paris."),
    ]
    other = [text("user", "a different conversation")]
    return {"store": {"alice": conversation, "bob": other}, "class_name": "SimpleChatStore"}


def write(path: Path, payload: Any) -> Path:
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def transcripts(tmp_path: Path) -> dict[str, Path]:
    """One file per format, all encoding :data:`EXPECTED`."""
    return {
        "openai-list": write(tmp_path / "openai-list.json", openai_messages()),
        "openai-object": write(tmp_path / "openai-object.json", {"messages": openai_messages()}),
        "jsonl": write_jsonl(tmp_path / "chat.jsonl", openai_messages()),
        "jsonl-langchain": write_jsonl(tmp_path / "lc.jsonl", langchain_dicts()),
        "langchain": write(tmp_path / "langchain.json", langchain_dicts()),
        "langchain-dumpd": write(tmp_path / "dumpd.json", langchain_dumpd()),
        "llamaindex": write(tmp_path / "store.json", llamaindex_store()),
    }


def long_session(turns: int = 40) -> list[dict[str, Any]]:
    """A long OpenAI-format agent session (about 4,000 tokens a turn), for compaction tests."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful coding agent."}]
    for turn in range(turns):
        call = f"call_{turn}"
        messages += [
            {"role": "user", "content": f"Turn {turn}: read module {turn} and tell me what it does."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": call, "type": "function", "function": {"name": "read_file", "arguments": '{"path": "m.py"}'}}
                ],
            },
            {"role": "tool", "tool_call_id": call, "content": f"def f{turn}(x):\n    return x * {turn}\n" * 150},
            {"role": "assistant", "content": f"Module {turn} multiplies by {turn}. Next I will check the tests."},
        ]
    return messages


def one_error_line(capsys: pytest.CaptureFixture[str], *expected: str) -> str:
    """The CLI's error, checked to be one ``ctxbudget: error:`` line on stderr holding each of ``expected``."""
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert err.startswith("ctxbudget: error: ")
    assert len(err.splitlines()) == 1
    for part in expected:
        assert part in err
    return err
