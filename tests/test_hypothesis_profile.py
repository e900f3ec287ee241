"""No property test can fail because the machine is busy: the ``ci`` profile, and no test undoing it.

A ``settings(...)`` in a test inherits every field it does not set from the profile loaded in ``tests/conftest.py``,
but a field it does set replaces the profile's: ``suppress_health_check=[HealthCheck.too_slow]`` turns
``data_too_large`` back on, ``deadline=timedelta(...)`` brings back a wall-clock limit. So every ``settings(...)``
call under ``tests/`` is read here (by its syntax tree, which also finds settings built inside a test function)
and may restate the profile but never loosen it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TESTS = Path(__file__).resolve().parent
HEAVY_INPUT_HEALTH_CHECKS = (HealthCheck.too_slow, HealthCheck.data_too_large)
HEAVY = {check.name for check in HEAVY_INPUT_HEALTH_CHECKS}
MODULE_SETTINGS = settings(max_examples=7)  # built at import, as the suite's module-level settings are


def _settings_calls(tree: ast.AST) -> list[ast.Call]:
    def is_settings(func: ast.expr) -> bool:
        return (isinstance(func, ast.Name) and func.id == "settings") or (
            isinstance(func, ast.Attribute) and func.attr == "settings"
        )

    return [node for node in ast.walk(tree) if isinstance(node, ast.Call) and is_settings(node.func)]


def _problems(call: ast.Call) -> list[str]:
    problems = []
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg == "deadline" and not (isinstance(value, ast.Constant) and value.value is None):
            problems.append(f"sets a deadline ({ast.unparse(value)}): timings live in benchmarks/")
        elif keyword.arg == "suppress_health_check":
            named = {e.attr for e in getattr(value, "elts", ()) if isinstance(e, ast.Attribute)}
            if not named >= HEAVY:
                problems.append(
                    f"suppress_health_check={ast.unparse(value)} replaces the profile's list and turns "
                    f"{sorted(HEAVY - named)} back on: drop the argument or list {sorted(HEAVY)} too"
                )
        elif keyword.arg in {"derandomize", "database"}:
            problems.append(f"sets {keyword.arg}: the profile fixes the examples every run draws")
        elif keyword.arg is None:
            problems.append(f"passes **{ast.unparse(value)}: its fields cannot be checked")
    return problems


def _findings(source: str, name: str) -> list[str]:
    tree = ast.parse(source, filename=name)
    return [f"{name}:{call.lineno}: {problem}" for call in _settings_calls(tree) for problem in _problems(call)]


def test_no_test_sets_a_deadline_or_turns_a_timing_health_check_back_on() -> None:
    findings = [
        finding
        for path in sorted(TESTS.rglob("*.py"))
        for finding in _findings(path.read_text(encoding="utf-8"), str(path.relative_to(TESTS.parent)))
    ]
    assert not findings, "\n".join(findings)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("@settings(max_examples=5, deadline=None)\ndef t(): ...", []),
        ("S = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])", []),
        ("def t():\n    @settings(deadline=timedelta(seconds=5))\n    def inner(): ...", ["sets a deadline"]),
        ("@hypothesis.settings(deadline=200)\ndef t(): ...", ["sets a deadline (200)"]),
        ("@settings(suppress_health_check=[HealthCheck.too_slow])\ndef t(): ...", ["turns ['data_too_large'] back"]),
        ("@settings(suppress_health_check=list(HealthCheck))\ndef t(): ...", ["back on"]),
        ("@settings(derandomize=False)\ndef t(): ...", ["sets derandomize"]),
        ("@settings(**OPTIONS)\ndef t(): ...", ["cannot be checked"]),
    ],
    ids=["restated", "both-checks", "inner-deadline", "attribute", "one-check", "not-a-list", "random", "splat"],
)
def test_the_check_reads_every_way_a_test_sets_them(source: str, expected: list[str]) -> None:
    findings = _findings(source, "t.py")
    assert len(findings) == len(expected), findings
    for finding, fragment in zip(findings, expected, strict=True):
        assert fragment in finding


def test_the_ci_profile_is_loaded_and_inherited(request: pytest.FixtureRequest) -> None:
    ci = settings.get_profile("ci")
    assert ci.deadline is None
    assert set(HEAVY_INPUT_HEALTH_CHECKS) <= set(ci.suppress_health_check)
    assert ci.derandomize
    assert ci.database is None
    chosen = request.config.getoption("hypothesis_profile", None)
    if chosen not in (None, "ci"):
        pytest.skip(f"--hypothesis-profile={chosen} replaces the ci profile for this run")
    for current in (settings.default, MODULE_SETTINGS):
        assert current.deadline is None
        assert current.derandomize
        assert HealthCheck.too_slow in current.suppress_health_check
    assert MODULE_SETTINGS.max_examples == 7


draws: list[int] = []


@settings(max_examples=20)
@given(st.integers())
def _draw(value: int) -> None:
    draws.append(value)


def test_every_run_draws_the_same_examples(request: pytest.FixtureRequest) -> None:
    if request.config.getoption("hypothesis_profile", None) not in (None, "ci"):
        pytest.skip("another profile draws afresh on purpose")
    runs = []
    for _ in range(2):
        draws.clear()
        _draw()
        runs.append(list(draws))
    assert runs[0] == runs[1]
    assert len(set(runs[0])) > 1
