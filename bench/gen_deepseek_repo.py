"""Generate a DeepSeek-V4-Flash-shaped NVFP4 repo in fixture-hub layout (sparse files).

    python bench/gen_deepseek_repo.py ROOT [--repo bench/DeepSeek-V4-Flash-NVFP4] [--scale 1.0]
                                            [--shards 35 --tensors-per-shard 4000 ...]

ROOT/<org>/<name>/ gets N safetensors shards (~5 GB each at scale 1, ~4,000 NVFP4 MoE tensors
per header), the index, configs, a full-size tokenizer, two 10 GB PyTorch zip `.bin` files and
a legacy torch file under `original/`, and a `.hub.json` declaring stand-in LFS sha256 values
for the sparse files (so the fixture hub never hashes them). `--scale 0.1` keeps every file and
tensor count at a tenth of the bytes. The minimum bytes vetting needs are written to
ROOT/<org>/<name>.minimum.json (next to the repo, not inside it) and printed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from benchlib import make_parser

from app.examples.minimum import write_minimum
from app.examples.synthetic_deepseek import DeepseekRepoSpec, ensure_deepseek_hub_repo
from app.examples.synthetic_pickle import GB

DEFAULT_REPO = "bench/DeepSeek-V4-Flash-NVFP4"


def minimum_path(root: Path, repo_id: str) -> Path:
    return root / f"{repo_id}.minimum.json"


def generate(root: Path, repo_id: str, spec: DeepseekRepoSpec) -> dict[str, Any]:
    repo, built = ensure_deepseek_hub_repo(root, repo_id, spec)
    out = minimum_path(root, repo_id)
    if built or not out.is_file():
        return write_minimum(repo_id, repo, out)
    loaded: dict[str, Any] = json.loads(out.read_text())
    return loaded


def main() -> int:
    d = DeepseekRepoSpec()
    parser = make_parser(__doc__)
    parser.add_argument("root", type=Path, help="fixture hub root")
    parser.add_argument("--repo", default=DEFAULT_REPO, help="ORG/NAME under ROOT")
    parser.add_argument("--scale", type=float, default=d.scale)
    parser.add_argument("--shards", type=int, default=d.shards)
    parser.add_argument("--tensors-per-shard", type=int, default=d.tensors_per_shard)
    parser.add_argument("--zip-files", type=int, default=d.zip_files)
    parser.add_argument("--zip-gb", type=float, default=d.zip_bytes / GB, help="each, before --scale")
    parser.add_argument("--zip-tensors", type=int, default=d.zip_tensors)
    parser.add_argument("--legacy-files", type=int, default=d.legacy_files)
    parser.add_argument("--legacy-gb", type=float, default=d.legacy_bytes / GB, help="before --scale")
    parser.add_argument("--legacy-tensors", type=int, default=d.legacy_tensors)
    parser.add_argument("--vocab", type=int, default=d.vocab)
    a = parser.parse_args()
    spec = DeepseekRepoSpec(
        shards=a.shards, tensors_per_shard=a.tensors_per_shard, scale=a.scale, zip_files=a.zip_files,
        zip_bytes=int(a.zip_gb * GB), zip_tensors=a.zip_tensors, legacy_files=a.legacy_files,
        legacy_bytes=int(a.legacy_gb * GB), legacy_tensors=a.legacy_tensors, vocab=a.vocab,
    )
    report = generate(a.root, a.repo, spec)
    print(json.dumps({k: report[k] for k in ("repo", "repo_bytes", "minimum_bytes")}, indent=2))
    print(f"minimum written to {minimum_path(a.root, a.repo)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
