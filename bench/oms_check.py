"""Issue 29: a vendor's OMS signature checked by hfvet before download vs model_signing's verify after one.

    python bench/oms_check.py [--shards 2] [--shard-size 512MiB] [--rounds 5] [--no-download] [--out FILE]

A repo `nvidia/Bench-OMS` of config, generation config, card, tokenizer, a safetensors index and ``--shards``
sparse safetensors shards (a real header, the data a hole made by truncate: no disk blocks) is written once
into a tmp dir, signed there with model_signing's elliptic-key signer (a P-256 key made in the tmp dir), and
hard-linked into a fixture hub root with the shards' sha256 declared in `.hub.json` (hashed once here). The
hub runs in this process behind bench/counting_hub.py, which counts the file bytes it sends per path.

Each round runs every path once, in an order rotated per round (interleaved):
  hfvet check    `HubSource.open` + listing + `check_source` with the key the policy lists: the vet's
                 signature step (app/core/signature_step.py), as tests/integration/hub/test_vendor_signatures.py
                 drives it
  hfvet vet      `vet_remote` (what `hfvet vet` runs) under default.yaml + a `signatures` entry requiring the
                 key: listing, signature, every scanner, the decision (checked: approve, signature verified)
  model_signing  `verifying.Config().use_elliptic_key_verifier(public_key=...).verify(dir, sig)` over the
                 signed directory as a download leaves it (bytes read: this process's /proc/self/io rchar)
  download       `snapshot_download(local_dir=<fresh>)` from the same hub (deleted after; --no-download skips)
Bytes are exact and the same every round (checked); times are medians over the rounds.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml
from benchlib import emit, human_bytes, machine_info, make_parser, median, table
from counting_hub import ByteCounter, counting_hub
from endpoint_fixture import MIB, parse_size

from app.examples.safetensors_writer import TensorSpec, write_safetensors

ROOT = Path(__file__).resolve().parents[1]
REPO = "nvidia/Bench-OMS"
SIGNATURE = "model.sig"
TENSOR_BYTES = 64 * MIB
ROW_BYTES = 8192 * 2  # BF16 rows of 8,192
PATHS = ("hfvet check", "hfvet vet", "model_signing verify", "download")


@dataclass(frozen=True)
class Built:
    model_dir: Path  # the signed files, as a download leaves them
    hub_root: Path
    public_key: Path
    public_pem: str
    sizes: dict[str, int]  # every file of the repo, the signature included
    shards: tuple[str, ...]
    sign_seconds: float
    declare_seconds: float


@dataclass
class Result:
    seconds: list[float] = field(default_factory=list)
    file_bytes: list[int] = field(default_factory=list)  # file bodies the hub sent (rchar for model_signing)
    api_bytes: list[int] = field(default_factory=list)  # other response bodies (listing JSON)
    per_file: Counter[str] = field(default_factory=Counter)  # of the first round


def shard_tensors(shard: int, data_bytes: int) -> list[TensorSpec]:
    """BF16 tensors of at most 64 MiB covering ``data_bytes`` (a whole number of 16 KiB rows), named per shard."""
    specs, left, index = [], data_bytes, 0
    while left:
        size = min(TENSOR_BYTES, left)
        specs.append(TensorSpec(f"model.layers.{shard}.{index}.mlp.down_proj.weight", "BF16",
                                (size // ROW_BYTES, 8192)))
        left, index = left - size, index + 1
    return specs


def write_model(folder: Path, shards: int, shard_bytes: int) -> tuple[str, ...]:
    """The repo's files in ``folder``; the names of its shards."""
    folder.mkdir(parents=True)
    names = tuple(f"model-{i + 1:05d}-of-{shards:05d}.safetensors" for i in range(shards))
    weight_map = {}
    for i, name in enumerate(names):
        specs = shard_tensors(i, shard_bytes)
        write_safetensors(folder / name, specs, {"format": "pt"}, sparse=True)
        weight_map |= {spec.name: name for spec in specs}
    index = {"metadata": {"total_size": shards * shard_bytes}, "weight_map": weight_map}
    small = {
        "config.json": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "torch_dtype": "bfloat16"},
        "generation_config.json": {"bos_token_id": 1, "eos_token_id": 2},
        "model.safetensors.index.json": index,
        "tokenizer.json": {"version": "1.0", "model": {"type": "BPE", "vocab": {f"t{i}": i for i in range(2000)}}},
    }
    for path, doc in small.items():
        (folder / path).write_text(json.dumps(doc, indent=2) + "\n")
    (folder / "README.md").write_text("---\nlicense: other\n---\n# Bench-OMS\n\nA signed benchmark model.\n")
    return names


def make_key(where: Path) -> tuple[Path, Path, str]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    where.mkdir(parents=True)
    key = ec.generate_private_key(ec.SECP256R1())
    private, public = where / "vendor.key", where / "vendor.pub"
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    public.write_bytes(pem)
    return private, public, pem.decode()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(8 * MIB):
            digest.update(chunk)
    return digest.hexdigest()


def build(tmp: Path, shards: int, shard_bytes: int) -> Built:
    """Write, sign, and publish on a hub root (hard links: the shards stay holes, on disk once)."""
    import model_signing

    model_dir = tmp / "model"
    names = write_model(model_dir, shards, shard_bytes)
    private, public, pem = make_key(tmp / "keys")
    began = time.perf_counter()
    # As `model_signing sign key DIR --signature DIR/model.sig` does: the signature file is an ignored path.
    hashing = model_signing.hashing.Config().set_ignored_paths(paths=[Path(SIGNATURE)])
    (model_signing.signing.Config().use_elliptic_key_signer(private_key=private).set_hashing_config(hashing)
     .sign(model_dir, model_dir / SIGNATURE))
    sign_seconds = time.perf_counter() - began
    published = tmp / "hub" / REPO
    published.mkdir(parents=True)
    for path in model_dir.iterdir():
        os.link(path, published / path.name)
    began = time.perf_counter()
    declared = {name: sha256_file(model_dir / name) for name in names}
    declare_seconds = time.perf_counter() - began
    (published / ".hub.json").write_text(json.dumps({"sha256": declared}, indent=2) + "\n")
    sizes = {p.name: p.stat().st_size for p in sorted(model_dir.iterdir())}
    return Built(model_dir, tmp / "hub", public, pem, sizes, names, sign_seconds, declare_seconds)


def requiring_policy(path: Path, public_pem: str) -> Path:
    """default.yaml with a `signatures` entry: vendor-official repos must be signed by the bench's key."""
    policy = yaml.safe_load((ROOT / "policies/default.yaml").read_text())
    policy["signatures"] = [{"tier": "vendor-official", "signed_by": [{"key": public_pem}]}]
    path.write_text(yaml.safe_dump(policy))
    return path


def rchar() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise RuntimeError("no rchar in /proc/self/io")


# ---------------------------------------------------------------- the paths, each returning (file bytes, api bytes)


def hfvet_check(url: str, counter: ByteCounter, policy: Path) -> tuple[Counter[str], int]:
    from app.core.policy import load_policy
    from app.core.policy.signatures import requirement_for
    from app.core.signature_step import check_source
    from app.settings import Settings
    from app.sources.hub import HubClient, HubSource

    requirement = requirement_for(load_policy(policy).model, "nvidia", "vendor-official")
    assert requirement is not None
    source = HubSource.open(REPO, "main", hub=HubClient.from_settings(Settings(HF_ENDPOINT=url)))
    check = check_source(source, source.manifest(), SIGNATURE, requirement.identities())
    assert check.verified, check.problem
    counts = counter.take()
    assert check.bytes_read == counts.file_bytes, (check.bytes_read, counts.file_bytes)
    return counts.per_file, counts.body_bytes - counts.file_bytes


def hfvet_vet(url: str, counter: ByteCounter, policy: Path) -> tuple[Counter[str], int]:
    from app.services.vetting import vet_remote
    from app.settings import Settings

    report = vet_remote(REPO, settings=Settings(HF_ENDPOINT=url), policy_path=policy)
    reasons = {r.rule: r.message for r in report.decision.reasons}
    assert report.verdict.value == "approve", reasons
    assert report.signature is not None and report.signature.state == "verified", report.signature
    counts = counter.take()
    return counts.per_file, counts.body_bytes - counts.file_bytes


def oms_verify(built: Built) -> tuple[Counter[str], int]:
    import model_signing

    before = rchar()
    (model_signing.verifying.Config().use_elliptic_key_verifier(public_key=built.public_key)
     .verify(built.model_dir, built.model_dir / SIGNATURE))
    return Counter({"(whole directory, rchar)": rchar() - before}), 0


def download(url: str, counter: ByteCounter, tmp: Path) -> tuple[Counter[str], int]:
    from huggingface_hub import snapshot_download

    target = tmp / "download"
    try:
        snapshot_download(REPO, endpoint=url, local_dir=target)
        got = sum(p.stat().st_size for p in target.rglob("*") if p.is_file() and ".cache" not in p.parts)
    finally:
        shutil.rmtree(target, ignore_errors=True)
    counts = counter.take()
    assert counts.file_bytes == got, (counts.file_bytes, got)
    return counts.per_file, counts.body_bytes - counts.file_bytes


def timed(fn: Callable[[], tuple[Counter[str], int]], result: Result) -> None:
    gc.collect()
    began = time.perf_counter()
    per_file, api = fn()
    result.seconds.append(time.perf_counter() - began)
    result.file_bytes.append(sum(per_file.values()))
    result.api_bytes.append(api)
    if len(result.seconds) == 1:
        result.per_file = per_file


def rotated(paths: tuple[str, ...], round_index: int) -> tuple[str, ...]:
    shift = round_index % len(paths)
    return paths[shift:] + paths[:shift]


def run(built: Built, policy: Path, tmp: Path, rounds: int, paths: tuple[str, ...]) -> dict[str, Result]:
    results = {path: Result() for path in paths}
    with counting_hub(built.hub_root) as (url, counter):
        calls: dict[str, Callable[[], tuple[Counter[str], int]]] = {
            "hfvet check": lambda: hfvet_check(url, counter, policy),
            "hfvet vet": lambda: hfvet_vet(url, counter, policy),
            "model_signing verify": lambda: oms_verify(built),
            "download": lambda: download(url, counter, tmp),
        }
        for name in paths:  # warm-up: the lazy imports, once, as any process pays them
            calls[name]()
        counter.take()
        for index in range(rounds):
            for name in rotated(paths, index):
                timed(calls[name], results[name])
                print(f"round {index + 1} {name}: {results[name].seconds[-1]:.3f} s", file=sys.stderr)
    for name, result in results.items():
        if name != "model_signing verify":  # rchar counts this process's reads, which may include stray ones
            assert len(set(result.file_bytes)) == 1, (name, result.file_bytes)
    return results


# ---------------------------------------------------------------- the report


def _spread(values: list[float]) -> str:
    return f"{min(values):.3f}-{max(values):.3f}"


def _weights(built: Built, per_file: Counter[str]) -> int:
    return sum(per_file.get(name, 0) for name in built.shards)


def report(built: Built, results: dict[str, Result], rounds: int) -> str:
    total = sum(built.sizes.values())
    base = median(results["hfvet check"].seconds)
    rows = []
    for name, result in results.items():
        seconds, moved = median(result.seconds), median(result.file_bytes)
        weights = "n/a" if name == "model_signing verify" else human_bytes(_weights(built, result.per_file))
        rows.append([name, human_bytes(moved), weights, human_bytes(median(result.api_bytes)),
                     f"{100 * moved / total:.4g}%" if moved is not None else "n/a",
                     f"{seconds:.3f}" if seconds is not None else "n/a", _spread(result.seconds),
                     f"{seconds / base:,.1f}x" if seconds and base else "n/a"])
    if "download" in results:  # what the peer pays before it knows: both, summed per round
        both = [d + v for d, v in zip(results["download"].seconds, results["model_signing verify"].seconds,
                                      strict=True)]
        rows.append(["download, then model_signing verify", "", "", "", "", f"{median(both):.3f}", _spread(both),
                     f"{median(both) / base:,.1f}x" if base else "n/a"])
    check_files = results["hfvet check"].per_file
    lines = [
        f"Repo {REPO}: {len(built.sizes)} files, {human_bytes(total)} ({total:,} bytes), of which "
        f"{len(built.shards)} sparse shards of {human_bytes(built.sizes[built.shards[0]])}; signed by model_signing "
        f"in {built.sign_seconds:.2f} s; declared sha256 hashed once in {built.declare_seconds:.2f} s.",
        f"{rounds} rounds, interleaved (order rotated per round); medians.",
        "",
        machine_info(["model-signing", "huggingface-hub", "cryptography"]),
        "",
        table(["path", "file bytes read", "of which weights", "API JSON", "of the repo's bytes", "median (s)",
               "min-max (s)", "vs hfvet check"], rows),
        "",
        "hfvet check, file bytes per path: " + ", ".join(f"`{p}` {n:,}" for p, n in sorted(check_files.items())),
        "model_signing hashes every file but the signature: "
        f"{sum(n for p, n in built.sizes.items() if p != SIGNATURE):,} bytes.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--shard-size", type=parse_size, default=512 * MIB, help="data bytes per shard (512MiB)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-download", action="store_true", help="leave the download path out")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    paths = PATHS[:-1] if args.no_download else PATHS
    with tempfile.TemporaryDirectory(prefix="oms-bench-") as tmp_name:
        tmp = Path(tmp_name)
        built = build(tmp, args.shards, args.shard_size)
        policy = requiring_policy(tmp / "signed.yaml", built.public_pem)
        results = run(built, policy, tmp, args.rounds, paths)
        emit(report(built, results, args.rounds), args.out)


if __name__ == "__main__":
    main()
