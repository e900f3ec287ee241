"""A newest turn whose images cannot fit is never summarized away: no summary stands for an image.

Fourth hostile-input review: a user turn of ten screenshots in an 8,000-token window became a request holding only a
summary ("Goal: compare these screenshots"), no image and no turn to answer, and no error. A text turn of that size
stays in view as its head and tail; an image turn that no tier can shrink is reported as the hard stop instead.
"""

from __future__ import annotations

import pytest
from ctxbudget import ContextOverflowError, ContextSession


def _screenshots(count: int) -> dict[str, object]:
    images = [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,iVBORw0KGgo{i}"}} for i in range(count)
    ]
    return {"role": "user", "content": [{"type": "text", "text": "compare these screenshots"}, *images]}


def _images_sent(session: ContextSession) -> int:
    sent = session.build_request().to_openai()["messages"]
    return sum(
        1 for m in sent if isinstance(m["content"], list) for part in m["content"] if part["type"] == "image_url"
    )


def test_images_that_fit_are_sent() -> None:
    session = ContextSession(model="gpt-4o", max_tokens=8_000)
    session.add_openai(_screenshots(5))
    assert _images_sent(session) == 5


@pytest.mark.parametrize("earlier_turns", [0, 5])
def test_an_image_turn_over_the_hard_stop_is_the_hard_stop_not_a_summary(earlier_turns: int) -> None:
    session = ContextSession(model="gpt-4o", max_tokens=8_000)
    for n in range(earlier_turns):
        session.add_user(f"question {n}")
        session.add_assistant(f"answer {n}")
    session.add_openai(_screenshots(10))
    with pytest.raises(ContextOverflowError) as raised:
        session.build_request()
    assert raised.value.used_tokens > raised.value.hard_stop_tokens
    newest = session.history[-1]
    assert not isinstance(newest.content, str)
    assert sum(block.type == "image_url" for block in newest.content) == 10  # still the turn, whole, in the history


def test_a_text_turn_over_the_hard_stop_still_builds_a_request() -> None:
    session = ContextSession(model="gpt-4o", max_tokens=8_000)
    session.add_user("compare these logs:\n" + "ERROR worker 7 timed out after 30 s\n" * 2_000)
    request = session.build_request()
    assert request.tokens <= session.max_tokens
    assert request.messages[-1].role == "user"  # the turn, as its head and tail
