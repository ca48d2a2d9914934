"""Hard limits that keep a hostile file from exhausting the vetting process.

Hitting a limit is a ``high`` finding (rule ``limit-exceeded``), never a crash and never
a silent pass. A decompression bomb is one such limit: its message starts with
"decompression bomb".

Decompression is judged per archive member and per compressed file (gzip, bz2, xz, zlib,
7z, a zip as a whole), on the sizes an archive declares and on the bytes actually
produced: more than ``max_decompressed_bytes``, or more than ``max_expansion_ratio``
output bytes per input byte once the output passes ``expansion_ratio_floor``.

The ratio is output over input so far for a stream, over the whole member where its
compressed size is known, and over the declared sizes before anything is inflated.

Memory: large buffers (a decompressed nested archive, a 7z's extracted members, a
safetensors header being parsed) are reserved in one process-wide ``MemoryBudget`` of
``max_buffered_bytes``; a reservation waits until the budget has room, so their sum stays
under that figure whatever the number of worker threads. Buffers under 8 MiB are not
reserved. Peak RSS of a vet is bounded by about ``max(max_buffered_bytes, largest single
buffer) + 250 MB``; the largest single buffer is a 100 MB safetensors header, whose parse
takes ~1.2 GB (measured: four such headers peak at 1.5 GB, one at 1.3 GB).

Bounds on what the analysis itself computes (constants in their modules): the pickle evaluator's
helper results (``evaluate.MAX_RESULT`` 1 MiB each, ``MAX_EVALUATED`` 4 MiB per stream, each
bounded before it runs), the Python constant folder (``fold_values.MAX_VALUE`` 64 KiB per value,
``constants.MAX_FOLDED_TOTAL`` 8 MiB per module), and a chat template's static render cost
(``jinja_cost.MAX_STEPS`` / ``MAX_CHARS`` 10^8 for 1,000 messages and 100 tools: past it, a
``template-render-cost`` finding).
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
    max_decompressed_bytes: int = 512 * MiB  # per decompressed member or stream, declared or actual
    # Output bytes per input byte. Deflate tops out near 1032:1 and real checkpoint data rarely
    # passes 20:1; only a stream of one repeated byte (a bomb, or an all-zero tensor) goes past 100:1.
    max_expansion_ratio: int = 100
    expansion_ratio_floor: int = 16 * MiB  # outputs up to this size are never judged by ratio
    max_buffered_bytes: int = 1024 * MiB  # large in-memory buffers held at once by the whole process
    max_text_bytes: int = 4 * MiB  # text files read whole up to this size
    max_string_arg: int = 64 * 1024  # longer pickle strings are skipped, not kept
    # Pickles inside pickle constants (raw, base64, hex, compressed): how deep, how many decoded
    # bytes one constant may yield, and how many all nested walks under one stream may take.
    max_nested_pickle_depth: int = 3
    max_nested_constant_bytes: int = 8 * MiB  # under the 8 MiB a buffer may take unreserved
    max_nested_pickle_bytes: int = 32 * MiB
    # Files plus directories a local listing may produce: HF advises < 100k files per repo, and
    # directory links that alias each other could otherwise multiply entries exponentially.
    max_listed_entries: int = 100_000
    max_vet_seconds: float = 1800.0  # files not started by then are reported unscanned (vet-timeout)

    def expansion_cap(self, compressed: int | None) -> int:
        """The most bytes ``compressed`` input bytes may decompress to (None: size unknown)."""
        if compressed is None:
            return self.max_decompressed_bytes
        by_ratio = max(self.expansion_ratio_floor, self.max_expansion_ratio * compressed)
        return min(self.max_decompressed_bytes, by_ratio)

    def check_expansion(self, produced: int, consumed: int | None, what: str, declared: bool = False) -> None:
        """Raise DecompressionBomb when ``produced`` output bytes from ``consumed`` input break a limit."""
        if produced <= self.expansion_cap(consumed):
            return
        verb = "declares" if declared else "decompresses to"
        if produced > self.max_decompressed_bytes:
            raise DecompressionBomb(f"decompression bomb: {what} {verb} more than "
                                    f"{self.max_decompressed_bytes} bytes")
        raise DecompressionBomb(f"decompression bomb: {what} {verb} {produced} bytes from {consumed} "
                                f"(over {self.max_expansion_ratio}:1)")


class LimitExceeded(Exception):
    """A ``Limits`` bound was hit; scanners report it as ``limit-exceeded``, never as clean."""


class DecompressionBomb(LimitExceeded):
    """A member or stream expands past ``max_decompressed_bytes`` or ``max_expansion_ratio``."""


class ReadBudgetExceeded(LimitExceeded):
    """The per-file read budget (``max_read_bytes_per_file``) is spent."""
