"""`hfvet --version`: what a report would record about this install, before any vet runs.

The hfvet version, the active policy (name and sha256, as a report's `policy` records it) and each
engine's version (as a report's `scanners` map records it: app/core/pipeline.py).
"""

from __future__ import annotations

from app import __version__


def version_lines() -> list[str]:
    """`hfvet X`, then `policy NAME sha256:HEX (HFVET_POLICY)`, then one `  engine version` per scanner."""
    from app.core.scanners import all_scanners  # on use: `hfvet --help` stays light
    from app.services.policies import active_policy
    from app.settings import Settings

    settings = Settings()
    policy = active_policy(settings)
    lines = [f"hfvet {__version__}",
             f"policy {policy.name} sha256:{policy.sha256} (HFVET_POLICY={settings.policy})",
             "engines:"]
    return lines + [f"  {scanner.name} {scanner.version()}" for scanner in all_scanners()]


def print_version() -> None:
    from app.cli import exit_codes

    for line in exit_codes.guard(version_lines):
        print(line)
