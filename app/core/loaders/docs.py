"""``docs/attack-surface.md``, generated from the loader map: one row per runtime surface, with its cases."""

from __future__ import annotations

from app.core.loaders.loader_map import loader_map
from app.core.loaders.schema import Surface

HEADER = """# Attack surface: what each runtime imports, runs, installs and fetches

Generated from the loader map (`app/core/loaders/map/*.yaml`) by `python scripts/gen_attack_surface.py`;
`tests/unit/core/loaders/test_loader_map.py` fails when this file and the map disagree. Each row is one
surface of one runtime: the files it reads, what a value there names (**kind**: `code` a module it
imports and calls, `hook` start-up code, `native` a native library, `install` packages it installs,
`repo` another Hub repo it fetches), what gates it (**gate**: `always`, the user's `trust_remote_code`,
an `opt-in` the repo only suggests, `install`), where in the runtime's source this was read, and the
corpus cases (`tests/corpus/loader_*.py`) that attack it and that show a vendor's benign use of it.
How hfvet uses the map: `docs/detection.md` ("The loader model").
"""


def render() -> str:
    lmap = loader_map()
    parts = [HEADER]
    for runtime in lmap.runtimes:
        surfaces = [s for s in lmap.surfaces if s.runtime == runtime.id]
        parts.append(f"\n## {runtime.name} (`{runtime.id}`)\n\nReached by: {runtime.how}\n")
        parts.append("| surface | what the runtime does | files | reads | kind | gate | source | cases |")
        parts.append("|---|---|---|---|---|---|---|---|")
        parts.extend(_row(s) for s in surfaces)
    return "\n".join(parts) + "\n"


def _row(s: Surface) -> str:
    reads = s.read.value + (f" `{'`, `'.join(s.fields)}`" if s.fields else "")
    if s.form.value != "self":
        reads += f" as {s.form.value}"
    gate = s.gate.value + (", carries trust_remote_code" if s.carries_trust else "")
    source = f"{s.source.repo} {s.source.version}: `{s.source.file}` `{s.source.function}`"
    cells = [f"`{s.id}`", s.what, ", ".join(f"`{f}`" for f in s.files), reads, s.kind.value, gate, source,
             "<br>".join(f"`{c}`" for c in s.cases)]
    return "| " + " | ".join(cell.replace("|", "\\|").replace("\n", " ") for cell in cells) + " |"
