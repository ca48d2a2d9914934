"""The start-up checks of the attestation key that a command signing with it shares (serve, vet, review, worker)."""

from __future__ import annotations

import sys

from app.settings import Settings

_warned: set[str] = set()  # one warning per key and process, however often a command opens its store


def warn_if_key_exposed(settings: Settings) -> None:
    """One line on stderr when HFVET_ATTESTATION_KEY's file is readable by group or others."""
    from app.services.signing_keys import exposed_key_warning

    line = exposed_key_warning(settings)
    if line is not None and line not in _warned:
        _warned.add(line)
        sys.stderr.write(line + "\n")
