"""The faces (API routes, dashboard pages, CLI commands) ask use cases in app/services; they open no store session
themselves (lint-imports keeps them from importing app.db), and who a caller is is defined once, outside the store."""

from __future__ import annotations

import re
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
FACES = ("api", "web", "cli")


def test_no_face_opens_a_store_session() -> None:
    opening = {str(p.relative_to(APP)) for face in FACES for p in (APP / face).rglob("*.py")
               if ".session()" in p.read_text(encoding="utf-8")}
    assert opening == set()


def test_who_a_caller_is_is_defined_once() -> None:
    definition = re.compile(r"^(class Principal\b|class TokenExpired\b|ROLES = |def digest\()", re.MULTILINE)
    writers = {str(p.relative_to(APP)) for p in APP.rglob("*.py") if definition.search(p.read_text(encoding="utf-8"))}
    assert writers == {"core/principals.py"}
