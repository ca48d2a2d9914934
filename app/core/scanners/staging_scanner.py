"""Cards and scripts that turn a shipped file into running native code (threat model items 3-4).

An encoded payload is inert until a line the reader copies decodes it (``base64 -d kernel.b64 >
libk.so``, ``xxd -r -p blob.hex > run``, ``b64decode(open("w.txt").read())``) or makes the dynamic
linker load it into every process (``LD_PRELOAD=./libhook.so python serve.py``). This scanner
names such lines when the file they act on is one the repo ships; downloads fed to the same
commands are the links scanner's. A system library (``LD_PRELOAD=/usr/lib/.../libtcmalloc.so``)
is not a shipped file and is not flagged.
"""

from __future__ import annotations

import posixpath
import re
from typing import ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.detect import Format
from app.core.manifest import ManifestFile
from app.core.ports import SourceError
from app.core.scanners.base import ScanContext
from app.core.scanners.text_rules.text_lines import evidence, logical_lines, read_text

# Not Python: the remote-code scanner reads it as code, and tokenizers decode their shipped
# vocabularies (tiktoken's base64 ranks) as a matter of course.
_SUFFIXES = (".md", ".markdown", ".mdx", ".rst", ".txt", ".sh", ".bash", ".zsh", ".ps1", ".bat", ".cmd",
             ".ipynb", ".cfg", ".toml", ".yaml", ".yml", ".dockerfile", ".mk", ".env")
_NAMES = ("readme", "dockerfile", "containerfile", "makefile", "install", "run", "start", "entrypoint")
_FORMATS = frozenset({Format.TEXT, Format.UNKNOWN, Format.PICKLE})
_DECODE = re.compile(
    r"\bbase64\s+(?:-\w*d\w*|--decode)\b|\bxxd\s+(?:-\S+\s+)*-r|\bxxd\s+-r|\bopenssl\s+(?:enc\s+)?-?base64\b.*\s-d\b"
    r"|\buudecode\b|\bcertutil\s+-decode\b|\bb64decode\b|\bunhexlify\b|\bfromhex\b|\ba2b_base64\b"
    r"|\bFromBase64String\b",
    re.I,
)
_PRELOAD = re.compile(r"\b(LD_PRELOAD|LD_AUDIT|DYLD_INSERT_LIBRARIES)\s*=\s*[\"']?([^\s\"';&|)]+)")
_TOKEN = re.compile(r"[\w$.{}()/~-]+")
_PREFIXES = ("./", "$PWD/", "${PWD}/", "$(pwd)/", "`pwd`/")
MAX_FINDINGS = 20


class StagingScanner:
    name: ClassVar[str] = "staging"
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo("decodes-shipped-file", Severity.HIGH,
                 "a card or script decodes a file the repo ships (base64 -d, xxd -r, b64decode...): "
                 "what runs was not vetted", kind=RuleKind.DANGEROUS_CAPABILITY),
        RuleInfo("preloads-shipped-library", Severity.HIGH,
                 "LD_PRELOAD / DYLD_INSERT_LIBRARIES / LD_AUDIT names a library the repo ships",
                 kind=RuleKind.DANGEROUS_CAPABILITY),
        RuleInfo.scan_error("the file could not be read"),
    )

    def handles(self, file: ManifestFile) -> bool:
        base = posixpath.basename(file.path).lower()
        return file.format in _FORMATS and (base.endswith(_SUFFIXES) or base.startswith(_NAMES))

    def version(self) -> str:
        return "1"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        sink = FindingSink(ctx.file.path, self.name)
        try:
            text, _cut = read_text(ctx.blob, ctx.limits.max_text_bytes)
        except SourceError as exc:
            return ScanOutcome.failed(self.name, ctx.file.path, str(exc))
        shipped = _shipped(ctx)
        if not shipped:
            return ScanOutcome.scanned(self.name, ctx.file.path, [])
        for line in logical_lines(text):
            if len(sink.findings) >= MAX_FINDINGS:
                break
            self._line(sink, line.where, line.text[:16 * 1024], shipped)
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)

    def _line(self, sink: FindingSink, where: str, text: str, shipped: dict[str, str]) -> None:
        for match in _PRELOAD.finditer(text):
            for part in match.group(2).split(":"):
                path = _shipped_path(part, shipped)
                if path:
                    sink.add("preloads-shipped-library", Severity.HIGH,
                             f"{match.group(1)} loads {path}, a file this repo ships, into every process started",
                             evidence=evidence(sink.path, where, text))
        decoder = _DECODE.search(text)
        if decoder:
            names = [p for p in (_shipped_path(t, shipped) for t in _TOKEN.findall(text[decoder.start():])) if p]
            if names:
                sink.add("decodes-shipped-file", Severity.HIGH,
                         f"decodes {names[0]}, a file this repo ships ({decoder.group(0).strip()}): "
                         "what comes out is not what the vet saw", evidence=evidence(sink.path, where, text))


def _shipped(ctx: ScanContext) -> dict[str, str]:
    """Repo paths and bare file names (the card runs in the repo folder) -> repo path, without the card."""
    out: dict[str, str] = {}
    for f in ctx.all_files:
        if f.path == ctx.file.path:
            continue
        out.setdefault(f.path, f.path)
        out.setdefault(posixpath.basename(f.path), f.path)
    return out


def _shipped_path(token: str, shipped: dict[str, str]) -> str | None:
    token = token.strip("\"'`()")
    for prefix in _PREFIXES:
        if token.startswith(prefix):
            token = token[len(prefix):]
            break
    else:
        if token.startswith(("/", "~", "$")):
            name = posixpath.basename(token)
            return shipped.get(name) if "." in name else None  # /workspace/model/libhook.so
    if not token or "." not in posixpath.basename(token):
        return None  # "run", "model": words, not the files a decoder reads
    return shipped.get(token) or shipped.get(posixpath.basename(token))
