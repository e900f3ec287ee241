"""The same session gives the same requests in every process, whatever ``PYTHONHASHSEED`` the process drew.

Found on the fresh-clone CI: notebook 05's agent sent a largest request of 6,373 tokens in most processes and 6,371
in some (hash seeds 16 and 28 among 0-42). Supersession summed the rarity of the words two statements share over a
set, and a float sum depends on the order a set happens to hold its strings in; a tie between two candidates then
went one way or the other. The run here is that notebook's own agent session (its session cells and its agent cell),
in two processes with the seeds that showed it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "05_side_by_side.py"
RUN = """
import json, sys
source = open(sys.argv[1], encoding="utf-8").read()
session = source[: source.index("contenders = [")]  # the session and its helpers, before any contender runs
agent = source[source.index("from typing import Annotated") : source.rindex("summary_model = FakeListChatModel")]
namespace = {"__name__": "side_by_side"}
exec(compile(session + agent, sys.argv[1], "exec"), namespace)
requests = []
model_class = namespace["StrictFakeChatModel"]
original = model_class._generate
def recording(self, messages, *args, **kwargs):
    result = original(self, messages, *args, **kwargs)
    requests.append(self.requests[-1].tokens)
    return result
model_class._generate = recording
outcome = namespace["run_agent"](namespace["ContextBudgetMiddleware"](max_tokens=namespace["WINDOW"]))
print(json.dumps({"outcome": outcome, "requests": requests}))
"""


def _run(seed: int) -> dict[str, object]:
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(NOTEBOOK)], capture_output=True, text=True, env=env, check=False, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_an_agent_session_compacts_the_same_under_any_hash_seed() -> None:
    first, second = _run(0), _run(16)
    assert first["requests"], first
    assert first == second
