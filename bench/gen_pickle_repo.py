"""Generate a benign multi-GB pickle-format repo (sparse files) for the local scan benchmark.

    python bench/gen_pickle_repo.py DIR [--zip-files 2 --zip-gb 3 --zip-tensors 1000
                                         --legacy-files 1 --legacy-gb 2 --legacy-tensors 500]

DIR gets PyTorch zip checkpoints (`archive/data.pkl` with one `_rebuild_tensor_v2` entry per
tensor, STORED storages whose data is a sparse hole), legacy stacked-pickle torch files and a
config. Prints the repo size, the disk it really uses, and the minimum bytes vetting needs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchlib import make_parser

from app.examples.minimum import minimum_report
from app.examples.synthetic_pickle import GB, PickleRepoSpec, ensure_pickle_repo


def add_spec_args(parser: argparse.ArgumentParser, defaults: PickleRepoSpec) -> None:
    parser.add_argument("--zip-files", type=int, default=defaults.zip_files)
    parser.add_argument("--zip-gb", type=float, default=defaults.zip_bytes / GB, help="size of each zip file")
    parser.add_argument("--zip-tensors", type=int, default=defaults.zip_tensors, help="tensors per zip file")
    parser.add_argument("--legacy-files", type=int, default=defaults.legacy_files)
    parser.add_argument("--legacy-gb", type=float, default=defaults.legacy_bytes / GB)
    parser.add_argument("--legacy-tensors", type=int, default=defaults.legacy_tensors)


def spec_from(args: argparse.Namespace) -> PickleRepoSpec:
    return PickleRepoSpec(
        zip_files=args.zip_files, zip_bytes=int(args.zip_gb * GB), zip_tensors=args.zip_tensors,
        legacy_files=args.legacy_files, legacy_bytes=int(args.legacy_gb * GB),
        legacy_tensors=args.legacy_tensors,
    )


def disk_usage(repo: Path) -> int:
    return sum(p.stat().st_blocks * 512 for p in repo.rglob("*") if p.is_file())


def main() -> int:
    parser = make_parser(__doc__)
    parser.add_argument("dir", type=Path)
    add_spec_args(parser, PickleRepoSpec())
    args = parser.parse_args()
    built = ensure_pickle_repo(args.dir, spec_from(args))
    report = minimum_report(args.dir.name, args.dir)
    summary = {
        "dir": str(args.dir), "built": built, "repo_bytes": report["repo_bytes"],
        "disk_bytes": disk_usage(args.dir), "minimum_bytes": report["minimum_bytes"],
    }
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
