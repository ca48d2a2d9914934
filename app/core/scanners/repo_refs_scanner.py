"""Cross-repo references (threat model: a repo that pulls other, unvetted repos).

Found where loaders and users take them from:
- ``adapter_config.json``: PEFT loads ``base_model_name_or_path`` at ``revision`` first;
- any JSON config, at any depth: ``_name_or_path``, and ``auto_map`` values of the form
  ``org/name--module.Class`` (transformers' dynamic_module_utils fetches the module from that
  repo; tokenizers map to a ``[slow, fast]`` pair), ``custom_pipelines`` implementations;
- code and cards: ``from_pretrained("org/name", revision=...)``, ``hf_hub_download`` /
  ``snapshot_download(repo_id=...)``, and card front matter ``base_model:``.
Each is an info finding whose evidence the report turns into ``references``.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator
from typing import Any, ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.detect import Format
from app.core.manifest import ManifestFile
from app.core.ports import SourceError
from app.core.repo_refs import REFERENCE_RULE, RepoReference
from app.core.scanners.base import ScanContext
from app.core.scanners.text_rules.text_lines import read_views

MAX_BYTES = 8 * 1024 * 1024  # configs and code; bigger JSON is vocabulary, not config
MAX_DEPTH = 32
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96}$")
_CODE_SUFFIXES = (".py", ".md", ".ipynb", ".sh", ".txt")
_QUOTED = r"""["']([A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96})["']"""
_CALLS = re.compile(
    r"\b(?P<call>from_pretrained|hf_hub_download|snapshot_download|pipeline)\s*\((?P<args>[^()]{0,400})\)")
_FIRST_ARG = re.compile(rf"^\s*(?:(?:repo_id|pretrained_model_name_or_path|model)\s*=\s*)?{_QUOTED}")
_KW_REPO = re.compile(rf"\b(?:repo_id|pretrained_model_name_or_path|model)\s*=\s*{_QUOTED}")
_REVISION = re.compile(r"""\brevision\s*=\s*["']([\w./-]{1,128})["']""")
_BASE_MODEL = re.compile(r"^\s*(?:base_model|-)\s*:?\s*['\"]?([A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96})['\"]?\s*$")


class RepoReferenceScanner:
    name: ClassVar[str] = "repo-references"
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo(REFERENCE_RULE, Severity.INFO,
                 "another Hub repo this one loads or tells users to load (listed in the report's references)",
                 kind=RuleKind.REFERENCE),
        RuleInfo.scan_error("the file could not be read"),
    )

    def handles(self, file: ManifestFile) -> bool:
        base = posixpath.basename(file.path).lower()
        return file.format == Format.TEXT and (base.endswith((".json", *_CODE_SUFFIXES)) or base == "readme")

    def version(self) -> str:
        return "1"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        path = ctx.file.path
        sink = FindingSink(path, self.name)
        try:
            # Every view of the text (UTF-8, and UTF-16/32 in their own encoding), like the links rules.
            views, _cut = read_views(ctx.blob, min(MAX_BYTES, ctx.limits.max_read_bytes_per_file))
        except SourceError as exc:
            return ScanOutcome.failed(self.name, path, str(exc))
        is_json = path.lower().endswith(".json")
        found = [ref for text in views for ref in (_json_refs(path, text) if is_json else _text_refs(text))]
        for repo, revision, via in dict.fromkeys(found):
            if repo == ctx.identity.repo_id:
                continue  # the repo naming itself
            ref = RepoReference(repo, revision, path, via)
            pinned = f" at {revision}" if revision else " (default branch, unpinned)"
            sink.add(REFERENCE_RULE, Severity.INFO, f"references {repo}{pinned} via {via}", evidence=ref.evidence())
        return ScanOutcome.scanned(self.name, path, sink.findings)


Ref = tuple[str, str | None, str]


def _json_refs(path: str, text: str) -> list[Ref]:
    try:
        config = json.loads(text)
    except (ValueError, RecursionError):
        return []
    if not isinstance(config, dict):
        return []
    refs: list[Ref] = []
    if posixpath.basename(path).lower() == "adapter_config.json":
        base = config.get("base_model_name_or_path")
        revision = config.get("revision")
        if isinstance(base, str) and _REPO_ID.match(base):
            refs.append((base, revision if isinstance(revision, str) else None, "adapter base model"))
    refs.extend(_walk(config, 0))
    return refs


def _walk(value: Any, depth: int) -> Iterator[Ref]:
    if depth > MAX_DEPTH:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "_name_or_path" and isinstance(item, str) and _REPO_ID.match(item):
                yield item, None, "_name_or_path"
            elif key in ("auto_map", "custom_pipelines"):
                yield from _remote_code(key, item, depth)
            yield from _walk(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, depth + 1)


def _remote_code(key: str, value: Any, depth: int) -> Iterator[Ref]:
    """``org/name--module.Class`` strings anywhere under auto_map / custom_pipelines."""
    if depth > MAX_DEPTH:
        return
    if isinstance(value, str) and "--" in value:
        repo = value.split("--", 1)[0]
        if _REPO_ID.match(repo):
            yield repo, None, f"{key} remote code {value.split('--', 1)[1][:80]}"
    elif isinstance(value, dict):
        for item in value.values():
            yield from _remote_code(key, item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _remote_code(key, item, depth + 1)


def _text_refs(text: str) -> list[Ref]:
    refs: list[Ref] = []
    for match in _CALLS.finditer(text):
        args = match.group("args")
        repo = _FIRST_ARG.match(args) or _KW_REPO.search(args)
        if repo:
            revision = _REVISION.search(args)
            refs.append((repo.group(1), revision.group(1) if revision else None, match.group("call")))
    refs.extend((repo, None, "card base_model") for repo in _front_matter_base_models(text))
    return refs


def _front_matter_base_models(text: str) -> Iterator[str]:
    """``base_model: org/name`` (or a list under it) in a card's YAML front matter."""
    if not text.startswith("---"):
        return
    end = text.find("\n---", 3)
    lines = text[3:end if end > 0 else 0].splitlines()
    in_base = False
    for line in lines:
        if line.startswith("base_model"):
            in_base = True
            match = _BASE_MODEL.match(line)
            if match:
                yield match.group(1)
        elif in_base and line.lstrip().startswith("-"):
            match = _BASE_MODEL.match(line)
            if match:
                yield match.group(1)
        else:
            in_base = False
