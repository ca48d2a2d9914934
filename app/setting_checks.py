"""The rules a setting's value must meet that need only the standard library, and the error naming it.

app.settings applies them when it builds Settings (with pydantic); `hfvet gate --server` starts
without pydantic (app/cli/gate_fast.py) and applies the same URL rule here, so both refuse the
same values in the same words; it reads its settings from the environment here too (``env_value``),
under the prefix Settings reads. Stdlib and app.redact only: a shown URL never carries its credentials.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit

from app.redact import mask_url

NOT_AN_HTTP_URL = "not an http:// or https:// URL with a host"
ENV_PREFIX = "HFVET_"  # Settings' too: HFVET_<FIELD>


def env_value(field: str) -> str | None:
    """Setting ``field`` as the environment holds it (HFVET_SERVER for "server"); unset or empty is None,
    as the command line reads an option's variable (an empty HFVET_SERVER means no server)."""
    return os.environ.get(ENV_PREFIX + field.upper()) or None


class SettingsError(ValueError):
    """The environment holds a setting hfvet cannot use: one line per bad setting, each naming it."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def http_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a server to talk to (absolute http(s) with a host), or None."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  a bad port raises here, not on first use
    except ValueError:
        return NOT_AN_HTTP_URL
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return NOT_AN_HTTP_URL
    return None


def shown(value: object) -> str:
    """A bad value as an error line quotes it: credentials in a URL masked."""
    return repr(mask_url(value) if isinstance(value, str) else value)


def bad_url_lines(urls: Mapping[str, str | None]) -> list[str]:
    """One line per named URL that is set and not an http(s) URL with a host, in Settings' words."""
    return [f"{name}: {problem}: {shown(url)}"
            for name, url in urls.items() if url is not None and (problem := http_url_problem(url))]
