"""The loader map (``map/<runtime>.yaml``, one file per runtime), loaded once, and a repo's closure from it."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterable
from importlib import resources

import yaml

from app.core.closure import ClosureItem, Kind, unique
from app.core.loaders.closure import matches
from app.core.loaders.readers import read_surface
from app.core.loaders.schema import LoaderMap, Read, RuntimeFile, Surface
from app.core.loaders.view import FileView

MAP_FOLDER = "map"


@functools.cache
def map_texts() -> tuple[tuple[str, str], ...]:
    """(file name, text) of every map file, sorted by name."""
    folder = resources.files(__package__ or "app.core.loaders").joinpath(MAP_FOLDER)
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".yaml")), key=lambda f: f.name)
    return tuple((f.name, f.read_text(encoding="utf-8")) for f in files)


@functools.cache
def loader_map() -> LoaderMap:
    """The shipped map; a malformed map is a bug, so it raises (tests load it)."""
    parts = [RuntimeFile.model_validate(yaml.safe_load(text)) for _name, text in map_texts()]
    surfaces = tuple(s for part in parts for s in part.surfaces)
    ids = [s.id for s in surfaces]
    if len(ids) != len(set(ids)):
        raise ValueError(f"loader map: surface ids repeat: {sorted({i for i in ids if ids.count(i) > 1})}")
    return LoaderMap(runtimes=tuple(p.runtime for p in parts), surfaces=surfaces)


def map_version() -> str:
    digest = hashlib.sha256("".join(text for _name, text in map_texts()).encode()).hexdigest()
    return digest[:12]


def read_paths(surfaces: Iterable[Surface], paths: Iterable[str]) -> list[str]:
    """The repo paths some surface reads."""
    listed = tuple(surfaces)
    return [p for p in paths if any(matches(s, p) for s in listed)]


def items_for_file(path: str, text: str, present: frozenset[str], own_repo: str | None,
                   surfaces: Iterable[Surface] | None = None) -> list[ClosureItem]:
    """What the surfaces that read ``path`` find in it."""
    view = FileView(path, text, present, own_repo)
    chosen = loader_map().surfaces if surfaces is None else tuple(surfaces)
    return list(unique(item for s in chosen if matches(s, path) for item in read_surface(s, view)))


def closure_of(paths: Iterable[str], read_text: Callable[[str], str | None], own_repo: str | None,
               surfaces: Iterable[Surface] | None = None) -> list[ClosureItem]:
    """Every item of the repo, reading each file some surface reads (``read_text`` None: not readable)."""
    listed = tuple(paths)
    present = frozenset(listed)
    chosen = loader_map().surfaces if surfaces is None else tuple(surfaces)
    items: list[ClosureItem] = []
    for path in read_paths(chosen, listed):
        text = read_text(path)
        if text is not None:
            items.extend(items_for_file(path, text, present, own_repo, chosen))
    return list(unique(items))


def file_code(path: str, paths: Iterable[str], own_repo: str | None) -> list[ClosureItem]:
    """The items of surfaces that name ``path`` by its own name (handler.py, hubconf.py): no read needed."""
    own = [s for s in loader_map().surfaces if s.kind in (Kind.CODE, Kind.HOOK) and s.read is Read.FILE
           and matches(s, path)]
    return items_for_file(path, "", frozenset(paths) | {path}, own_repo, own) if own else []


def named_code(paths: Iterable[str], read_text: Callable[[str], str | None],
               own_repo: str | None) -> dict[str, tuple[ClosureItem, ...]]:
    """Repo path -> the items of configs that name it as code a runtime imports (auto_map, a component,
    an entry point, a `_target_` module). Reads only the configs those surfaces read; the pipeline calls
    it once per vet, before the scan threads, so what it reads is the same at any worker count."""
    listed = tuple(paths)
    naming = tuple(s for s in loader_map().surfaces if s.kind in (Kind.CODE, Kind.HOOK) and s.read is not Read.FILE)
    texts = tuple((p, text) for p in read_paths(naming, listed) if (text := read_text(p)) is not None)
    present = frozenset(listed)
    found: dict[str, list[ClosureItem]] = {}
    for item in unique(i for path, text in texts for i in items_for_file(path, text, present, own_repo, naming)):
        if item.local:
            found.setdefault(item.target, []).append(item)
    return {path: tuple(items) for path, items in found.items()}
