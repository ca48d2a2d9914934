"""Shared pieces of the benchmark scripts: measured runs, machine facts, markdown."""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TIMEOUT = 3600.0


@dataclass
class Run:
    tool: str
    command: list[str]
    exit_code: int
    wall_seconds: float
    rchar: int | None  # bytes read through read() during the scan (see measure_io.py)
    read_bytes: int | None
    stdout: str
    stderr: str
    ok: bool
    extra: dict[str, Any] = field(default_factory=dict)


def run_measured(
    tool: str,
    args: Sequence[str],
    *,
    ok_codes: set[int],
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Run:
    """Run console script `tool` under measure_io.py; a failure is a result, never an exception."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "io.json"
        command = [sys.executable, str(HERE / "measure_io.py"), str(report), tool, *args]
        started = time.perf_counter()
        try:
            proc = subprocess.run(command, capture_output=True, text=True, env=dict(env) if env else None,
                                  cwd=cwd, timeout=TIMEOUT, check=False)
            code, out, err = proc.returncode, proc.stdout, proc.stderr
        except (OSError, subprocess.TimeoutExpired) as exc:
            code, out, err = -1, "", f"{type(exc).__name__}: {exc}"
        wall = time.perf_counter() - started
        io = json.loads(report.read_text()) if report.is_file() else {}
    counters = io.get("io", {})
    return Run(tool, [tool, *args], code, wall, counters.get("rchar"), counters.get("read_bytes"),
               out, err + (io.get("error") or ""), code in ok_codes)


def run_plain(command: Sequence[str], *, env: Mapping[str, str] | None = None) -> tuple[int, float, str]:
    started = time.perf_counter()
    try:
        proc = subprocess.run(list(command), capture_output=True, text=True, env=dict(env) if env else None,
                              timeout=TIMEOUT, check=False)
        code, err = proc.returncode, proc.stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        code, err = -1, f"{type(exc).__name__}: {exc}"
    return code, time.perf_counter() - started, err


def parse_json(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def median(values: Sequence[float | int | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def ratio(value: float | None, base: float | None) -> str:
    if value is None or not base:
        return "n/a"
    return f"{value / base:,.1f}x"


def human_bytes(n: float | None) -> str:
    if n is None:
        return "n/a"
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.2f} {unit}"
        n /= 1000
    return f"{n:,.2f} TB"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _ram_gib() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def machine_info(packages: Sequence[str]) -> str:
    versions = ", ".join(f"{p} {_version(p)}" for p in packages)
    return "\n".join([
        f"- machine: nproc {len(os.sched_getaffinity(0))} ({os.cpu_count()} CPUs), {_cpu_model()},"
        f" RAM {_ram_gib()}",
        f"- system: {platform.system()} {platform.release()}, Python {platform.python_version()}",
        f"- versions: {versions}",
        f"- command: `{shlex.join([Path(sys.executable).name, *sys.argv])}`",
    ])


def make_parser(doc: str | None) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)


def emit(markdown: str, out: Path | None) -> None:
    print(markdown)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(markdown + "\n")
        print(f"\n(written to {out})", file=sys.stderr)


def vet_as_vendor_and_third_party(folder: Path, vendor_id: str, third_party_id: str, *, workers: int,
                                  vet_seconds: float) -> tuple[Any, dict[str, Any], float]:
    """Vet a folder once under the default policy, deciding it as ``vendor_id`` and as ``third_party_id``.

    Returns the report (decided as the vendor), the decision per tier (``vendor``, ``third-party``) and the
    wall seconds of the vet. hfvet is imported here, so a bench that only reports stays light.
    """
    import dataclasses

    from app.core.limits import Limits
    from app.core.pipeline import VetOptions, vet
    from app.core.policy.engine import make_decide
    from app.core.scanners import all_scanners
    from app.services.policies import policy_for
    from app.settings import Settings
    from app.sources.local import LocalSource

    policy = policy_for(None, Settings())
    assert policy is not None
    decide_one = make_decide(policy)
    other: dict[str, Any] = {}

    def decide(manifest: Any, findings: Any, files: Any) -> Any:
        third = dataclasses.replace(manifest, identity=dataclasses.replace(manifest.identity, repo_id=third_party_id))
        other["third-party"] = decide_one(third, findings, files)
        return decide_one(manifest, findings, files)

    limits = Limits(max_vet_seconds=vet_seconds)
    began = time.perf_counter()
    report = vet(LocalSource(folder, repo_id=vendor_id, limits=limits), all_scanners(), decide=decide,
                 options=VetOptions(limits=limits, workers=workers))
    return report, {"vendor": report.decision, "third-party": other["third-party"]}, time.perf_counter() - began
