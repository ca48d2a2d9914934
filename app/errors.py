"""Operational errors: the CLI turns them into exit code 2, the API into HTTP errors, each in one place."""

from __future__ import annotations


class HfvetError(Exception):
    """An error the user can act on; the message says what and how."""


class InputError(HfvetError):
    """What was asked for cannot be used as given (no such path, a policy that does not load)."""
