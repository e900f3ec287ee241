"""A natural coding session, written for the search evaluation: facts said in passing, corrections, failures.

Nothing in it is marked for the ledger ("FACT:", "Decision:"): the user states things as people do, tools return
what real tools return (a JSON error body, a config file, a pytest failure, HTTP 403 and 429, a traceback, a long
deploy log), and some values are later corrected. It is the kind of session issue #24 describes. The turns are
interleaved with the ``coding`` workload's turns (``natural_workload``) so that the archive also holds a few hundred
unrelated messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from ctxbudget import Message, ToolCall

from ..quality.workloads import build_workload

SYSTEM = "You are a senior engineer pairing with the user on the billing service. Use the tools; be concise."

_DEPLOY_LOG = "\n".join(
    [
        *(
            f"2024-03-05T14:{i // 60:02d}:{i % 60:02d}Z INFO rollout billing-7f9c step {i}: pods ready {i % 7}/6, "
            f"p95 {180 + (i * 37) % 90} ms"
            for i in range(180)
        ),
        "2024-03-05T14:03:00Z WARN rollout billing-7f9c: healthcheck /healthz returning 503 on pod billing-7f9c-2xk4p",
        "2024-03-05T14:03:05Z ERROR rollout billing-7f9c: rollback triggered (3 consecutive failed probes)",
        *(f"2024-03-05T14:04:{i:02d}Z INFO rollback billing-7f9c step {i}: restoring replica set" for i in range(60)),
        "2024-03-05T14:05:00Z INFO rollback complete: billing-6d21 serving 100% of traffic",
    ]
)
_TRACEBACK = """Traceback (most recent call last):
  File "/srv/billing/billing/reconcile.py", line 301, in main
    report = reconcile(day)
  File "/srv/billing/billing/reconcile.py", line 244, in reconcile
    matched = match_payouts(payouts, ledger_rows)
  File "/srv/billing/billing/reconcile.py", line 218, in match_payouts
    currency = row["settlement_currency"]
KeyError: 'settlement_currency'
exit code 1"""
_STAGING_ENV = """# config/staging.env (read-only copy from the ops repo)
DB_HOST=db-stg-4.internal
DB_PORT=5433
DB_NAME=billing_staging
PROD_DSN=postgres://billing@db-prod-1.internal:5432/billing
INVOICE_BATCH=500
REFUND_RETRY_LIMIT=3
PAYMENTS_API=https://payments-sandbox.internal/v1
LOG_LEVEL=info"""
_GIT_LOG = """a91f3c2 Refund: round currency amounts half-even before the processor call (#812)
77b0d14 Invoices: move the batch size to INVOICE_BATCH
5e2c9aa Payouts: page the payouts API with limit=100
c03d8e1 Migrations: 0042 backfills refund_status for legacy rows"""


def _turns() -> list[list[Message]]:
    """The session's turns, each a user message or an assistant call with its result."""
    turns: list[list[Message]] = []
    n = 0

    def user(text: str) -> None:
        turns.append([Message(role="user", content=text, id=f"nat-u{len(turns):02d}")])

    def tool(narration: str, name: str, args: dict[str, object], result: str) -> None:
        nonlocal n
        n += 1
        call = ToolCall(id=f"nat_call_{n:02d}", name=name, args=args)
        asked = Message(role="assistant", content=narration, tool_calls=(call,), id=f"nat-a{len(turns):02d}")
        answered = Message(role="tool", content=result, tool_call_id=call.id, name=name, id=f"nat-t{len(turns):02d}")
        turns.append([asked, answered])

    user(
        "We're picking up the billing refund bug today. Marta from finance signs off on anything that touches "
        "refunds, so keep her in the loop before we merge."
    )
    tool(
        "Let me reproduce the failed refund first.",
        "run_command",
        {"command": "python scripts/refund.py --order ORD-88412"},
        json.dumps(
            {
                "status": "error",
                "code": "PAYMENT_METHOD_INACTIVE",
                "message": "card ending 4242 was deactivated on 2024-03-02",
                "order_id": "ORD-88412",
            }
        ),
    )
    tool("Checking the staging config.", "read_file", {"path": "config/staging.env"}, _STAGING_ENV)
    user("The staging db lives at db-stg-4.internal:5433, you can use it for the repro.")
    tool(
        "Running the refund-status migration test.",
        "run_command",
        {"command": "pytest tests/migrations/test_0042_refund_status.py -q"},
        "....F\n=================================== FAILURES ===================================\n"
        "_________________________________ test_backfill _________________________________\n"
        "    assert migrated == expected\n"
        "E   AssertionError: expected 1204 rows, got 1198\n"
        "FAILED tests/migrations/test_0042_refund_status.py::test_backfill - AssertionError\n"
        "1 failed, 4 passed in 3.21s",
    )
    user("Actually use port 5434 for staging, 5433 is the old replica that lags behind.")
    tool(
        "Trying the processor's refunds endpoint directly.",
        "http_get",
        {"url": "https://payments-sandbox.internal/v1/refunds/re_3KX9"},
        'HTTP/1.1 403 Forbidden\ncontent-type: application/json\n\n{"error": {"type": "permission_error", '
        '"message": "API key sk_test_...9fQ lacks refunds:write"}}',
    )
    user(
        "The invoice job is timing out on the table lock. I think lowering it to INVOICE_BATCH=200 should keep us "
        "under the lock timeout."
    )
    tool(
        "Fetching the payouts to cross-check the refund.",
        "http_get",
        {"url": "https://payments-sandbox.internal/v1/payouts?limit=100"},
        'HTTP/1.1 429 Too Many Requests\nRetry-After: 37\n\n{"error": {"type": "rate_limit_error"}}',
    )
    tool(
        "Running yesterday's reconciliation to see whether the refund shows up.",
        "run_command",
        {"command": "python -m billing.reconcile --date 2024-03-04"},
        _TRACEBACK,
    )
    user("The feature flag for the new refund flow is refunds_v2_enabled; keep it off in prod until Marta agrees.")
    tool("Looking at what the last deploy did.", "read_file", {"path": "logs/deploy-2024-03-05.log"}, _DEPLOY_LOG)
    user(
        "For cards that were deactivated, don't fail the refund: we agreed to issue it as store credit instead, "
        "and email the customer."
    )
    tool("Checking recent history of the refund code.", "run_command", {"command": "git log --oneline -4"}, _GIT_LOG)
    user("Please keep the PR small; the release branch is cut on Thursday at 16:00 Lisbon time.")
    return turns


NATURAL_QUESTIONS: tuple[tuple[str, str], ...] = (
    ("why did the refund fail", "PAYMENT_METHOD_INACTIVE"),
    ("which port does the staging db use", "5434"),
    ("what did the migration test print", "expected 1204 rows, got 1198"),
    ("who has to sign off on changes to refunds", "Marta from finance"),
    ("what batch size did we settle on for the invoice job", "INVOICE_BATCH=200"),
    ("why was the refunds API call forbidden", "lacks refunds:write"),
    ("how long did the payouts API say to wait before retrying", "Retry-After: 37"),
    ("what exception did the reconcile job raise", "KeyError: 'settlement_currency'"),
    ("which line of reconcile.py crashed", "line 218, in match_payouts"),
    ("what is the feature flag for the new refund flow", "refunds_v2_enabled"),
    ("why was the deploy rolled back", "healthcheck /healthz returning 503"),
    ("what do we do with refunds to deactivated cards", "store credit"),
    ("which commit changed the refund rounding", "a91f3c2"),
    ("when is the release branch cut", "Thursday at 16:00"),
    ("which card was deactivated", "card ending 4242"),
    ("what host is the production database on", "db-prod-1.internal:5432"),
)
"""(question, exact answer) over the natural session; each answer occurs in one of its messages."""


def natural_calls(seed: int = 0) -> Iterator[tuple[Message, ...]]:
    """The natural session's turns spread among the quick ``coding`` workload's model calls."""
    coding = build_workload("coding", seed=seed, quick=True).calls
    turns = _turns()
    every = max(1, len(coding) // (len(turns) + 1))
    for i, batch in enumerate(coding):
        yield batch
        if i % every == every - 1 and turns:
            yield tuple(turns.pop(0))
    for turn in turns:
        yield tuple(turn)
