"""The OpenAPI schema says what the API answers: every error with its body, and the patterns of ids."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.api import validation
from app.api.errors import ApiError
from app.core.ids import ORG_PATTERN, REPO_PATTERN, REVISION_PATTERN
from app.server import create_app

SCHEMA = create_app().openapi()
OPERATIONS = [(method, path, op) for path, ops in SCHEMA["paths"].items() for method, op in ops.items()]
ERROR = {"$ref": "#/components/schemas/ErrorOut"}
# a sent token must be valid
READS = {"/gate", "/repos", "/repos/{org}/{name}", "/vet/{job_id}", "/policy", "/bom/{org}/{name}/{commit}"}


def error_schema(op: dict[str, Any], status: int) -> dict[str, Any]:
    schema: dict[str, Any] = op["responses"][str(status)]["content"]["application/json"]["schema"]
    return schema


@pytest.mark.parametrize(("method", "path", "op"), OPERATIONS, ids=[f"{m} {p}" for m, p, _ in OPERATIONS])
def test_every_operation_documents_the_edges_answers_with_the_error_body(method: str, path: str,
                                                                          op: dict[str, Any]) -> None:
    for status in (400, 413, 431, *((429,) if method == "post" else ())):
        assert error_schema(op, status) == ERROR, status
    if "422" in op["responses"]:  # FastAPI's `{"detail": [...]}` is never sent
        assert error_schema(op, 422) == ERROR
    if path in READS or method == "post":
        assert error_schema(op, 401) == ERROR


def test_the_error_body_is_the_one_the_api_sends() -> None:
    components = SCHEMA["components"]["schemas"]
    assert "HTTPValidationError" not in components
    assert components["ErrorOut"]["required"] == ["error"]
    assert set(components["ErrorDetail"]["required"]) == {"code", "message"}


@pytest.mark.parametrize(("method", "path", "status"), [
    ("post", "/vet", 404), ("post", "/vet", 403), ("post", "/vet", 502), ("post", "/vet", 503),
    ("get", "/vet/{job_id}", 404), ("get", "/repos/{org}/{name}", 404), ("post", "/reviews", 403),
    ("post", "/reviews", 404), ("post", "/reviews", 409), ("get", "/gate", 503), ("get", "/healthz", 503),
    ("post", "/webhooks/huggingface", 404),
])
def test_route_errors_carry_the_error_body(method: str, path: str, status: int) -> None:
    assert error_schema(SCHEMA["paths"][path][method], status) == ERROR


def test_the_gates_404_is_an_answer_or_an_error() -> None:
    schema = error_schema(SCHEMA["paths"]["/gate"]["get"], 404)
    assert {"$ref": "#/components/schemas/GateOut"} in schema["anyOf"] and ERROR in schema["anyOf"]


def parameter(path: str, method: str, name: str) -> dict[str, Any]:
    return next(p["schema"] for p in SCHEMA["paths"][path][method]["parameters"] if p["name"] == name)


@pytest.mark.parametrize(("path", "method", "name", "pattern"), [
    ("/gate", "get", "repo", REPO_PATTERN), ("/vet", "post", "repo", REPO_PATTERN),
    ("/gate", "get", "revision", REVISION_PATTERN),
    ("/vet", "post", "revision", REVISION_PATTERN),
    ("/repos", "get", "org", ORG_PATTERN), ("/repos", "get", "cursor", validation.CURSOR_PATTERN),
    ("/repos/{org}/{name}", "get", "org", ORG_PATTERN),
    ("/repos/{org}/{name}", "get", "name", ORG_PATTERN),
    ("/vet/{job_id}", "get", "job_id", validation.JOB_ID_PATTERN),
])
def test_ids_carry_their_patterns(path: str, method: str, name: str, pattern: str) -> None:
    assert parameter(path, method, name)["pattern"] == pattern


def accepted(check: Any, value: str) -> bool:
    try:
        check(value)
    except ApiError:
        return False
    return True


ID_TEXT = st.text(st.sampled_from("aZ09_.-/ö"), max_size=12)


@settings(max_examples=300, deadline=None)
@given(ID_TEXT)
def test_what_the_api_accepts_matches_the_documented_pattern(value: str) -> None:
    """Every id accepted matches the pattern; a matching one is refused only by the rules the description adds."""
    for check, pattern in ((validation.repo_id, REPO_PATTERN), (validation.org, ORG_PATTERN),
                           (validation.revision, REVISION_PATTERN)):
        matches = re.fullmatch(pattern, value) is not None
        if accepted(check, value):
            assert matches, (check.__name__, value)
        elif matches:
            assert "--" in value or ".." in value or value.endswith((".git", "/")) or "//" in value, value
