"""Issue 5 benchmark: remote `hfvet vet` through the fixture hub, bytes moved vs the minimum.

    python bench/bench_hub.py [--root $TMPDIR/hfvet-bench/hub] [--reps 3] [--scales 1,0.1]
                              [--pickle-gb 4] [--skip-side-by-side] [--env KEY=VALUE ...] [--out FILE]

1. Generates DeepSeek-V4-Flash-shaped repos (gen_deepseek_repo.py) at each scale under ROOT,
   serves ROOT with the fixture hub (app.hubfixture) behind a byte counter, and runs
   `hfvet vet ORG/NAME --format json` R times with HF_ENDPOINT set. Reports the bytes the hub
   sent (every response body), hfvet's own `stats.bytes_read`, both against the minimum a vet
   needs (ROOT/<org>/<name>.minimum.json) and the repo size, and wall time.
2. Side by side on a ~4 GB pickle-format repo, one run each: hfvet remote vet vs
   `snapshot_download` from the same hub followed by picklescan, or by modelscan, on the copy.

Each hfvet run gets a fresh HF_HOME and working directory, so nothing one run writes is seen by
the next; pass `--env KEY=VALUE` for other settings. Failures are reported, never raised.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchlib import (
    Run,
    emit,
    human_bytes,
    machine_info,
    make_parser,
    median,
    parse_json,
    ratio,
    run_measured,
    run_plain,
    table,
)
from counting_hub import ByteCounter, Counts, counting_hub
from gen_deepseek_repo import generate

from app.examples.minimum import minimum_report
from app.examples.synthetic_deepseek import DeepseekRepoSpec
from app.examples.synthetic_pickle import GB, PickleRepoSpec, ensure_pickle_repo

DEFAULT_ROOT = Path(tempfile.gettempdir()) / "hfvet-bench" / "hub"
PICKLE_REPO = "bench/Pickle-Checkpoint"
VET_OK = {0, 1, 3}
DOWNLOAD = ("import sys; from huggingface_hub import snapshot_download; "
            "snapshot_download(sys.argv[1], local_dir=sys.argv[2])")


@dataclass
class VetRun:
    run: Run
    served: Counts

    @property
    def report(self) -> dict[str, Any] | None:
        return parse_json(self.run.stdout)

    @property
    def bytes_read(self) -> int | None:
        report = self.report
        return report.get("stats", {}).get("bytes_read") if report else None

    @property
    def result(self) -> str:
        report = self.report
        if report and self.run.ok:
            return f"{report.get('verdict')} ({len(report.get('findings', []))} findings)"
        return f"FAILED (exit {self.run.exit_code}): {self.run.stderr.strip()[-300:]!r}"


def client_env(url: str, work: Path, extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"HF_ENDPOINT": url, "HF_HOME": str(work / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1",
                "HF_HUB_DISABLE_PROGRESS_BARS": "1"})
    env.update(extra)
    return env


def vet_once(repo_id: str, url: str, counter: ByteCounter, extra: dict[str, str]) -> VetRun:
    with tempfile.TemporaryDirectory(prefix="hfvet-bench-") as tmp:
        work = Path(tmp)
        counter.take()
        run = run_measured("hfvet", ["vet", repo_id, "--format", "json"], ok_codes=VET_OK,
                           env=client_env(url, work, extra), cwd=work)
        return VetRun(run, counter.take())


def deepseek_rows(minimums: dict[str, dict[str, Any]], runs: dict[str, list[VetRun]]) -> list[list[str]]:
    rows = []
    for repo_id, vets in runs.items():
        m = minimums[repo_id]
        good = [v for v in vets if v.run.ok]
        served = median([v.served.body_bytes for v in good])
        rows.append([
            f"`{repo_id}`", str(len(m["files"])),
            human_bytes(m["repo_bytes"]), human_bytes(m["minimum_bytes"]),
            human_bytes(median([v.bytes_read for v in good])), human_bytes(served),
            _percent_over(served, m["minimum_bytes"]), _percent_of(served, m["repo_bytes"]),
            _seconds(median([v.run.wall_seconds for v in good])),
            ", ".join(f"{v.run.wall_seconds:.1f}" for v in vets), "; ".join(sorted({v.result for v in vets})),
        ])
    return rows


def _percent_over(value: float | None, minimum: int) -> str:
    return "n/a" if value is None or not minimum else f"{(value - minimum) / minimum * 100:+.1f}%"


def _percent_of(value: float | None, total: int) -> str:
    return "n/a" if value is None or not total else f"{value / total * 100:.4f}%"


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def side_by_side(root: Path, url: str, counter: ByteCounter, pickle_gb: float,
                 extra: dict[str, str]) -> tuple[str, list[list[str]]]:
    spec = PickleRepoSpec(zip_files=2, zip_bytes=int(pickle_gb * 0.375 * GB), zip_tensors=1000,
                          legacy_files=1, legacy_bytes=int(pickle_gb * 0.25 * GB), legacy_tensors=500)
    repo = root / PICKLE_REPO
    ensure_pickle_repo(repo, spec, for_hub=True)
    size = minimum_report(PICKLE_REPO, repo)["repo_bytes"]
    vet = vet_once(PICKLE_REPO, url, counter, extra)
    with tempfile.TemporaryDirectory(prefix="hfvet-bench-dl-") as tmp:
        work = Path(tmp)
        target = work / "snapshot"
        counter.take()
        code, dl_seconds, dl_err = run_plain([sys.executable, "-c", DOWNLOAD, PICKLE_REPO, str(target)],
                                             env=client_env(url, work, extra))
        dl_bytes = counter.take().body_bytes
        peers = [
            run_measured("picklescan", ["-p", str(target)], ok_codes={0, 1}),
            run_measured("modelscan", ["-p", str(target), "-r", "json"], ok_codes={0, 1}),
        ]
        shutil.rmtree(target, ignore_errors=True)
    base_time, base_bytes = vet.run.wall_seconds, vet.served.body_bytes
    rows = [["hfvet vet (remote, range reads)", human_bytes(base_bytes), human_bytes(vet.run.rchar),
             _seconds(base_time), vet.result, "1.0x", "1.0x"]]
    dl_note = "ok" if code == 0 else f"download FAILED (exit {code}): {dl_err.strip()[-300:]!r}"
    for peer in peers:
        total = dl_seconds + peer.wall_seconds
        result = f"{dl_note}; {peer.tool} exit {peer.exit_code}" + ("" if peer.ok else " (FAILED)")
        rows.append([f"snapshot_download + {peer.tool}", human_bytes(dl_bytes), human_bytes(peer.rchar),
                     f"{total:.2f} ({dl_seconds:.2f} + {peer.wall_seconds:.2f})", result,
                     ratio(total, base_time), ratio(dl_bytes, base_bytes)])
    return f"`{PICKLE_REPO}` ({human_bytes(size)}, 2 PyTorch zip + 1 legacy torch file)", rows


def parse_env(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--env expects KEY=VALUE, got {pair!r}")
        env[key] = value
    return env


def main() -> int:
    parser = make_parser(__doc__)
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="fixture hub root")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--scales", default="1,0.1", help="comma-separated --scale values")
    parser.add_argument("--pickle-gb", type=float, default=4.0, help="size of the side-by-side repo")
    parser.add_argument("--skip-side-by-side", action="store_true")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    extra = parse_env(args.env)

    minimums: dict[str, dict[str, Any]] = {}
    for scale in (float(s) for s in args.scales.split(",")):
        repo_id = f"bench/DeepSeek-V4-Flash-NVFP4-x{scale:g}"
        minimums[repo_id] = dict(generate(args.root, repo_id, DeepseekRepoSpec(scale=scale)))
    runs: dict[str, list[VetRun]] = {repo_id: [] for repo_id in minimums}
    with counting_hub(args.root) as (url, counter):
        for rep in range(args.reps):
            for repo_id in minimums:
                vet = vet_once(repo_id, url, counter, extra)
                runs[repo_id].append(vet)
                served = human_bytes(vet.served.body_bytes)
                print(f"rep {rep + 1}/{args.reps} {repo_id}: exit {vet.run.exit_code},"
                      f" {vet.run.wall_seconds:.1f}s, served {served}", file=sys.stderr)
        pair = None
        if not args.skip_side_by_side:
            pair = side_by_side(args.root, url, counter, args.pickle_gb, extra)
    emit(render(args, minimums, runs, pair), args.out)
    return 0


def render(args: Any, minimums: dict[str, dict[str, Any]], runs: dict[str, list[VetRun]],
           pair: tuple[str, list[list[str]]] | None) -> str:
    headers = ["repo", "files", "repo bytes", "minimum", "hfvet stats.bytes_read", "hub sent (all bodies)",
               "sent vs minimum", "sent / repo", "median wall (s)", "runs (s)", "result"]
    lines = [
        "## Remote vet benchmark: hfvet vet through the fixture hub",
        "",
        machine_info(["hfvet", "huggingface_hub", "picklescan", "modelscan"]),
        f"- hub root: `{args.root}`; repetitions: {args.reps}; medians over successful runs",
        "- minimum: safetensors 8 + header, torch zip end records + central directory + pickle and"
        " version members, legacy torch leading pickles, other files whole",
        "",
        table(headers, deepseek_rows(minimums, runs)),
    ]
    if pair is not None:
        title, rows = pair
        lines += [
            "",
            f"### Side by side on {title}, one run each",
            "",
            table(["approach", "bytes over HTTP (hub sent)", "bytes read locally (rchar)", "wall (s)",
                   "result", "time vs hfvet", "bytes vs hfvet"], rows),
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
