"""A deterministic fake LLM that answers ctxbudget's summary prompt by copying structure from the prompt.

It reads the section names and the token budget from the system prompt, and the goal, previous summary and
escaped ``<transcript>`` from the user message, then writes one bullet per transcript message under those
sections, merged with the previous summary's bullets, dropping the oldest bullets until the budget holds. It makes
no judgement about what matters: its row shows what the prompt's structure carries through compaction, not how a
real model would summarize.
"""

from __future__ import annotations

import re
from html import unescape
from typing import Any

from ctxbudget import TiktokenCounter
from ctxbudget.compaction import SUMMARY_SECTIONS
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

_SECTION = re.compile(r"## ([A-Z][^,:\n.]*)")
_BUDGET = re.compile(r"under ([\d,]+) tokens")
_MESSAGE = re.compile(r"<message ([^>]*)>(.*?)</message>", re.DOTALL)
_CALL = re.compile(r'<tool_call id="[^"]*" name="([^"]*)">(.*?)</tool_call>', re.DOTALL)
_ERROR = re.compile(r"\b(error|exception|traceback|failed|fatal)\b", re.IGNORECASE)
_COUNTER = TiktokenCounter()


def _tag(text: str, name: str) -> str | None:
    match = re.search(rf"<{name}>(.*?)</{name}>", text, re.DOTALL)
    return unescape(match.group(1)) if match else None


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


ROUTES = {
    "goal": ("goal",),
    "latest": ("latest",),
    "user": ("user", "fact", "constraint"),
    "assistant": ("decision", "fact"),
    "calls": ("command", "file", "artifact"),
    "errors": ("error",),
}
"""Which section each kind of bullet goes to: the first section whose name contains one of the words."""


def _sections(system: str) -> list[str]:
    found = list(dict.fromkeys(name.strip() for name in _SECTION.findall(system)))
    return found or list(SUMMARY_SECTIONS)


def _route(names: list[str], kind: str) -> str | None:
    """The section for ``kind`` of bullet (``None``: the prompt has no such section), else the first free one."""
    for word in ROUTES[kind]:
        for name in names:
            if word in name.lower():
                return name
    if kind in ("goal", "latest"):
        return None
    return next((n for n in names if _route(names, "goal") != n and _route(names, "latest") != n), names[0])


def _parse_previous(previous: str | None, names: list[str]) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {name: [] for name in names}
    current = _route(names, "user") or names[0]
    for line in (previous or "").splitlines():
        heading = line.removeprefix("## ").strip()
        if line.startswith("## ") and heading in sections:
            current = heading
        elif line.strip().startswith("- ") and line.strip() != "- (none)":
            sections[current].append(line.strip()[2:])
    return sections


def _new_bullets(transcript: str) -> dict[str, list[str]]:
    """Bullets by role: user messages whole (clipped), assistant first sentences, tool calls, error lines."""
    out: dict[str, list[str]] = {"user": [], "assistant": [], "calls": [], "errors": []}
    for attrs, raw in _MESSAGE.findall(transcript):
        calls = _CALL.findall(raw)
        body = unescape(_CALL.sub("", raw)).strip()
        role = re.search(r'role="(\w+)"', attrs)
        kind = role.group(1) if role else "user"
        if kind == "user" and body:
            out["user"].append(_clip(body, 300))
        elif kind == "assistant" and body:
            out["assistant"].append(_clip(re.split(r"(?<=[.!?])\s", body, maxsplit=1)[0], 200))
        elif kind == "tool":
            out["errors"] += [_clip(line, 160) for line in body.splitlines() if _ERROR.search(line)][:2]
        out["calls"] += [f"{name}({_clip(unescape(args), 140)})" for name, args in calls]
    return out


def fake_summary(system: str, user: str) -> str:
    """The summary text for one summary prompt (system + user message)."""
    names = _sections(system)
    budget = int(_BUDGET.search(system).group(1).replace(",", "")) if _BUDGET.search(system) else 2000
    sections = _parse_previous(_tag(user, "previous_summary"), names)
    new = _new_bullets(_tag(user, "transcript") or "")
    goal, latest = _route(names, "goal"), _route(names, "latest")
    if goal and _tag(user, "user_goal"):
        sections[goal] = [_clip(_tag(user, "user_goal") or "", 600)]
    if latest and new["user"]:
        sections[latest] = new["user"][-1:]
    for kind in ("user", "assistant", "calls", "errors"):
        sections[_route(names, kind) or names[0]] += new[kind]
    fixed = {n for n in (goal, latest) if n}
    return _fit(sections, names, budget, [n for n in names if n not in fixed])


def _render(sections: dict[str, list[str]], names: list[str]) -> str:
    return "\n\n".join(f"## {n}\n" + "\n".join(f"- {b}" for b in sections[n] or ["(none)"]) for n in names)


def _fit(sections: dict[str, list[str]], names: list[str], budget: int, trimmable: list[str]) -> str:
    text = _render(sections, names)
    while _COUNTER.count_text(text) > budget and any(sections[n] for n in trimmable):
        longest = max(trimmable, key=lambda n: len(sections[n]))
        drop = max(1, len(sections[longest]) // 8)
        del sections[longest][:drop]  # the oldest bullets go first
        text = _render(sections, names)
    return text


class FakeSummaryLLM(BaseChatModel):
    """A LangChain chat model whose every answer is :func:`fake_summary` of the prompt it was given."""

    @property
    def _llm_type(self) -> str:
        return "fake-summary-llm"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **_: Any) -> ChatResult:
        system = "\n".join(m.text for m in messages if m.type == "system")
        user = "\n".join(m.text for m in messages if m.type != "system")
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=fake_summary(system, user)))])
