"""Hostile values in every parameter of every operation the schema lists: never a 5xx, always the JSON error.

schemathesis (tests/integration/api/test_schema.py) generates from the schema, valid and invalid; this
adds what attackers send: NULs and control characters, path traversal, URLs, over-long and non-ASCII
text, numbers where strings go and the reverse, with no token, a garbage token or a real one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import hypothesis
import pytest
from hypothesis import strategies as st

from app.server import create_app
from tests.integration.security.served import Served, served
from tests.integration.vetted import Vetted, vet_examples

OPENAPI = create_app().openapi()
OPERATIONS = [(method.upper(), path, op) for path, item in OPENAPI["paths"].items() for method, op in item.items()]
NASTY = ["\x00", "../../etc/passwd", "http://evil/x", "//evil/x", "%00", "%2e%2e%2f", "' OR 1=1 --", "\u202e",
         "a" * 5000, "\ud7ff\ue000", "-1", "1e309", "NaN", "[]", "{}", "null", "true", "\r\nX-Injected: 1", "€/€"]
hostile_text = st.one_of(st.sampled_from(NASTY), st.text(max_size=300),
                         st.text(st.characters(codec="utf-8"), max_size=40).map(lambda s: s + "\x00"))
json_leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
hostile_json = st.recursive(
    json_leaves | hostile_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_text, inner, max_size=4),
    max_leaves=12)


@pytest.fixture(scope="module")
def vetted(tmp_path_factory: pytest.TempPathFactory) -> Vetted:
    return vet_examples(tmp_path_factory.mktemp("hub"))


@pytest.fixture(scope="module")
def s(tmp_path_factory: pytest.TempPathFactory, vetted: Vetted) -> Iterator[Served]:
    with served(tmp_path_factory.mktemp("hostile"), vetted) as opened:
        yield opened


@pytest.mark.parametrize(("method", "path", "operation"), OPERATIONS, ids=[f"{m} {p}" for m, p, _ in OPERATIONS])
@hypothesis.settings(max_examples=60, deadline=None, database=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(data=st.data())
def test_no_hostile_value_makes_a_server_error(s: Served, method: str, path: str, operation: dict[str, Any],
                                               data: st.DataObject) -> None:
    url, params, headers = path, {}, {}
    for parameter in operation.get("parameters", []):
        value = data.draw(hostile_text, label=parameter["name"])
        if parameter["in"] == "path":
            url = url.replace("{" + parameter["name"] + "}", quote(value, safe=""))
        elif parameter["in"] == "query" and data.draw(st.booleans()):
            params[parameter["name"]] = value
        elif parameter["in"] == "header" and value.isascii() and value.isprintable():
            headers[parameter["name"]] = value
    who = data.draw(st.sampled_from([None, "garbage", "reader", "vetter", "reviewer", "admin"]))
    if who == "garbage":
        headers["Authorization"] = "Bearer " + data.draw(st.sampled_from(["hfv_x", "x" * 600, "%00", "é"]))[:600]
    elif who is not None:
        headers |= s.headers(who)
    body = data.draw(hostile_json) if "requestBody" in operation else None
    kwargs: dict[str, Any] = {"json": body} if body is not None else {}
    try:
        answer = s.client.request(method, url, params=params, headers=headers, **kwargs)
    except UnicodeEncodeError:
        hypothesis.reject()  # the HTTP client cannot send it: neither could anyone else
    assert answer.status_code < 500, (method, url, params, answer.text[:300])
    if answer.status_code >= 400:
        body = answer.json()
        assert set(body) == {"error"} or _is_gate_refusal(path, answer.status_code, body), body


def _is_gate_refusal(path: str, status: int, body: dict[str, Any]) -> bool:
    """The gate's refusals (403, 404 not-vetted, 409) are answers with reasons, not errors (docs/api.md)."""
    return (path == "/gate" and status in (403, 404, 409) and body.get("approved") is False
            and bool(body.get("reasons")) and bool(body.get("status")))


def test_an_unvetted_repo_is_a_gate_answer_not_an_error(s: Served) -> None:
    # hypothesis drew this once ('0/0', no revision): a well-formed id nobody vetted is the gate's 404 answer
    answer = s.client.get("/gate", params={"repo": "0/0"})
    assert answer.status_code == 404 and _is_gate_refusal("/gate", 404, answer.json()), answer.text
    assert answer.json()["status"] == "not-vetted"
