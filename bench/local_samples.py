"""The generated samples of bench/bench_local.py: benign, built under one root, reused while unchanged.

Each sample is a directory `ROOT/<name>/` built once (a spec stamp next to it, see
app/examples/stamp.py); `target` is the file or directory the tools are pointed at. Big tensor
data is a sparse hole; pickles, zip directories and headers are real bytes. Nothing here ever
deserializes anything: counts are taken with `pickletools.genops` and the zip directory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.examples.cards import MIT_LICENSE, NEMOTRON_CARD
from app.examples.code_samples import NEMOTRON_CONFIGURATION, NEMOTRON_MODELING
from app.examples.configs import LLAMA_SPECIAL, generation_config, llama_config, llama_tokenizer_config, tokenizer_json
from app.examples.files import write_json, write_text
from app.examples.pickles import PickleWriter, TorchTensor, state_dict_pickle
from app.examples.safetensors_writer import TensorSpec, write_safetensors
from app.examples.stamp import ensure_built
from app.examples.torchfiles import storage_bytes
from app.examples.zipwriter import StoredZipWriter

GB = 10**9
BUMP = 1  # raise when a generator changes, so every stamp mismatches and samples are rebuilt
_META_PROJ = ("attention.wq", "attention.wk", "attention.wv", "attention.wo",
              "feed_forward.w1", "feed_forward.w2", "feed_forward.w3")
_EXPERT_PROJ = ("gate_proj", "up_proj", "down_proj")
# The three globals every tensor entry repeats; torch's pickler writes each once and then BINGETs it.
_MEMOIZED = (b"ctorch._utils\n_rebuild_tensor_v2\n", b"ctorch\nBFloat16Storage\n",
             b"ccollections\nOrderedDict\n")


@dataclass(frozen=True)
class SampleSpec:
    name: str
    count: int  # tensors, files or arrays, whatever the sample is made of
    total_bytes: int  # tensor data (sparse where the format allows)
    bump: int = BUMP


@dataclass(frozen=True)
class Sample:
    name: str
    description: str
    spec: SampleSpec
    target_rel: str  # what the tools scan, relative to the sample directory ("" = the directory)
    build: Callable[[Path, SampleSpec], None]

    def target(self, root: Path) -> Path:
        return root / self.name / self.target_rel if self.target_rel else root / self.name

    def ensure(self, root: Path) -> Path:
        ensure_built(root / self.name, self.spec, lambda d: self.build(d, self.spec))
        return self.target(root)


# --- pickles -----------------------------------------------------------------------------------

def meta_llama_tensors(count: int, total_bytes: int) -> list[TorchTensor]:
    """BF16 matrices named like Meta's original Llama `consolidated.00.pth` state dict."""
    cols = 4096
    rows = max(1, total_bytes // max(1, count) // (cols * 2))
    return [TorchTensor(f"layers.{i // 7}.{_META_PROJ[i % 7]}.weight", "BF16", (rows, cols), str(i))
            for i in range(count)]


def expert_tensors(count: int, total_bytes: int) -> list[TorchTensor]:
    """BF16 matrices named like a mixture-of-experts model (many small expert projections)."""
    cols = 2048
    rows = max(1, total_bytes // max(1, count) // (cols * 2))
    per_layer = 128 * len(_EXPERT_PROJ)
    return [TorchTensor(f"model.layers.{i // per_layer}.mlp.experts.{i % per_layer // 3}"
                        f".{_EXPERT_PROJ[i % 3]}.weight", "BF16", (rows, cols), str(i))
            for i in range(count)]


def memoize_globals(stream: bytes) -> bytes:
    """Write each repeated GLOBAL once (+ BINPUT) and BINGET it afterwards, as torch.save's pickler does.

    Safe on state_dict_pickle output: a GLOBAL argument has newlines, no tensor name or key does.
    """
    for index, opcode in enumerate(_MEMOIZED):
        first = stream.find(opcode)
        if first < 0:
            continue
        head, tail = stream[: first + len(opcode)], stream[first + len(opcode):]
        memo = bytes([index])
        stream = head + b"q" + memo + tail.replace(opcode, b"h" + memo)  # BINPUT, BINGET
    return stream


def build_big_pickle(directory: Path, spec: SampleSpec) -> None:
    (directory / "consolidated.pkl").write_bytes(state_dict_pickle(meta_llama_tensors(spec.count, spec.total_bytes)))


def build_torch_zip(directory: Path, spec: SampleSpec) -> None:
    """A torch.save zip: memoized data.pkl, one sparse STORED member per tensor, 4 small members."""
    tensors = expert_tensors(spec.count, spec.total_bytes)
    with (directory / "pytorch_model.bin").open("wb") as fh:
        zw = StoredZipWriter(fh)
        zw.add_bytes("archive/data.pkl", memoize_globals(state_dict_pickle(tensors)))
        zw.add_bytes("archive/byteorder", b"little")
        for t in tensors:
            zw.add_hole(f"archive/data/{t.key}", storage_bytes(t))
        zw.add_bytes("archive/version", b"3\n")
        zw.add_bytes("archive/.data/serialization_id", b"1" * 40)
        zw.close()


def build_tiny_pickle(directory: Path, spec: SampleSpec) -> None:
    w = PickleWriter().op(b"}").mark()  # {"epoch": 3, "step": 1200, "best": True}
    w.string("epoch").integer(3).string("step").integer(1200).string("best").boolean(True)
    (directory / "tiny.pkl").write_bytes(w.op(b"u").stop())


# --- joblib ------------------------------------------------------------------------------------

def joblib_arrays(count: int, total_bytes: int) -> dict[str, np.ndarray]:
    """`count` float64 arrays of a fitted estimator's shape, about `total_bytes` together."""
    rows = max(1, total_bytes // max(1, count) // (256 * 8))
    rng = np.random.default_rng(13)
    return {f"coef_{i}": rng.standard_normal((rows, 256)) for i in range(count)}


def build_joblib(directory: Path, spec: SampleSpec) -> None:
    from tests.corpus.joblib_writer import dump  # joblib's on-disk layout, written without joblib

    (directory / "model.joblib").write_bytes(dump(joblib_arrays(spec.count, spec.total_bytes)))


# --- text repo and safetensors -----------------------------------------------------------------

TEXT_FILES_PER_MODEL = 5


def build_text_repo(directory: Path, spec: SampleSpec) -> None:
    """`count` text files: per model folder a config, a card, a tokenizer, its config and remote code."""
    for i in range(spec.count // TEXT_FILES_PER_MODEL):
        model = f"models/variant-{i:04d}"
        write_json(directory, f"{model}/config.json", {**llama_config(), "num_hidden_layers": 16 + i % 32})
        write_text(directory, f"{model}/README.md", NEMOTRON_CARD if i % 2 else MIT_LICENSE)
        write_json(directory, f"{model}/tokenizer.json", tokenizer_json(LLAMA_SPECIAL))
        write_json(directory, f"{model}/tokenizer_config.json" if i % 2 else f"{model}/generation_config.json",
                   llama_tokenizer_config() if i % 2 else generation_config())
        code = NEMOTRON_MODELING if i % 2 else NEMOTRON_CONFIGURATION
        write_text(directory, f"{model}/modeling_variant_{i:04d}.py", code)


def build_safetensors(directory: Path, spec: SampleSpec) -> None:
    rows = max(1, spec.total_bytes // spec.count // (4096 * 2))
    tensors = [TensorSpec(f"model.layers.{i // 7}.{_META_PROJ[i % 7].replace('.', '_')}.weight", "BF16",
                          (rows, 4096)) for i in range(spec.count)]
    write_safetensors(directory / "model.safetensors", tensors, {"format": "pt"}, sparse=True)


SAMPLES: tuple[Sample, ...] = (
    Sample("big-pickle", "state-dict pickle, 52,000 tensors", SampleSpec("big-pickle", 52_000, 2 * GB),
           "consolidated.pkl", build_big_pickle),
    Sample("torch-zip", "PyTorch zip, 44,996 tensors + 4 members", SampleSpec("torch-zip", 44_996, 2 * GB),
           "pytorch_model.bin", build_torch_zip),
    Sample("joblib", "joblib dump, 8 float64 arrays", SampleSpec("joblib", 8, 16 * 10**6),
           "model.joblib", build_joblib),
    Sample("text-repo", "2,000 text files (configs, cards, tokenizers, .py)", SampleSpec("text-repo", 2_000, 0),
           "", build_text_repo),
    Sample("safetensors", "2 GB sparse safetensors shard, 224 tensors", SampleSpec("safetensors", 224, 2 * GB),
           "model.safetensors", build_safetensors),
    Sample("tiny-pickle", "3-key dict pickle", SampleSpec("tiny-pickle", 3, 0), "tiny.pkl", build_tiny_pickle),
)


def by_name(names: list[str] | None) -> list[Sample]:
    if not names:
        return list(SAMPLES)
    known = {s.name: s for s in SAMPLES}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown samples {unknown}; choose from {sorted(known)}")
    return [known[n] for n in names]


def footprint(path: Path) -> tuple[int, int]:
    """(files, apparent bytes) of a target, for the table; sparse holes count as bytes."""
    files = [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]
    return len(files), sum(p.stat().st_size for p in files)
