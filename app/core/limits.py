"""Hard limits that keep a hostile file from exhausting the vetting process.

Hitting a limit is a ``high`` finding (rule ``limit-exceeded``), never a crash and never
a silent pass.
"""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    max_read_bytes_per_file: int = 256 * MiB  # bytes one scanner may read from one file
    max_pickle_opcodes: int = 5_000_000
    max_nesting: int = 4  # archive in archive in ...
    max_archive_members: int = 100_000
    max_decompressed_bytes: int = 512 * MiB  # per decompressed member or stream
    max_text_bytes: int = 4 * MiB  # text files read whole up to this size
    max_string_arg: int = 64 * 1024  # longer pickle strings are skipped, not kept
    # Files plus directories a local listing may produce: HF advises < 100k files per repo, and
    # directory links that alias each other could otherwise multiply entries exponentially.
    max_listed_entries: int = 100_000
    max_vet_seconds: float = 1800.0  # files not started by then are reported unscanned (vet-timeout)


class LimitExceeded(Exception):
    """A ``Limits`` bound was hit; scanners report it as ``limit-exceeded``, never as clean."""


class ReadBudgetExceeded(LimitExceeded):
    """The per-file read budget (``max_read_bytes_per_file``) is spent."""
