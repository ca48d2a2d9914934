"""Issue 13 items 1 and 3: `hfvet scan` with the peers skipped on clean walks (HFVET_PEERS=auto) and always
run (HFVET_PEERS=always), beside `picklescan -p`, on a big pickle and a 45,000-member torch zip; issue 22
item 9: also a pickle of lists of floats and None (`pickle.dumps` of a 1,000 x 1,000 table).

    python bench/bench_peers.py [--reps 3] [--tensors 45000] [--floats 1000000] [--samples NAME,...]
                                [--before CHECKOUT] [--out FILE]

Each run is a fresh process; the tools alternate within each repetition (the machine is shared:
compare medians and CPU seconds). CPU seconds and peak RSS are the child's own (``os.wait4``).
``--before`` adds hfvet from another checkout (say, a worktree of the commit before issue 13) to the
same alternation; HFVET_PEERS means nothing there.
Samples are benign and generated on first use under $TMPDIR/hfvet-bench/peers.
"""

from __future__ import annotations

import os
import pickle
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchlib import emit, machine_info, make_parser, median, table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.examples.pickles import state_dict_pickle  # noqa: E402
from app.examples.synthetic_pickle import sized_tensors  # noqa: E402
from app.examples.torchfiles import write_torch_zip  # noqa: E402

GB = 10**9


@dataclass(frozen=True)
class Measured:
    code: int
    wall: float
    cpu: float
    rss_mib: float


def samples(folder: Path, tensors: int, floats: int, wanted: list[str]) -> dict[str, Path]:
    """The big plain pickle (a state dict), a sparse torch zip with one storage member per tensor and a
    pickle of lists of floats and None; only those named in ``wanted``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"big pickle": folder / f"big-{tensors}.pkl", "torch zip": folder / f"torch-{tensors}.bin",
             "float lists": folder / f"floats-{floats}.pkl"}
    unknown = set(wanted) - set(paths)
    if unknown:
        raise SystemExit(f"unknown samples: {sorted(unknown)} (known: {sorted(paths)})")
    writers = {
        "big pickle": lambda path: path.write_bytes(state_dict_pickle(sized_tensors(tensors, GB))),
        "torch zip": lambda path: write_torch_zip(path, sized_tensors(tensors, GB), sparse=True),
        "float lists": lambda path: path.write_bytes(float_lists_pickle(floats)),
    }
    for name in wanted:
        if not paths[name].is_file():
            writers[name](paths[name])
    return {name: paths[name] for name in wanted}


def float_lists_pickle(count: int, width: int = 1000) -> bytes:
    """``count`` values in rows of ``width``: random floats, every fifth one None (protocol 4, framed)."""
    rng = random.Random(22)
    rows = [[rng.random() if (i + j) % 5 else None for j in range(width)] for i in range(max(1, count // width))]
    return pickle.dumps(rows, protocol=4)  # writing a sample; nothing is ever unpickled


def measure(command: list[str], env: dict[str, str], cwd: Path) -> Measured:
    started = time.perf_counter()
    proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)  # reaped here, so the child's own CPU and RSS are known
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Measured(proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


Tool = tuple[list[str], dict[str, str], Path]  # command, environment, working directory


def tools(before: Path | None) -> dict[str, Tool]:
    python = sys.executable
    base = {k: v for k, v in os.environ.items() if k not in ("HFVET_PEERS", "PYTHONPATH")}
    scan = [python, "-m", "app", "scan", "{file}", "--policy", "interim", "-f", "json"]
    here = base | {"PYTHONPATH": str(ROOT)}
    found: dict[str, Tool] = {
        "hfvet, peers auto": (scan, here | {"HFVET_PEERS": "auto"}, ROOT),
        "hfvet, peers always": (scan, here | {"HFVET_PEERS": "always"}, ROOT),
        "picklescan -p": ([str(Path(python).with_name("picklescan")), "-p", "{file}"], base, ROOT),
    }
    if before is not None:  # `python -m` imports from the working directory first
        found["hfvet before"] = (scan, base | {"PYTHONPATH": str(before)}, before)
    return found


def main() -> int:
    parser = make_parser(__doc__)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--tensors", type=int, default=45_000, help="tensors in each sample")
    parser.add_argument("--floats", type=int, default=1_000_000, help="values in the float-lists sample")
    parser.add_argument("--samples", default="big pickle,torch zip,float lists", help="comma-separated")
    parser.add_argument("--before", type=Path, help="also run hfvet from this checkout")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    files = samples(Path(tempfile.gettempdir()) / "hfvet-bench" / "peers", args.tensors, args.floats,
                    [name.strip() for name in args.samples.split(",") if name.strip()])
    runs: dict[tuple[str, str], list[Measured]] = {}
    for rep in range(args.reps):
        for sample, path in files.items():
            order = list(tools(args.before).items())
            for name, (command, env, cwd) in order[rep % len(order):] + order[: rep % len(order)]:
                filled = [part.replace("{file}", str(path)) for part in command]
                runs.setdefault((sample, name), []).append(measure(filled, env, cwd))
    emit(render(args, files, runs), args.out)
    return 0


def _median(values: list[float]) -> float:
    return float(median(values) or 0.0)


def render(args: object, files: dict[str, Path], runs: dict[tuple[str, str], list[Measured]]) -> str:
    rows = []
    for sample, path in files.items():
        base = runs[(sample, "picklescan -p")]
        base_wall, base_cpu = _median([m.wall for m in base]), _median([m.cpu for m in base])
        for (s, name), measured in runs.items():
            if s != sample:
                continue
            wall, cpu = _median([m.wall for m in measured]), _median([m.cpu for m in measured])
            codes = sorted({m.code for m in measured})
            rows.append([f"{sample} ({path.stat().st_size / 1e6:,.1f} MB)", name, f"{wall:.2f}", f"{cpu:.2f}",
                         f"{_median([m.rss_mib for m in measured]):.0f}", f"{wall / base_wall:.2f}x",
                         f"{cpu / base_cpu:.2f}x", ",".join(map(str, codes))])
    headers = ["sample", "tool", "wall s (median)", "CPU s (median)", "peak RSS MiB", "wall vs picklescan",
               "CPU vs picklescan", "exit"]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return "\n".join([
        machine_info(["picklescan", "modelscan"]),
        f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average at the end: {load}",
        "",
        table(headers, rows),
    ])


if __name__ == "__main__":
    sys.exit(main())
