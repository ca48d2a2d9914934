"""False positives of the remote-code scanner's load-time rule on real modelling code.

Runs ``RemoteCodeScanner`` (through ``app.core.pipeline.vet`` on a folder) over every
``models/*/{modeling,configuration,tokenization,processing,image_processing}_*.py`` of an unpacked
transformers release, each model folder together (so ``.configuration_x`` helper imports resolve),
and counts files at each max severity. The source is only parsed, never imported.

    python bench/load_time_fp.py /path/to/transformers [--list medium] [--workers 2] [--all]

``/path/to/transformers`` is the package folder (the one holding ``models/``): an unpacked wheel or
``src/transformers`` of a checkout. Prints JSON: severity -> file count, and the files at the
severities named by ``--list`` with their messages. ``--all`` takes every ``*.py`` of the package
(the loader code itself: more dangerous calls, so a harder test of the load-time rule).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from app.core.findings import Severity
from app.core.pipeline import VetOptions, vet
from app.core.scanners.remote_code_scanner import RemoteCodeScanner
from app.sources.local import LocalSource

KINDS = ("modeling", "configuration", "tokenization", "processing", "image_processing")
ORDER = [Severity.INFO, Severity.LOW, Severity.MEDIUM, Severity.HIGH, Severity.CRITICAL]


def model_files(package: Path, everything: bool = False) -> list[Path]:
    if everything:
        return sorted(package.rglob("*.py"))
    found = {p for kind in KINDS for p in (package / "models").glob(f"*/{kind}_*.py")}
    return sorted(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package", type=Path)
    parser.add_argument("--list", nargs="*", default=["medium", "high", "critical"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--all", action="store_true", help="every *.py of the package, not only model files")
    args = parser.parse_args()
    files = model_files(args.package, args.all)
    base = args.package if args.all else args.package / "models"
    if not files:
        print(f"no models/*/<kind>_*.py under {args.package}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for path in files:
            target = root / path.relative_to(base)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        started = time.perf_counter()
        report = vet(LocalSource(root), [RemoteCodeScanner()], options=VetOptions(workers=args.workers))
        seconds = time.perf_counter() - started
    worst: dict[str, Severity] = {str(p.relative_to(base)): Severity.INFO for p in files}
    messages: dict[str, list[str]] = {}
    for finding in report.findings:
        if finding.path not in worst:
            continue
        if finding.severity.rank > worst[finding.path].rank:
            worst[finding.path] = finding.severity
        if finding.severity.rank >= Severity.MEDIUM.rank:
            messages.setdefault(finding.path, []).append(f"{finding.severity.value} {finding.rule}: "
                                                         f"{finding.message} [{finding.evidence}]")
    counts = Counter(s.value for s in worst.values())
    listed = {path: messages.get(path, []) for path, sev in sorted(worst.items()) if sev.value in args.list}
    print(json.dumps({"files": len(files), "seconds": round(seconds, 1),
                      "max_severity": {s.value: counts.get(s.value, 0) for s in ORDER},
                      "listed": listed}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
