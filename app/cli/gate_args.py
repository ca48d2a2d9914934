"""The `hfvet gate` command line's options and where a remote gate asks, read one way by the full command
line (app/cli/gate.py) and by its fast twin (app/cli/gate_fast.py).

Stdlib only: the fast twin runs without typer, rich or pydantic, so the grammar, the environment's
HFVET_SERVER / HFVET_TOKEN and the URL checks are written here once for both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum

from app.setting_checks import bad_url_lines, env_value

# Each value-taking option of `gate`, by the parameter it fills: typer declares them from here, the fast twin
# parses them from here.
OPTIONS = {"revision": ("--revision", "-r"), "fmt": ("--format", "-f"), "server": ("--server",), "token": ("--token",)}


class GateFormat(StrEnum):
    """--format of `gate`: the sha alone, or the whole answer as JSON (typer shows the choices in --help)."""

    text = "text"
    json = "json"


FORMATS = tuple(GateFormat)


@dataclass(frozen=True)
class Remote:
    """The server a gate asks (None or empty: the local store) and the token it sends."""

    server: str | None
    token: str | None
    server_from_option: bool  # else HFVET_SERVER supplied it: an error names the one to fix

    def bad_settings(self) -> list[str]:
        """The remote gate builds no Settings (no pydantic on the fast path), so it checks the URLs it reads
        itself, in Settings' words: the server, and HF_ENDPOINT, which every command refuses when bad."""
        return bad_url_lines({"HF_ENDPOINT": os.environ.get("HF_ENDPOINT"),  # as set: empty is a bad one
                              "--server" if self.server_from_option else "HFVET_SERVER": self.server})


def remote(server: str | None, token: str | None) -> Remote:
    """--server and --token as given (an empty one too), else HFVET_SERVER and HFVET_TOKEN."""
    return Remote(server if server is not None else env_value("server"),
                  token if token is not None else env_value("token"), server is not None)

