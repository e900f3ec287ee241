"""Request rules: sessionId, query, schema, requestDigest."""

from __future__ import annotations

import pytest
from ctxbudget.cognitive import ContextRequest, validate_request
from ctxbudget.errors import InvalidBinding, InvalidRequest

from .helpers import make_binding, make_request, tampered


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("", "query: must not be empty or blank"),
        ("   \n\t", "query: must not be empty or blank"),
        (" padded", "query: ' padded' must be trimmed"),
        ("bell\x07", "query: control character U+0007"),
        ("carriage\rreturn", "query: control character U+000D"),
        ("c1\x85control", "query: control character U+0085"),
        ("x" * 4097, "query: is 4,097 bytes, the limit is 4,096"),
        ("é" * 2049, "query: is 4,098 bytes"),
        ("lone \ud800 surrogate", "query: is not valid UTF-8"),
    ],
)
def test_query_rules(query: str, fragment: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        ContextRequest.create("s-1", query, make_binding())
    assert fragment in str(caught.value)


@pytest.mark.parametrize("query", ["line one\nline two\tcolumn", "x" * 4096, "é" * 2048, "?"])
def test_queries_within_the_rules_are_accepted(query: str) -> None:
    assert ContextRequest.create("s-1", query, make_binding()).query == query


@pytest.mark.parametrize(
    ("session_id", "fragment"),
    [
        ("", "sessionId: must not be empty"),
        ("_private", "sessionId: '_private' must start with a letter or digit"),
        ("has space", "sessionId"),
        ("séance", "sessionId: 'séance' must be ASCII"),
        ("s" * 257, "sessionId: is 257 bytes"),
    ],
)
def test_session_id_follows_the_surface_id_rule(session_id: str, fragment: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        ContextRequest.create(session_id, "q", make_binding())
    assert fragment in str(caught.value)


def test_session_id_accepts_the_surface_alphabet() -> None:
    assert ContextRequest.create("S1-a.b_c:d/e@f", "q", make_binding()).session_id == "S1-a.b_c:d/e@f"


@pytest.mark.parametrize(
    ("path", "value", "error", "fragment"),
    [
        (("schema",), "a3s.code.cognitive-context-request.v2", InvalidRequest, "request.schema"),
        (("query",), "another question", InvalidRequest, "request.requestDigest"),
        (("sessionId",), "session-2", InvalidRequest, "request.requestDigest"),
        (("requestDigest",), "sha256:" + "0" * 64, InvalidRequest, "request.requestDigest"),
        (("requestDigest",), "sha256:xyz", InvalidRequest, "request.requestDigest"),
        (("binding", "limits", "maxResults"), 3, InvalidRequest, "request.requestDigest"),
        (("binding", "packageId"), "NOPE", InvalidBinding, "packageId"),
    ],
)
def test_wire_request_rules(path: tuple[str, ...], value: object, error: type[Exception], fragment: str) -> None:
    data = tampered(make_request().to_dict(), path, value)
    with pytest.raises(error) as caught:
        ContextRequest.from_dict(data)
    assert fragment in str(caught.value)


def test_validate_request_rechecks_an_unvalidated_copy() -> None:
    forged = make_request().model_copy(update={"query": "something else"})
    with pytest.raises(InvalidRequest, match="requestDigest"):
        validate_request(forged)
