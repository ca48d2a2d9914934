"""`hfvet token`: --expires-in (a default, explicit `never`), and `token list` showing expiry and state."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli.main import app as cli
from app.cli.token import expiry
from app.db import tokens
from app.db.session import Store

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("text", "lifetime"), [("90d", timedelta(days=90)), ("12h", timedelta(hours=12)),
                                                 ("30m", timedelta(minutes=30)), ("2w", timedelta(weeks=2))])
def test_durations(text: str, lifetime: timedelta) -> None:
    assert expiry(text, NOW) == NOW + lifetime


def test_never_is_allowed_explicitly() -> None:
    assert expiry("never", NOW) is None


@pytest.mark.parametrize("text", ["", "0d", "-1d", "90", "d", "1y", "1.5h", "forever", "99999w", "3661d"])
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="expires-in"):
        expiry(text, NOW)


def run(store_url: str, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["token", *args], env={"HFVET_DATABASE_URL": store_url, "COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


def expires_of(store_url: str, name: str) -> datetime | None:
    store = Store(store_url)
    try:
        with store.session() as session:
            return next(t.expires_at for t in tokens.listing(session) if t.name == name)
    finally:
        store.close()


def test_a_token_expires_in_90_days_by_default(store_url: str) -> None:
    code, out, _ = run(store_url, "create", "--role", "vetter", "--name", "ci")
    assert code == 0 and out.strip().splitlines()[-1].startswith("hfv_")
    expires_at = expires_of(store_url, "ci")
    assert expires_at is not None
    assert abs(expires_at - (datetime.now(UTC) + timedelta(days=90))) < timedelta(minutes=1)
    assert "expires" in out.splitlines()[0]


def test_expires_in_and_never(store_url: str) -> None:
    assert run(store_url, "create", "--role", "reader", "--name", "short", "--expires-in", "12h")[0] == 0
    code, out, _ = run(store_url, "create", "--role", "admin", "--name", "root", "--expires-in", "never")
    assert code == 0 and "never expires" in out
    short = expires_of(store_url, "short")
    assert short is not None and abs(short - (datetime.now(UTC) + timedelta(hours=12))) < timedelta(minutes=1)
    assert expires_of(store_url, "root") is None


def test_a_bad_duration_creates_nothing(store_url: str) -> None:
    code, out, err = run(store_url, "create", "--role", "reader", "--name", "x", "--expires-in", "soon")
    assert code == 2 and "expires-in" in err and "hfv_" not in out
    code, out, _ = run(store_url, "list")
    assert code == 0 and " x " not in out


def test_list_shows_expiry_and_marks_expired_and_revoked_tokens(store_url: str) -> None:
    store = Store(store_url)
    run(store_url, "list")  # migrates the fresh store
    with store.session() as session:
        tokens.create(session, "old", "vetter", actor="test", expires_at=datetime.now(UTC) - timedelta(days=1))
        tokens.create(session, "fresh", "vetter", actor="test", expires_at=datetime(2099, 1, 1, tzinfo=UTC))
        tokens.create(session, "gone", "vetter", actor="test", expires_at=None)
        tokens.revoke(session, "gone", actor="test")
    store.close()
    code, out, _ = run(store_url, "list")
    assert code == 0
    lines = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 2}
    assert "expired" in lines["old"]
    assert "2099-01-01T00:00:00" in lines["fresh"] and "live" in lines["fresh"]
    assert "never" in lines["gone"] and "revoked" in lines["gone"]


def test_list_as_json_for_scripts(store_url: str) -> None:
    store = Store(store_url)
    run(store_url, "list")  # migrates the fresh store
    with store.session() as session:
        tokens.create(session, "ci", "vetter", actor="test", expires_at=datetime(2099, 1, 1, tzinfo=UTC))
        tokens.create(session, "gone", "admin", actor="test", expires_at=None)
        tokens.revoke(session, "gone", actor="test")
    store.close()
    code, out, _ = run(store_url, "list", "--format", "json")
    assert code == 0
    listed = {row["name"]: row for row in json.loads(out)}
    assert set(listed["ci"]) == {"name", "role", "created", "expires", "revoked", "state"}
    assert listed["ci"]["role"] == "vetter" and listed["ci"]["state"] == "live"
    assert listed["ci"]["expires"] == "2099-01-01T00:00:00Z" and listed["ci"]["revoked"] is None
    assert datetime.fromisoformat(listed["ci"]["created"]).tzinfo == UTC
    assert listed["gone"]["state"] == "revoked" and listed["gone"]["expires"] is None
    assert str(listed["gone"]["revoked"]).endswith("Z")
