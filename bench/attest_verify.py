"""What verifying a verdict attestation offline costs for a 100-file repo (issue 29; the bar is < 50 ms).

    python bench/attest_verify.py [--files 100] [--runs 25]

A 100-file verdict is stored in a SQLite store of its own and signed there (app.db.attestations, as a vet
stores it), then verified the way `hfvet verify` does, three ways, each the median of --runs:
  1. in process: envelope parse + signature + statement checks + subject check against a dict of 100 digests;
  2. in process, with --files: the same, the digests computed from 100 small files on disk (sha256 + git blob);
  3. a fresh `hfvet verify ... --files DIR` process, from start to exit (imports included).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.manifest import ManifestFile
from app.core.provenance.envelope import load_public
from app.core.provenance.verify import Expect, verify
from app.core.report import FileReport, Report, Stats
from app.core.verdict import Decision, PolicyRef, Verdict
from app.db.attestations import attest_report
from app.db.repository import save_report
from app.services.attested import directory_digests
from app.services.downloads import blob_id_of, sha256_of
from app.services.signing_keys import create_key, load_signing_key
from app.services.store import open_store
from app.settings import Settings

SHA = "4f904d" + "0" * 34
REPO = "nvidia/Bench-100"


def write_files(root: Path, count: int) -> list[ManifestFile]:
    files = []
    for i in range(count):
        path = root / f"shard-{i:03d}.bin"
        path.write_bytes(os.urandom(4096))
        files.append(ManifestFile(path.name, 4096, sha256_of(path) if i % 2 else None, blob_id_of(path)))
    return files


def stored_envelope(tmp: Path, files: list[ManifestFile]) -> str:
    key = load_signing_key(create_key(tmp / "keys").private)
    report = Report(repo=REPO, revision=SHA, decision=Decision(Verdict.APPROVE, (), PolicyRef("default", "c" * 64)),
                    findings=(), files=tuple(FileReport(f.path, f.size, f.sha256, f.blob_id, "unknown", True)
                                             for f in files),
                    stats=Stats(len(files), 4096 * len(files), 0, 0.0), scanners={"hfvet": "1"})
    store = open_store(Settings(database_url=f"sqlite:///{tmp / 'store.db'}"))
    with store.session() as session:
        made = attest_report(session, save_report(session, report, requested_revision=SHA, actor="bench"), key)
    assert made is not None
    return made.envelope


def median_ms(fn: object, runs: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--runs", type=int, default=25)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "model").mkdir()
        files = write_files(tmp / "model", args.files)
        envelope = stored_envelope(tmp, files)
        public = load_public((tmp / "keys" / "hfvet-attestation.pub").read_bytes())
        digests = {f.path: ({"sha256": f.sha256} if f.sha256 else {"gitBlob": f.blob_id or ""}) for f in files}
        expect = Expect(repo=REPO, revision=SHA, files=digests, require_approve=True)
        (tmp / "envelope.json").write_text(envelope)
        rows = [
            ("in process, subjects vs a dict of digests", lambda: verify(envelope, public, expect)),
            ("in process, --files over the files on disk", lambda: verify(envelope, public, Expect(
                repo=REPO, revision=SHA, files=directory_digests(tmp / "model"), require_approve=True))),
            ("`hfvet verify --files` process, start to exit", lambda: subprocess.run(
                [sys.executable, "-m", "app", "verify", str(tmp / "envelope.json"), "--key",
                 str(tmp / "keys" / "hfvet-attestation.pub"), "--files", str(tmp / "model")],
                check=True, capture_output=True)),
        ]
        verify(envelope, public, expect)  # the lazy imports once, as a process would before its first
        print(f"{args.files} files, envelope {len(envelope)} bytes, {args.runs} runs each")
        print("| verify | median (ms) | min-max (ms) |\n|---|---|---|")
        for label, fn in rows:
            median, times = median_ms(fn, args.runs)
            print(f"| {label} | {median:.2f} | {min(times):.2f}-{max(times):.2f} |")


if __name__ == "__main__":
    main()
