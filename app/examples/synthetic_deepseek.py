"""A DeepSeek-V4-Flash-shaped NVFP4 repo at real scale (sparse), for the remote-vet benchmark.

Defaults: 35 safetensors shards of ~5 GB with ~4,000 tensors in each header (routed experts'
gate/up/down projections as NVFP4: U8 weight, F8_E4M3 weight_scale, F32 weight_scale_2 and
input_scale), the index, configs, a full-size tokenizer, plus two 10 GB PyTorch zip `.bin`
files and one legacy torch file. `scale` shrinks the bytes and keeps every count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from app.examples import cards, configs
from app.examples.files import hub_meta, write_hub_meta, write_json, write_text
from app.examples.nvfp4 import MoeShape, layer, model_tensors, split_evenly
from app.examples.safetensors_writer import write_sharded
from app.examples.stamp import ensure_built
from app.examples.synthetic_pickle import GB, PickleRepoSpec, declared_hashes, write_pickle_checkpoints


@dataclass(frozen=True)
class DeepseekRepoSpec:
    shards: int = 35
    tensors_per_shard: int = 4000
    scale: float = 1.0
    zip_files: int = 2
    zip_bytes: int = 10 * GB
    zip_tensors: int = 1000
    legacy_files: int = 1
    legacy_bytes: int = 2 * GB
    legacy_tensors: int = 500
    vocab: int = 129280  # tokenizer.json entries (a real one is several MB, read whole)

    def pickles(self) -> PickleRepoSpec:
        return PickleRepoSpec(
            zip_files=self.zip_files,
            zip_bytes=int(self.zip_bytes * self.scale),
            zip_tensors=self.zip_tensors,
            legacy_files=self.legacy_files,
            legacy_bytes=int(self.legacy_bytes * self.scale),
            legacy_tensors=self.legacy_tensors,
        )


def layers_for(spec: DeepseekRepoSpec, shape: MoeShape) -> int:
    per_layer = len(layer(shape, 0))
    return max(1, math.ceil((spec.shards * spec.tensors_per_shard - 3) / per_layer))


def large_tokenizer(vocab_size: int) -> configs.JSON:
    """A byte-level BPE tokenizer.json with `vocab_size` entries: the size of the real thing."""
    tok = configs.tokenizer_json(configs.DEEPSEEK_SPECIAL)
    vocab = dict(tok["model"]["vocab"])
    for i in range(len(vocab), vocab_size):
        vocab[f"tok{i:06x}"] = i
    tok["model"]["vocab"] = vocab
    tok["model"]["merges"] = [[f"tok{i:06x}"[:5], f"tok{i:06x}"[5:]] for i in range(vocab_size // 2)]
    return tok


def write_deepseek_repo(repo: Path, spec: DeepseekRepoSpec) -> list[str]:
    """Write the repo; returns the repo-relative paths of the sparse weight files."""
    shape = MoeShape(scale=spec.scale)
    layers = layers_for(spec, shape)
    tensors = list(model_tensors(shape, layers))
    write_sharded(repo, split_evenly(tensors, spec.shards), {"format": "pt"}, sparse=True)
    sparse = [p.name for p in sorted(repo.glob("model-*.safetensors"))]
    sparse += write_pickle_checkpoints(repo, spec.pickles(), prefix="original/")
    write_json(repo, "config.json", configs.deepseek_v4_config(layers=layers))
    write_json(repo, "generation_config.json", configs.generation_config())
    write_json(repo, "hf_quant_config.json", configs.hf_quant_config())
    write_json(repo, "tokenizer.json", large_tokenizer(spec.vocab))
    write_json(repo, "tokenizer_config.json", configs.deepseek_tokenizer_config())
    write_text(repo, "README.md", cards.NVIDIA_CARD)
    write_text(repo, "LICENSE", cards.MIT_LICENSE)
    return sparse


def ensure_deepseek_hub_repo(root: Path, repo_id: str, spec: DeepseekRepoSpec) -> tuple[Path, bool]:
    """root/<org>/<name>/ unless already built with this spec; (path, whether it was built)."""
    repo = root / repo_id
    built = ensure_built(repo, spec, lambda target: write_deepseek_hub_repo(target, repo_id, spec))
    return repo, built


def write_deepseek_hub_repo(repo: Path, repo_id: str, spec: DeepseekRepoSpec) -> None:
    """The repo in fixture-hub layout, with declared LFS hashes so the hub never reads the weights."""
    sparse = write_deepseek_repo(repo, spec)
    meta = hub_meta(repo_id, created="2026-05-01T00:00:00.000Z", modified="2026-05-01T00:00:00.000Z",
                    downloads=0, likes=0, tags=["safetensors", "deepseek_v4", "benchmark"], card={})
    meta["sha256"] = declared_hashes(repo, sparse)
    write_hub_meta(repo, meta)
