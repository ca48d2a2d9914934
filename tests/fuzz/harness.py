"""Shared pieces of the fuzz targets: hypothesis profiles, byte mutations, scanner calls, oracles.

Nothing here loads, deserializes or runs a sample. The "would a loader reach it" oracle uses the
stdlib disassembler (``pickletools.genops``), which only parses opcodes, and the stdlib archive
readers, which only list and inflate members.
"""

from __future__ import annotations

import io
import os
import pickle
import pickletools
import tarfile
import tracemalloc
import zipfile
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from app.core.findings import SCAN_ERROR, Finding, ScanOutcome, Severity, Status
from app.core.formats.blobs import BytesBlob
from app.core.formats.detect import HEAD_BYTES, detect_format
from app.core.formats.sniff import refine_format
from app.core.limits import Limits
from app.core.manifest import ManifestFile, RepoIdentity
from app.core.membudget import MemoryBudget
from app.core.pipeline import VetOptions, vet
from app.core.scanners.base import ScanContext, Scanner
from app.core.verdict import Verdict
from tests.fakes import MemorySource

# "ci": the suite's profile (deterministic, a few seconds per target on 2 cores).
# "long": bench/fuzz_long.py's (random seeds, run in rounds until the time is up).
_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("fuzz-ci", max_examples=150, deadline=timedelta(seconds=3), derandomize=True,
                          database=None, suppress_health_check=_SLOW_OK, print_blob=True)
settings.register_profile("fuzz-long", max_examples=300, deadline=timedelta(seconds=10), derandomize=False,
                          database=None, suppress_health_check=_SLOW_OK, print_blob=True)
PROFILE = os.environ.get("HFVET_FUZZ_PROFILE", "ci")
FUZZ = settings.get_profile(f"fuzz-{PROFILE}")

# Small limits so that a fuzzed size field hits a limit (a finding) instead of taking the machine.
LIMITS = Limits(max_read_bytes_per_file=4 << 20, max_decompressed_bytes=8 << 20, expansion_ratio_floor=1 << 20,
                max_buffered_bytes=32 << 20, max_string_arg=4096, max_nested_constant_bytes=1 << 20,
                max_nested_pickle_bytes=2 << 20, max_pickle_opcodes=200_000, max_vet_seconds=60.0)
MEMORY_BOUND = 96 << 20  # tracemalloc peak allowed for one example (LIMITS buffer at most 32 MiB)

_INTERESTING = [b"\x00", b"\xff", b"\x7f", b"\x80", b"\xff\xff\xff\x7f", b"\xff" * 8, b"\x00" * 8,
                b"\x01\x00\x00\x00\x00\x00\x00\x80", b"\n", b"(", b".", b"c", b"\x93", b"\x95", b"PK\x03\x04"]


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes], max_edits: int = 4) -> bytes:
    """One seed with a few edits: flips, overwrites with edge values, inserts, cuts, truncation."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, max_edits))):
        kind = draw(st.sampled_from(["flip", "set", "edge", "insert", "delete", "truncate", "repeat"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set" and data:
            data[at] = draw(st.integers(0, 255))
        elif kind == "edge":
            value = draw(st.sampled_from(_INTERESTING))
            data[at:at + len(value)] = value
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 16))]
        elif kind == "truncate":
            del data[at:]
        elif kind == "repeat":
            data[at:at] = data[at:at + draw(st.integers(1, 64))] * draw(st.integers(1, 4))
    return bytes(data)


def entry_for(path: str, data: bytes) -> ManifestFile:
    """The manifest entry the pipeline would build: format sniffed from the content."""
    blob = BytesBlob(data)
    fmt = refine_format(blob, detect_format(data[:HEAD_BYTES], len(data)))
    return ManifestFile(path, len(data), format=str(fmt))


def scan_direct(scanner: Scanner, path: str, data: bytes, limits: Limits = LIMITS) -> ScanOutcome | None:
    """scanner.scan outside the pipeline's safety net: its contract is to never raise for content."""
    entry = entry_for(path, data)
    if not scanner.handles(entry):
        return None
    ctx = ScanContext(entry, BytesBlob(data), limits, RepoIdentity("org/name"), (entry,),
                      MemoryBudget(limits.max_buffered_bytes))
    outcome = scanner.scan(ctx)
    check_declared(scanner, outcome)
    return outcome


def check_declared(scanner: Scanner, outcome: ScanOutcome) -> None:
    """Every finding names a declared rule at no more than its declared severity; a failure is high."""
    declared = {r.id: r.severity for r in scanner.rules} | {SCAN_ERROR: Severity.HIGH}
    for finding in outcome.findings:
        assert finding.rule in declared, f"{scanner.name}: undeclared rule {finding.rule!r}"
        assert finding.severity.rank <= declared[finding.rule].rank, f"{finding.rule}: above its declared severity"
        if _is_failure_rule(finding.rule):  # a parser that gave up says so at full strength
            assert finding.severity.rank >= max(declared[finding.rule].rank, Severity.HIGH.rank), finding
    if outcome.status is Status.FAILED:
        assert any(f.rule == SCAN_ERROR and f.severity is Severity.HIGH for f in outcome.findings)


def _is_failure_rule(rule: str) -> bool:
    return rule in (SCAN_ERROR, "limit-exceeded", "read-error") or rule.startswith("malformed")


def vet_files(files: dict[str, bytes], scanners: Iterable[Scanner]) -> tuple[Verdict, list[Finding]]:
    """The whole per-file pipeline (sniffing, readings, scanners) with the severity-only decision."""
    report = vet(MemorySource(files), list(scanners), options=VetOptions(limits=LIMITS, workers=1))
    return report.verdict, list(report.findings)


def worst(findings: Iterable[Finding]) -> Severity:
    return max((f.severity for f in findings), key=lambda s: s.rank, default=Severity.INFO)


def peak_memory(fn: Callable[[], Any]) -> int:
    """tracemalloc's peak while ``fn`` runs (Python allocations, which is where a parser would hoard)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


DANGEROUS_GLOBALS = {("posix", "system"), ("os", "system"), ("builtins", "exec"), ("builtins", "eval")}
_STRING_OPS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "STRING", "BINSTRING",
               "SHORT_BINSTRING"}


def reaches_dangerous_global(data: bytes) -> bool:
    """Whether a loader would import a dangerous global before the stream breaks or stops.

    Parses opcodes only (pickletools.genops). For STACK_GLOBAL it assumes the last two strings
    pushed are its operands: generous, so the oracle errs towards demanding a finding.
    """
    strings: list[str] = []
    try:
        for op, arg, _ in pickletools.genops(data):
            if op.name == "PROTO" and int(arg) > pickle.HIGHEST_PROTOCOL:
                return False  # the loader refuses the stream at this opcode
            if op.name == "GLOBAL" and tuple(str(arg).split(" ", 1)) in DANGEROUS_GLOBALS:
                return True
            if op.name in _STRING_OPS:
                strings.append(str(arg))
            if op.name == "STACK_GLOBAL" and tuple(strings[-2:]) in DANGEROUS_GLOBALS:
                return True
    except Exception:  # noqa: BLE001, S110 - a broken stream ends what a loader would run
        pass
    return False


def zip_members_reachable(data: bytes) -> list[bytes]:
    """Members the stdlib zip reader lists and inflates intact (a stand-in for a loader's reader)."""
    out: list[bytes] = []
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist()[:64]:
                if info.file_size <= 1 << 20:
                    out.append(archive.read(info))
    except Exception:  # noqa: BLE001, S110 - what the reader cannot open, no loader gets either
        pass
    return out


def tar_members_reachable(data: bytes) -> list[bytes]:
    out: list[bytes] = []
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            for info in archive.getmembers()[:64]:
                handle = archive.extractfile(info) if info.isfile() and info.size <= 1 << 20 else None
                if handle is not None:
                    out.append(handle.read())
    except Exception:  # noqa: BLE001, S110
        pass
    return out
