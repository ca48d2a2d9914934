"""Write docs/attack-surface.md from the loader map (app/core/loaders/map/*.yaml).

    python scripts/gen_attack_surface.py [--check]
"""

from __future__ import annotations

import sys
from pathlib import Path

from app.core.loaders.docs import render

DOC = Path(__file__).resolve().parent.parent / "docs" / "attack-surface.md"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        same = DOC.exists() and DOC.read_text(encoding="utf-8") == text
        print("docs/attack-surface.md is " + ("up to date" if same else "stale: run scripts/gen_attack_surface.py"))
        return 0 if same else 1
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
