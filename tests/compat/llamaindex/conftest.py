"""Compatibility suite: LlamaIndex's own test cases, each run on the framework class and on ours.

Every case is a faithful port of an upstream case of llama-index-core (the installed 0.14.x; sources named in each
module's docstring): same inputs, same assertions. ``impl`` is ``"framework"`` or ``"ctxbudget"``. A case may differ
on ours only where ctxbudget's budget semantics differ on purpose, or where it raises past the hard stop instead of
sending an over-window request; such a case is ``xfail(strict=True)`` on ours with a one-line reason. A case that
fails on the installed framework class itself is ``xfail(strict=True)`` there, with the upstream reason.
"""

from __future__ import annotations

from typing import Any

import pytest

FRAMEWORK, OURS = "framework", "ctxbudget"
BOTH = [FRAMEWORK, OURS]


def ours_differs(reason: str) -> list[Any]:
    """``impl`` values for a case whose assertion ctxbudget does not meet on purpose (``reason``: one line)."""
    return [FRAMEWORK, pytest.param(OURS, marks=pytest.mark.xfail(strict=True, reason=f"deliberate: {reason}"))]


def framework_fails(reason: str, *, ours: str | None = None) -> list[Any]:
    """``impl`` values for an upstream case that fails on the installed framework class itself."""
    framework = pytest.param(FRAMEWORK, marks=pytest.mark.xfail(strict=True, reason=f"upstream: {reason}"))
    if ours is None:
        return [framework, OURS]
    return [framework, pytest.param(OURS, marks=pytest.mark.xfail(strict=True, reason=f"deliberate: {ours}"))]


def installed_fails(reason: str) -> list[Any]:
    """``impl`` values for an upstream case newer than the installed engine: it fails on both, for that reason."""
    mark = pytest.mark.xfail(strict=True, reason=f"upstream, not in the installed llama-index-core: {reason}")
    return [pytest.param(FRAMEWORK, marks=mark), pytest.param(OURS, marks=mark)]
