"""Which policy decides: the active one (``HFVET_POLICY``), or the one a command names with ``--policy``.

The one home of that choice, for the gate, the server, the workers and the vet commands. The policy
loader (and its CEL parser) is imported only when a policy is loaded, so a local interim scan never
pays for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from app.core.pipeline import default_decide
from app.core.ports import DecideFn
from app.errors import InputError
from app.settings import Settings

if TYPE_CHECKING:
    from app.core.policy.loader import LoadedPolicy

INTERIM = "interim"  # `--policy interim`: the severity-only verdict, chosen explicitly


def is_interim(policy: Path) -> bool:
    return str(policy) == INTERIM


def active_policy(settings: Settings) -> LoadedPolicy:
    """The active policy, which the gate re-decides every report under; interim cannot be it."""
    if is_interim(settings.policy):  # a per-command choice, never the active policy
        raise InputError("HFVET_POLICY=interim is not a trust policy: the gate needs one (e.g. default)")
    from app.core.policy.errors import PolicyError

    try:
        return _load(settings.policy, settings)
    except PolicyError as exc:
        raise InputError(f"the active policy (HFVET_POLICY={settings.policy}) does not load: {exc}") from exc


def policy_for(policy_path: Path | None, settings: Settings) -> LoadedPolicy | None:
    """The policy of ``--policy`` when given, else the active one; None for the interim verdict."""
    if policy_path is None:
        if is_interim(settings.policy):
            raise InputError(f"HFVET_POLICY={INTERIM} is not a trust policy; use `--policy {INTERIM}` on one command")
        policy_path = settings.policy
    if is_interim(policy_path):
        return None
    from app.core.policy.errors import PolicyError

    try:
        return _load(policy_path, settings)
    except PolicyError as exc:
        raise InputError(str(exc)) from exc


def decide_for(policy_path: Path | None, settings: Settings) -> DecideFn:
    """The decision of ``--policy`` when given, else of the active policy (``HFVET_POLICY``).

    The severity-only interim verdict is never a default: only ``--policy interim`` asks for it,
    and it cannot be the active policy, since the gate needs a real one to re-decide reports.
    """
    policy = policy_for(policy_path, settings)
    if policy is None:
        return default_decide
    from app.core.policy.engine import make_decide  # the policy engine (and its CEL parser): only when one decides

    return make_decide(policy)


def _load(policy_path: Path, settings: Settings) -> LoadedPolicy:
    from app.core.policy.loader import load_policy

    return load_policy(settings.resolve_policy(policy_path))
