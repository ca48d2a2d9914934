"""Pieces of bench/hub_endpoint.py: the big approved repo on a fixture hub, child processes, an RSS sampler."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

from app.cli.child_server import free_port, stop
from app.examples.safetensors_writer import TensorSpec, encode_header

ROOT = Path(__file__).resolve().parents[1]
MIB = 1 << 20
TENSOR_BYTES = 64 * MIB
ROW_BYTES = 8192 * 2  # BF16 rows of 8,192
FILE = "model.safetensors"
SAMPLE_SECONDS = 0.05


# ---------------------------------------------------------------- the repo


@dataclass(frozen=True)
class BigRepo:
    repo: str
    data_bytes: int
    file_bytes: int
    sha256: str
    sha: str = ""  # the approved commit, once vetted


def parse_size(text: str) -> int:
    """``2GiB``, ``512MiB``, ``1.5GiB`` or plain bytes; a whole number of MiB (the tensors' row size divides it)."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*(gib|gb|g|mib|mb|m|)\s*", text.lower())
    if match is None:
        raise ValueError(f"{text!r}: a size like 512MiB or 2GiB")
    unit = {"g": 1 << 30, "m": MIB, "": 1}[match[2][:1]]
    value = int(float(match[1]) * unit)
    if value <= 0 or value % MIB:
        raise ValueError(f"{text!r}: a positive whole number of MiB, e.g. 512MiB or 2GiB")
    return value


def tensors(data_bytes: int) -> list[TensorSpec]:
    """BF16 tensors of at most 64 MiB that cover ``data_bytes`` exactly."""
    specs, left, index = [], data_bytes, 0
    while left:
        size = min(TENSOR_BYTES, left)
        specs.append(TensorSpec(f"model.layers.{index}.mlp.down_proj.weight", "BF16", (size // ROW_BYTES, 8192)))
        left, index = left - size, index + 1
    return specs


def write_safetensors(path: Path, data_bytes: int, seed: int = 28) -> str:
    """The file, written fast: one pseudo-random MiB, its first 8 bytes a counter per MiB; its sha256."""
    header = encode_header(tensors(data_bytes), {"format": "pt"})
    digest = hashlib.sha256()
    block = bytearray(random.Random(seed).randbytes(MIB))
    with path.open("wb") as out:
        for part in (len(header).to_bytes(8, "little"), header):
            out.write(part)
            digest.update(part)
        for counter in range(data_bytes // MIB):
            block[:8] = counter.to_bytes(8, "little")
            out.write(block)
            digest.update(block)
    return digest.hexdigest()


def build_repo(hub_root: Path, data_bytes: int) -> BigRepo:
    """``nvidia/Bench-Endpoint-<MiB>m`` under ``hub_root``; reused while its spec file matches."""
    name = f"Bench-Endpoint-{data_bytes // MIB}m"
    folder = hub_root / "nvidia" / name
    spec_file = folder.parent / f"{name}.spec.json"
    target = folder / FILE
    if spec_file.is_file() and target.is_file():
        spec = json.loads(spec_file.read_text())
        if spec.get("data_bytes") == data_bytes and spec.get("file_bytes") == target.stat().st_size:
            return BigRepo(f"nvidia/{name}", data_bytes, spec["file_bytes"], spec["sha256"])
    folder.mkdir(parents=True, exist_ok=True)
    sha256 = write_safetensors(target, data_bytes)
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "torch_dtype": "bfloat16"}
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    (folder / ".hub.json").write_text(json.dumps({"sha256": {FILE: sha256}}, indent=2) + "\n")
    file_bytes = target.stat().st_size
    spec_file.write_text(json.dumps({"data_bytes": data_bytes, "file_bytes": file_bytes, "sha256": sha256}))
    return BigRepo(f"nvidia/{name}", data_bytes, file_bytes, sha256)


# ---------------------------------------------------------------- processes


@dataclass(frozen=True)
class Proc:
    url: str
    pid: int


def _wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{url}: exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2):  # noqa: S310 - loopback only
                return
        except OSError as exc:
            if getattr(exc, "code", None):  # an HTTP error status: it answers
                return
            time.sleep(0.1)
    raise SystemExit(f"{url}: no answer within {timeout:g}s:\n{log.read_text()[-2000:]}")


@contextmanager
def process(args: list[str], env: dict[str, str], log: Path, ready_path: str) -> Iterator[Proc]:
    """``python -m app ARGS --port P`` of this checkout; stopped (SIGTERM, then kill) when the block ends."""
    port = free_port()
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "app", *args, "--port", str(port)], cwd=ROOT,
                                env={**os.environ, "PYTHONPATH": str(ROOT), **env}, stdout=out,
                                stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url + ready_path, proc, log)
        yield Proc(url, proc.pid)
    finally:
        stop(proc)


def vet(repo: BigRepo, hub: str, store_url: str) -> BigRepo:
    """``hfvet vet`` through the fixture hub; the verdict must be approve."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_ENDPOINT": hub, "HFVET_DATABASE_URL": store_url}
    done = subprocess.run([sys.executable, "-m", "app", "vet", repo.repo, "--policy", "default", "--format", "json"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    report = json.loads(done.stdout) if done.stdout.strip().startswith("{") else {}
    verdict = report.get("verdict")
    if verdict != "approve":
        raise SystemExit(f"vetting {repo.repo}: verdict {verdict!r} (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return BigRepo(repo.repo, repo.data_bytes, repo.file_bytes, repo.sha256, report["revision"])


# ---------------------------------------------------------------- memory


class RssSampler:
    """The peak RSS of one process, sampled every 50 ms on a thread while the block runs."""

    def __init__(self, pid: int) -> None:
        self._process = psutil.Process(pid)
        self._stop = threading.Event()
        self.peak = 0
        self.samples = 0

    def rss(self) -> int:
        return int(self._process.memory_info().rss)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.rss())
            self.samples += 1
            self._stop.wait(SAMPLE_SECONDS)

    @contextmanager
    def sampling(self) -> Iterator[None]:
        thread = threading.Thread(target=self._run, daemon=True)
        thread.start()
        try:
            yield
        finally:
            self._stop.set()
            thread.join()
            self.peak = max(self.peak, self.rss())
