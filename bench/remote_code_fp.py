"""False positives of the remote-code analysis on real modelling code (issue 23, item 3).

Point it at a ``models`` folder of a transformers checkout or wheel (``src/transformers/models``):
every ``modeling_*.py``, ``configuration_*.py``, ``tokenization_*.py``, ``processing_*.py`` and
``image_processing_*.py`` is scanned by ``RemoteCodeScanner`` alone, as if it were shipped
remote code, with the files of its model folder as the repo around it (helper modules resolve
there). Nothing is imported or run. It prints how many files end at each max severity, and with
``--list SEVERITY`` the findings at that severity or above, one line each, to review.

    python bench/remote_code_fp.py DIR/transformers/models [--list medium] [--json OUT]
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import time
from pathlib import Path

from app.core.findings import Finding, Status
from app.core.formats.blobs import BytesBlob
from app.core.limits import Limits
from app.core.manifest import ManifestFile, RepoIdentity
from app.core.scanners.base import ScanContext
from app.core.scanners.remote_code_scanner import RemoteCodeScanner

PATTERN = re.compile(r"^(modeling|configuration|tokenization|processing|image_processing)_.*\.py$")
ORDER = ("none", "info", "low", "medium", "high", "critical")


def model_files(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*/*.py") if PATTERN.match(p.name))


def scan_one(scanner: RemoteCodeScanner, path: Path) -> tuple[str, list[Finding]]:
    folder = path.parent
    siblings = tuple(ManifestFile(p.name, p.stat().st_size, format="text") for p in sorted(folder.iterdir())
                     if p.is_file())
    data = path.read_bytes()
    ctx = ScanContext(
        file=ManifestFile(path.name, len(data), format="text"), blob=BytesBlob(data), limits=Limits(),
        identity=RepoIdentity(None), all_files=siblings, read_other=lambda rel: (folder / rel).read_bytes(),
    )
    outcome = scanner.scan(ctx)
    if outcome.status is not Status.SCANNED:
        return "scan-failed", list(outcome.findings)
    worst = max((f.severity for f in outcome.findings), key=lambda s: s.rank, default=None)
    return (worst.value if worst else "none"), list(outcome.findings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", type=Path, help="a transformers models/ folder")
    parser.add_argument("--list", choices=ORDER[1:], help="print findings at this severity or above")
    parser.add_argument("--json", type=Path, help="write {file: [max severity, [findings]]} here")
    args = parser.parse_args(argv)
    scanner = RemoteCodeScanner()
    files = model_files(args.models)
    counts: collections.Counter[str] = collections.Counter()
    out: dict[str, object] = {}
    start = time.perf_counter()
    for path in files:
        rel = str(path.relative_to(args.models))
        worst, findings = scan_one(scanner, path)
        counts[worst] += 1
        out[rel] = [worst, [[f.severity.value, f.rule, f.message, f.evidence] for f in findings]]
        if args.list:
            floor = ORDER.index(args.list)
            for f in findings:
                if ORDER.index(f.severity.value) >= floor:
                    print(f"{f.severity.value:8} {rel}: {f.message} [{f.evidence}]")
    elapsed = time.perf_counter() - start
    print(f"{len(files)} files in {elapsed:.1f} s; files by max severity:")
    for level in (*reversed(ORDER), "scan-failed"):
        if counts[level]:
            print(f"  {level:12} {counts[level]}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, sort_keys=True), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
