"""Ids the model may be sent take as many tokens every time.

A handle names a message by its id (``ctx://archive/<id>.cleared``) and sits in the text sent: a cleared output's
marker, a bounded output's excerpt. Hex ids took 20 to 35 tokens, so where a compaction cut moved from one run of the
same session to the next, and tests that compared two runs failed now and then.
"""

from __future__ import annotations

import pytest
from ctxbudget.archive import HANDLE_PREFIX
from ctxbudget.messages import Message
from ctxbudget.messages.encodings import get_encoding
from ctxbudget.messages.message import new_message_id


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_every_new_message_id_and_its_handle_take_as_many_tokens(encoding: str) -> None:
    codec = get_encoding(encoding)
    ids = [new_message_id() for _ in range(500)] + [Message(role="user", content="x").id for _ in range(500)]
    assert len(set(ids)) == len(ids)
    assert len({len(codec.encode_ordinary(f"{HANDLE_PREFIX}{i}.cleared")) for i in ids}) == 1
