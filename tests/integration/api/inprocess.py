"""The API in process (a TestClient) against the fixture hub: what the `example_hub` and `api` fixtures in
this folder's conftest.py set up, and the helpers their tests share."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.state import AppState

WEBHOOK_SECRET = "hub-webhook-secret"


def app_state(client: TestClient) -> AppState:
    """The server's wiring behind an in-process client."""
    return client.app.state.hfvet  # type: ignore[attr-defined,no-any-return]
