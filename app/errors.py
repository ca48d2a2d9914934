"""Operational errors the CLI and API turn into exit code 2 / HTTP errors, in one place."""

from __future__ import annotations


class HfvetError(Exception):
    """An error the user can act on; the message says what and how."""


class UsageError(HfvetError):
    """The command was called wrongly (bad path, bad option value)."""
