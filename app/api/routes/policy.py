"""GET /policy: the active trust policy the gate answers under (name, digest and the YAML itself)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter

from app.api.deps import ReaderDep, StateDep
from app.api.openapi import errors

router = APIRouter(tags=["policy"])


@router.get("/policy", responses=errors(401))
def get_policy(app: StateDep, _who: ReaderDep) -> dict[str, str | None]:
    policy = app.policy
    path = Path(policy.source)
    text = path.read_text(encoding="utf-8") if path.is_file() else None
    return {"name": policy.name, "sha256": policy.sha256, "source": path.name, "text": text}
