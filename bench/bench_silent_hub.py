"""Issue 25 item 6: how long `hfvet vet` WITHOUT `--timeout` takes to fail against a silent hub.

    python bench/bench_silent_hub.py [--reps 3] [--src TREE ...] [--modes tree,range,info,none] [--out FILE]

Serves the hub tests' fixture root (tests/integration/hub/hubdata.py) on a loopback port behind a
hub that accepts some requests and never answers them: the tree listing (`tree`), Range reads of
files (`range`) or model info (`info`); `none` stalls nothing (a whole vet, for scale). Then runs
`python -m app vet acme/tiny --no-store` (no `--timeout`) from each source tree (`--src`, default:
this checkout; e.g. a checkout of main for "before") in fresh processes, alternating trees, and
prints per mode and tree the median wall seconds to exit, the exit codes seen, and the ratio to the
first tree. Each run gets a fresh HF_HOME; no HFVET_ or HF_ variable of this shell reaches it. A run
is cut off after 15 minutes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import emit, machine_info, make_parser, median, ratio, table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.hubfixture import AppServer, create_app  # noqa: E402
from tests.integration.hub.faults import REPO, SilentHub  # noqa: E402
from tests.integration.hub.hubdata import build_root  # noqa: E402

MODES = {"tree": "/tree/", "range": "/resolve/", "info": "/revision/", "none": "/no-such-path/"}
CUT_OFF = 900.0


def run_once(tree: Path, url: str, home: Path) -> tuple[float, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HFVET_", "HUGGING"))}
    env |= {"PYTHONPATH": str(tree), "HF_HOME": str(home), "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_XET": "1"}
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "app", "vet", REPO, "--endpoint", url, "--no-store"],
                              cwd=tree, env=env, capture_output=True, text=True, timeout=CUT_OFF, check=False)
        code = done.returncode
    except subprocess.TimeoutExpired:
        code = -1
    return time.monotonic() - started, code


def measure(root: Path, trees: list[Path], modes: list[str], reps: int, scratch: Path) -> list[list[str]]:
    rows: list[list[str]] = []
    for mode in modes:
        with AppServer(SilentHub(create_app(root), MODES[mode])) as server:
            walls: dict[Path, list[float]] = {t: [] for t in trees}
            codes: dict[Path, set[int]] = {t: set() for t in trees}
            for rep in range(reps):
                for tree in trees:
                    wall, code = run_once(tree, server.url, scratch / f"{mode}-{rep}-{tree.name}")
                    walls[tree].append(wall)
                    codes[tree].add(code)
                    print(f"{mode} {tree} rep {rep + 1}: {wall:.1f}s exit {code}", file=sys.stderr)
        base = median(walls[trees[0]])
        for tree in trees:
            mid = median(walls[tree])
            rows.append([mode, str(tree), f"{mid:.1f}" if mid is not None else "n/a",
                         " ".join(f"{w:.1f}" for w in walls[tree]), ",".join(map(str, sorted(codes[tree]))),
                         ratio(mid, base)])
    return rows


def main() -> int:
    parser = make_parser(__doc__)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--src", type=Path, action="append", default=[])
    parser.add_argument("--modes", default="tree,range")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    trees = [t.resolve() for t in args.src] or [ROOT]
    modes = [m for m in args.modes.split(",") if m]
    with tempfile.TemporaryDirectory(prefix="hfvet-silent-") as scratch:
        root = Path(scratch) / "hub"
        build_root(root)
        rows = measure(root, trees, modes, args.reps, Path(scratch))
    headers = ["stall", "tree", "median s", "runs s", "exit", "vs first"]
    emit(machine_info(["huggingface_hub", "httpx2"]) + "\n\n" + table(headers, rows), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
