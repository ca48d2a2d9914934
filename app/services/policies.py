"""Which policy decides: the active one (``HFVET_POLICY``), or the one a command names with ``--policy``.

The one home of that choice, for the gate, the server, the workers, the vet commands and every
``hfvet policy`` command (``load_named``: a YAML path or a shipped name, read the same way by all).
The policy loader (and its CEL parser) is imported only when a policy is loaded, so a local interim
scan never pays for it; the pipeline only for the interim verdict, so `hfvet policy` loads no scanner.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from app.errors import InputError
from app.settings import Settings

if TYPE_CHECKING:
    from app.core.policy.loader import LoadedPolicy
    from app.core.ports import DecideFn

INTERIM = "interim"  # `--policy interim`: the severity-only verdict, chosen explicitly


def is_interim(policy: Path) -> bool:
    return str(policy) == INTERIM


def active_policy(settings: Settings) -> LoadedPolicy:
    """The active policy, which the gate re-decides every report under; interim cannot be it."""
    if is_interim(settings.policy):  # a per-command choice, never the active policy
        raise InputError("HFVET_POLICY=interim is not a trust policy: the gate needs one (e.g. default)")
    from app.core.policy.errors import PolicyError

    try:
        return load_named(settings.policy, settings)
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
        return load_named(policy_path, settings)
    except PolicyError as exc:
        raise InputError(str(exc)) from exc


def decide_for(policy_path: Path | None, settings: Settings) -> DecideFn:
    """The decision of ``--policy`` when given, else of the active policy (``HFVET_POLICY``).

    The severity-only interim verdict is never a default: only ``--policy interim`` asks for it,
    and it cannot be the active policy, since the gate needs a real one to re-decide reports.
    """
    policy = policy_for(policy_path, settings)
    if policy is None:
        from app.core.pipeline import default_decide  # the pipeline loads the scanners: `hfvet policy` never does

        return default_decide
    from app.core.policy.engine import make_decide  # the policy engine (and its CEL parser): only when one decides

    return make_decide(policy)


def load_named(policy: Path, settings: Settings) -> LoadedPolicy:
    """A policy argument as every command reads it: a YAML file, or the bare name of a shipped policy
    (``default``, ``strict``: ``<name>.yaml`` in ``Settings.policies_root``).

    Raises PolicyError (each issue names the file and line) when it does not load, and InputError for
    ``interim``, which is a verdict without a policy: only ``scan``/``vet`` take it (see policy_for).
    """
    from app.core.policy.errors import PolicyError
    from app.core.policy.loader import load_policy

    if is_interim(policy):
        raise InputError(f"{INTERIM} is the severity-only verdict, not a policy: name a policy file or a shipped "
                         f"policy ({', '.join(shipped_names(settings)) or 'none found'})")
    path = settings.resolve_policy(policy)
    if path != policy and not path.exists():  # a bare name that names nothing
        raise PolicyError.single(str(policy), None, _no_such_name(str(policy), settings))
    return load_policy(path)


def shipped_names(settings: Settings) -> list[str]:
    """The names `--policy NAME` accepts: the policy files in Settings.policies_root."""
    return sorted(p.stem for p in settings.policies_root().glob("*.yaml"))


def _no_such_name(name: str, settings: Settings) -> str:
    import difflib

    names = shipped_names(settings)
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return (f"no such file, and no shipped policy of that name in {settings.policies_root()} "
            f"(shipped: {', '.join(names) or 'none'}){hint}")
