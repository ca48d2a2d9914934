"""Derive the well-known PyPI names (app/core/scanners/data/known_packages.json) from a download ranking.

Allowlist first: a package a card or manifest installs is vouched for when it is a known runtime's package
(upstreams.yaml), or among the most downloaded PyPI projects. Anything else is a name nobody vouches for
(`unknown-package`): a brand-new name an attacker registered the day before is not in a ranking built from
months of downloads. The ranking is Hugo van Kemenade's "top-pypi-packages" (the 15,000 most downloaded
projects of the last 30 days, from PyPI's BigQuery dataset), read either as its JSON dump
(`{"rows": [{"project": ..., "download_count": ...}]}`) or as a TSV with `name` and a rank column.

    python scripts/derive_known_packages.py RANKING [--top N] [--out PATH]

The output lists canonical names (PEP 503: lower case, runs of `-_.` as `-`), sorted, with the source and
the date of the ranking, so a change is a reviewable diff.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "app" / "core" / "scanners" / "data" / "known_packages.json"
SOURCE = "hugovk/top-pypi-packages (15,000 most downloaded PyPI projects, 30 days)"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def ranked(path: Path) -> list[tuple[int, str]]:
    """(rank, name) pairs from the JSON dump or a TSV with a `name` column and a rank column."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("{"):
        rows = json.loads(text)["rows"]
        return [(i + 1, str(r["project"])) for i, r in enumerate(rows)]
    reader = csv.DictReader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE)  # summaries hold quotes
    rank_column = next((c for c in reader.fieldnames or () if c.startswith("rank")), None)
    if rank_column is None:
        raise SystemExit(f"{path}: no rank column (expected one starting with 'rank')")
    return [(int(row[rank_column]), row["name"]) for row in reader if (row.get(rank_column) or "").isdigit()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ranking", type=Path)
    parser.add_argument("--top", type=int, default=15_000)
    parser.add_argument("--as-of", default="2026-11", help="month of the ranking, recorded in the output")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    names = sorted({canonical(name) for rank, name in ranked(args.ranking) if rank <= args.top})
    if len(names) < 1000:
        print(f"only {len(names)} names: is this a ranking?", file=sys.stderr)
        return 1
    document = {"source": SOURCE, "as_of": args.as_of, "top": args.top, "count": len(names), "packages": names}
    args.out.write_text(json.dumps(document, indent=0, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{len(names)} names -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
