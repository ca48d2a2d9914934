"""YARA rules (``rules/*.yar``, one rule per file, rule name == file stem) over scripts, text and binaries.

Weight payloads (safetensors, pytorch-zip, gguf, numpy...) are not handled: their bytes are
numbers, and other scanners read their headers. Text is scanned whole, in overlapping chunks;
binaries and unknown files only up to ``limits.max_text_bytes``, which is reported. Strings are
``wide ascii`` (UTF-16-LE in binaries and scripts); UTF-16/32 text is also matched as UTF-8.
"""

from __future__ import annotations

import functools
import hashlib
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import yara

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.detect import EXECUTABLES, HEAD_BYTES, RAW_CONTENT, Format
from app.core.formats.text_encoding import decode, text_encoding, unit_size
from app.core.manifest import ManifestFile
from app.core.scanners.base import ScanContext
from app.core.scanners.text_rules.text_lines import MAX_EVIDENCE, evidence
from app.core.scanners.yara_cache import compiled_rules

RULES_DIR = Path(__file__).parent / "rules"
# Pickles too: payload strings (reverse shells, URLs) sit in their opening bytes.
HANDLED_FORMATS = frozenset({Format.TEXT, Format.UNKNOWN, Format.PICKLE, *EXECUTABLES, *RAW_CONTENT})
CHUNK_OVERLAP = 4096  # longer than any string our rules match, so no match is cut in two
MATCH_TIMEOUT = 60  # seconds for all chunks of one file together
REQUIRED_META = ("id", "description", "severity")


class YaraRulesError(ValueError):
    """A rule file breaks the one-rule-per-file / meta conventions, or does not compile."""


@dataclass(frozen=True)
class RuleMeta:
    name: str  # YARA rule name == file stem
    id: str
    description: str
    severity: Severity
    text_home: str | None = None  # a scanner that judges this rule for the text files it reads


def _check_file(path: Path) -> RuleMeta:
    try:
        compiled = list(yara.compile(filepath=str(path), error_on_warning=True))
    except yara.Error as exc:  # SyntaxError and WarningError derive from it
        raise YaraRulesError(f"{path.name}: {exc}") from exc
    if len(compiled) != 1 or compiled[0].identifier != path.stem:
        raise YaraRulesError(f"{path.name}: must hold exactly one rule named {path.stem!r}")
    meta: dict[str, Any] = compiled[0].meta
    missing = [k for k in REQUIRED_META if not meta.get(k)]
    if missing:
        raise YaraRulesError(f"{path.name}: meta lacks {', '.join(missing)}")
    try:
        severity = Severity(meta["severity"])
    except ValueError as exc:
        raise YaraRulesError(f"{path.name}: unknown severity {meta['severity']!r}") from exc
    return RuleMeta(path.stem, str(meta["id"]), str(meta["description"]), severity, _text_home(meta))


@functools.cache
def load_rules(rules_dir: Path = RULES_DIR) -> tuple[Any, dict[str, RuleMeta]]:
    """All rules compiled once (or loaded from the cache of their compilation), and their metadata by
    rule name. Their conventions are checked by tests/rules with ``_check_file``, not at every start."""
    paths = sorted(rules_dir.glob("*.yar"))
    if not paths:
        raise YaraRulesError(f"no .yar files in {rules_dir}")
    compiled = compiled_rules(paths)
    metas = {rule.identifier: _meta(rule.identifier, rule.meta) for rule in compiled}
    return compiled, metas


def _meta(name: str, meta: dict[str, Any]) -> RuleMeta:
    return RuleMeta(name, str(meta["id"]), str(meta["description"]), Severity(meta["severity"]), _text_home(meta))


def _text_home(meta: dict[str, Any]) -> str | None:
    home = meta.get("text_home")
    return str(home) if home else None


def _rule_infos() -> tuple[RuleInfo, ...]:
    _, metas = load_rules()
    # Every YARA rule names something a file does when it runs (a shell, a download, persistence).
    generated = tuple(RuleInfo(f"yara:{m.id}", m.severity, m.description, RuleKind.EXECUTION) for m in metas.values())
    return (*generated,
            RuleInfo("yara-partial-scan", Severity.LOW, "binary larger than the YARA cap: only its start scanned",
                     kind=RuleKind.PARTIAL),
            RuleInfo.limit("text file larger than the per-file read limit"),
            RuleInfo.scan_error("YARA error or timeout, or the file was shorter than listed"))


class YaraScanner:
    name: ClassVar[str] = "yara"
    rules: ClassVar[tuple[RuleInfo, ...]] = _rule_infos()

    def handles(self, file: ManifestFile) -> bool:
        return file.format in HANDLED_FORMATS

    def version(self) -> str:
        """Names the rule set by digest, so a verdict records exactly which rules judged it."""
        digest = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(RULES_DIR.glob("*.yar"))))
        return f"yara-python {yara.__version__}, {len(load_rules()[1])} rules {digest.hexdigest()[:12]}"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        sink = FindingSink(ctx.file.path, self.name)
        is_text = ctx.file.format == Format.TEXT
        cap = ctx.limits.max_read_bytes_per_file if is_text else ctx.limits.max_text_bytes
        size = ctx.blob.size
        if size > cap and is_text:
            sink.add("limit-exceeded", Severity.HIGH, f"{size} bytes: only the first {cap} were scanned")
        elif size > cap:
            sink.add("yara-partial-scan", Severity.LOW, f"{size} bytes: only the first {cap} were scanned")
        try:
            self._scan_chunks(ctx, sink, min(size, cap), is_text)
        except (yara.Error, _ShortRead) as exc:
            return ScanOutcome.failed(self.name, ctx.file.path, f"{type(exc).__name__}: {exc}", sink.findings)
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)

    def _scan_chunks(self, ctx: ScanContext, sink: FindingSink, total: int, is_text: bool) -> None:
        compiled, metas = load_rules()
        chunk = max(ctx.limits.max_text_bytes, 4 * CHUNK_OVERLAP)
        offset, lines_before = 0, 0
        # Rules another scanner judges on this file (it parses what the rule only pattern-matches).
        reported: set[str] = {m.name for m in metas.values() if m.text_home and _read_by(m.text_home, ctx)}
        deadline = time.monotonic() + MATCH_TIMEOUT
        wide: str | None = None  # the UTF-16/32 codec of a text file, sniffed from its head
        while offset < total:
            data = ctx.blob.read(offset, min(chunk, total - offset))
            if not data:
                raise _ShortRead(f"no bytes at offset {offset} of {total}")
            if offset == 0 and is_text:
                wide = _wide_encoding(data[:HEAD_BYTES])
            # Wide text is matched as UTF-8 too: the rules' `wide` strings only cover UTF-16-LE.
            views = [(_as_utf8(data, offset, wide), True)] if wide else []
            for view, as_text in (*views, (data, is_text and not wide)):
                for match in compiled.match(data=view, timeout=_seconds_left(deadline)):
                    if match.rule not in reported:
                        reported.add(match.rule)
                        meta = metas[match.rule]
                        where = _where(match, view, offset, lines_before, as_text)
                        sink.add(f"yara:{meta.id}", meta.severity, meta.description,
                                 evidence=f"{ctx.file.path}{where}")
            if offset + len(data) >= total:
                return
            advance = max(len(data) - CHUNK_OVERLAP, 1)
            seen = _as_utf8(data[:advance], offset, wide) if wide else data[:advance]
            lines_before += seen.count(b"\n")
            offset += advance


def _read_by(scanner: str, ctx: ScanContext) -> bool:
    # Lazy: the links scanner imports the shell parser, which only text files need.
    from app.core.scanners.links_scanner import LinksScanner
    from app.core.scanners.text_rules.shell.programs import reads_as_shell

    if scanner != LinksScanner.name:
        raise YaraRulesError(f"text_home {scanner!r} names no scanner that can be its home")
    return LinksScanner().handles(ctx.file) and reads_as_shell(ctx.file.path)


def _wide_encoding(head: bytes) -> str | None:
    encoding = text_encoding(head)
    return encoding if encoding and encoding != "utf-8" else None


def _as_utf8(data: bytes, offset: int, encoding: str) -> bytes:
    """A chunk of wide text as UTF-8, starting at the first whole character (chunks may cut one)."""
    skip = -offset % unit_size(encoding)
    return decode(data[skip:], encoding).encode("utf-8", errors="surrogatepass")


def _seconds_left(deadline: float) -> int:
    """yara's whole-second timeout for the next chunk; a file whose chunks each stay just under a
    per-chunk timeout could otherwise hold a worker for hours."""
    left = math.ceil(deadline - time.monotonic())
    if left <= 0:
        raise yara.TimeoutError(f"matching took longer than {MATCH_TIMEOUT}s")
    return left


class _ShortRead(Exception):
    """The source returned fewer bytes than the file's size promised."""


def _where(match: Any, data: bytes, offset: int, lines_before: int, is_text: bool) -> str:
    """``:LINE: text`` for text files, ``@0xOFFSET: bytes`` for binaries (earliest matched string)."""
    instance = min((i for s in match.strings for i in s.instances), key=lambda i: i.offset, default=None)
    if instance is None:
        return ""
    start = instance.offset
    if is_text:
        line = lines_before + data[:start].count(b"\n") + 1
        begin = max(data.rfind(b"\n", 0, start) + 1, start - 80)  # long lines: a window around it
        end = data.find(b"\n", start, start + MAX_EVIDENCE)
        text = data[begin : end if end >= 0 else start + MAX_EVIDENCE].decode("utf-8", errors="replace")
        return evidence("", str(line), text)
    shown = instance.matched_data[:MAX_EVIDENCE].decode("latin-1")
    printable = "".join(c if c.isprintable() else "." for c in shown)
    return f"@0x{offset + start:x}: {printable}"
