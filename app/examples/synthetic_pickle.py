"""Benchmark-scale PyTorch checkpoints (multi-GB, sparse) and the repo that holds them.

Every storage is a sparse hole, so a "10 GB" file costs a few MB of disk; the pickles, zip
headers and directories are real. All content is benign.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from app.examples.files import HUB_META
from app.examples.pickles import TorchTensor
from app.examples.stamp import ensure_built
from app.examples.torchfiles import write_torch_legacy, write_torch_zip

GB = 10**9
_ROW = 4096  # columns of every synthetic weight matrix
_PROJECTIONS = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")


@dataclass(frozen=True)
class PickleRepoSpec:
    zip_files: int = 2
    zip_bytes: int = 3 * GB  # per zip file
    zip_tensors: int = 1000  # per zip file
    legacy_files: int = 1
    legacy_bytes: int = 2 * GB
    legacy_tensors: int = 500


def sized_tensors(count: int, total_bytes: int, *, first_layer: int = 0) -> list[TorchTensor]:
    """`count` BF16 matrices named like a Llama state dict, together about `total_bytes`."""
    rows = max(1, total_bytes // max(1, count) // (_ROW * 2))
    tensors = []
    for i in range(count):
        layer, proj = divmod(i, len(_PROJECTIONS))
        name = f"model.layers.{first_layer + layer}.{_PROJECTIONS[proj]}.weight"
        tensors.append(TorchTensor(name, "BF16", (rows, _ROW), str(i)))
    return tensors


def zip_name(index: int, count: int) -> str:
    return f"pytorch_model-{index:05d}-of-{count:05d}.bin"


def write_pickle_checkpoints(repo: Path, spec: PickleRepoSpec, *, prefix: str = "") -> list[str]:
    """Write the zip and legacy checkpoints under `repo`; returns their repo-relative paths."""
    written = []
    for i in range(1, spec.zip_files + 1):
        rel = prefix + zip_name(i, spec.zip_files)
        layer0 = (i - 1) * spec.zip_tensors // len(_PROJECTIONS)
        tensors = sized_tensors(spec.zip_tensors, spec.zip_bytes, first_layer=layer0)
        write_torch_zip(repo / rel, tensors, archive=Path(rel).stem, sparse=True)
        written.append(rel)
    for i in range(1, spec.legacy_files + 1):
        rel = f"{prefix}legacy_checkpoint-{i}.pt"
        write_torch_legacy(repo / rel, sized_tensors(spec.legacy_tensors, spec.legacy_bytes), sparse=True)
        written.append(rel)
    return written


def fake_lfs_sha256(rel: str, size: int) -> str:
    """A stable stand-in for the LFS hash of a sparse file, so the fixture hub never hashes it."""
    return hashlib.sha256(f"hfvet-bench:{rel}:{size}".encode()).hexdigest()


def declared_hashes(repo: Path, rels: list[str]) -> dict[str, str]:
    return {rel: fake_lfs_sha256(rel, (repo / rel).stat().st_size) for rel in rels}


def write_pickle_repo(repo: Path, spec: PickleRepoSpec) -> None:
    """A benign pickle-format repo: the checkpoints and a config."""
    write_pickle_checkpoints(repo, spec)
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}
    (repo / "config.json").write_text(json.dumps(config))


def ensure_pickle_repo(repo: Path, spec: PickleRepoSpec, *, for_hub: bool = False) -> bool:
    """Generate the repo unless one with the same spec is there; True when it was (re)built.

    `for_hub` adds the fixture hub's `.hub.json` (declared LFS hashes of the sparse files);
    without it the directory holds only repo content, as a downloaded snapshot would.
    """
    built = ensure_built(repo, spec, lambda target: write_pickle_repo(target, spec))
    meta = repo / HUB_META
    if for_hub:
        weights = [p.name for p in sorted(repo.iterdir()) if p.suffix in (".bin", ".pt")]
        hub = {"author": repo.parent.name, "tags": ["pytorch"], "sha256": declared_hashes(repo, weights)}
        meta.write_text(json.dumps(hub, indent=2))
    else:
        meta.unlink(missing_ok=True)
    return built
