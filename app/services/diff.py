"""What changed, for trust, between two vetted commits of one repo.

Everything but the template and config text comes from the two stored reports: files by hash,
findings by (file, member, rule, evidence), the verdicts as the gate sees them now. Chat templates
and ``auto_map`` are read as text from the hub at both commits, only when their files differ, and
only up to ``TEXT_LIMIT`` bytes; the text is compared, never run.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from app.core.ports import Source, SourceError
from app.errors import HfvetError
from app.services.listing import Decision, RepoHistory
from app.settings import Settings, reveal

ReadText = Callable[[str, str, str], bytes]  # (repo, commit, path) -> the file's first TEXT_LIMIT bytes
TEXT_LIMIT = 512 * 1024
REMOTE_CODE_RULES = frozenset({"auto-map", "auto-map-external", "auto-map-missing-module", "auto-map-malformed"})
LINK_SCANNERS = frozenset({"links"})
CONFIG_FILES = ("config.json", "tokenizer_config.json")
_TEXT_FORMATS = frozenset({"text", "empty"})


@dataclass(frozen=True)
class FileChange:
    path: str
    before: dict[str, Any] | None  # the manifest entry at the older commit (None: added)
    after: dict[str, Any] | None  # ... at the newer one (None: removed)

    @property
    def kind(self) -> str:
        return "added" if self.before is None else "removed" if self.after is None else "changed"


@dataclass(frozen=True)
class TextDiff:
    path: str
    name: str  # the template's name, or "auto_map"
    lines: list[str] = field(default_factory=list)  # a unified diff; empty when unavailable
    note: str | None = None  # why the text is not shown


@dataclass(frozen=True)
class RevisionDiff:
    repo: str
    before: Decision
    after: Decision
    files: list[FileChange]  # every added, removed or changed file
    remote_code: list[FileChange]  # *.py files among them
    binaries: list[FileChange]  # files that are not text (weights, archives, executables, unknown bytes)
    templates: list[TextDiff]
    auto_map: list[TextDiff]
    appeared: list[dict[str, Any]]  # findings of the newer commit the older one lacked
    gone: list[dict[str, Any]]
    links: list[tuple[str, dict[str, Any]]]  # ("appeared" | "gone", finding) of the links scanner

    @property
    def added(self) -> list[FileChange]:
        return [f for f in self.files if f.kind == "added"]

    @property
    def removed(self) -> list[FileChange]:
        return [f for f in self.files if f.kind == "removed"]


def newest_decision(history: RepoHistory, sha: str) -> Decision | None:
    return next((decisions[0] for commit, decisions in history.commits if commit == sha), None)


def diff_revisions(history: RepoHistory, before_sha: str, after_sha: str, read_text: ReadText | None) -> RevisionDiff:
    """The diff of two vetted commits of ``history`` (KeyError if one was never vetted)."""
    before, after = newest_decision(history, before_sha), newest_decision(history, after_sha)
    if before is None or after is None:
        raise KeyError(before_sha if before is None else after_sha)
    old, new = before.report.document, after.report.document
    files = file_changes(old.get("files") or [], new.get("files") or [])
    appeared, gone = _finding_changes(old.get("findings") or [], new.get("findings") or [])
    repo = history.repo.repo_id
    texts = _Texts(repo, before_sha, after_sha, read_text)
    return RevisionDiff(
        repo, before, after, files,
        remote_code=[f for f in files if f.path.endswith(".py")],
        binaries=[f for f in files if _is_binary(f)],
        templates=texts.templates(old.get("findings") or [], new.get("findings") or []),
        auto_map=texts.auto_maps({f.path for f in files}),
        appeared=appeared, gone=gone,
        links=[("appeared", f) for f in appeared if f.get("scanner") in LINK_SCANNERS]
        + [("gone", f) for f in gone if f.get("scanner") in LINK_SCANNERS],
    )


def file_changes(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[FileChange]:
    """Every file added, removed or changed from ``old`` to ``new`` (manifest entries), by path."""
    before = {f["path"]: f for f in old}
    after = {f["path"]: f for f in new}
    changes = []
    for path in sorted(before.keys() | after.keys()):
        a, b = before.get(path), after.get(path)
        if a is None or b is None or _identity(a) != _identity(b):
            changes.append(FileChange(path, a, b))
    return changes


def _identity(entry: dict[str, Any]) -> tuple[Any, ...]:
    return (entry.get("sha256"), entry.get("blob_id"), entry.get("size"))


def _is_binary(change: FileChange) -> bool:
    entry = change.after or change.before or {}
    return str(entry.get("format") or "unknown") not in _TEXT_FORMATS


def _finding_key(f: dict[str, Any]) -> tuple[Any, ...]:
    return (f.get("path"), f.get("member"), f.get("rule"), f.get("evidence"))


def _finding_changes(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> tuple[list[dict[str, Any]],
                                                                                    list[dict[str, Any]]]:
    old_keys, new_keys = {_finding_key(f) for f in old}, {_finding_key(f) for f in new}
    return [f for f in new if _finding_key(f) not in old_keys], [f for f in old if _finding_key(f) not in new_keys]


def _templates_of(findings: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """(path, template name) -> its digest, from the chat-template info findings."""
    return {(f["path"], f.get("member") or ""): f.get("evidence") or "" for f in findings
            if f.get("rule") == "chat-template"}


class _Texts:
    """Reads the files a text diff needs, once per (commit, path), and says why when it cannot."""

    def __init__(self, repo: str, before: str, after: str, read_text: ReadText | None) -> None:
        self.repo, self.before, self.after, self.read = repo, before, after, read_text
        self._cache: dict[tuple[str, str], str | None] = {}
        self.error: str | None = None if read_text else "the hub is not configured: text not shown"

    def templates(self, old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[TextDiff]:
        before, after = _templates_of(old), _templates_of(new)
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        return [self._diff(path, name, partial(_template_text, path=path, name=name)) for path, name in changed]

    def auto_maps(self, changed_paths: set[str]) -> list[TextDiff]:
        diffs = [self._diff(path, "auto_map", _auto_map_text) for path in CONFIG_FILES if path in changed_paths]
        return [d for d in diffs if d.lines or d.note]

    def _diff(self, path: str, name: str, pick: Callable[[str], str | None]) -> TextDiff:
        old, new = self._text(self.before, path), self._text(self.after, path)
        if self.error and (old is None or new is None):
            return TextDiff(path, name, note=self.error)
        old_part = pick(old) if old is not None else None
        new_part = pick(new) if new is not None else None
        lines = list(difflib.unified_diff((old_part or "").splitlines(), (new_part or "").splitlines(),
                                          f"{self.before[:12]}/{path}", f"{self.after[:12]}/{path}", lineterm=""))
        return TextDiff(path, name, lines)

    def _text(self, sha: str, path: str) -> str | None:
        if self.read is None:
            return None
        if (sha, path) not in self._cache:
            try:
                self._cache[sha, path] = self.read(self.repo, sha, path)[:TEXT_LIMIT].decode("utf-8", "replace")
            except (HfvetError, SourceError, KeyError) as exc:  # absent at that commit, or the hub unreachable
                self._cache[sha, path] = None
                if not isinstance(exc, KeyError):
                    self.error = f"could not read {path} from the hub: {exc}"
        return self._cache[sha, path]


def _template_text(text: str, *, path: str, name: str) -> str | None:
    """The named template's source: a .jinja file whole, or a config's `chat_template` entry."""
    if not path.endswith(".json"):
        return text
    value = _json(text).get("chat_template")
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # [{"name": ..., "template": ...}]
        named = {str(t.get("name")): t.get("template") for t in value if isinstance(t, dict)}
        found = named.get(name) or (next(iter(named.values()), None) if len(named) == 1 else None)
        return found if isinstance(found, str) else None
    return None


def _auto_map_text(text: str) -> str | None:
    value = _json(text).get("auto_map")
    return None if value is None else json.dumps(value, indent=2, sort_keys=True)


def _json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def source_reader(open_source: Callable[[str, str], Source]) -> ReadText:
    """A ReadText over ``open_source(repo, commit)`` (a HubSource), reading at most TEXT_LIMIT bytes of a file."""

    def read(repo: str, sha: str, path: str) -> bytes:
        source = open_source(repo, sha)
        try:
            size = source.size(path)
        except SourceError as exc:
            raise KeyError(path) from exc  # the file is not at that commit
        return bytes(source.read(path, 0, min(size, TEXT_LIMIT)))

    return read


def hub_text_reader(settings: Settings) -> ReadText:
    """A ReadText over the configured hub, for one page: each commit is opened once, a dead hub fails fast."""
    from app.sources.hub import HubClient, HubSource  # the hub client loads only when a diff needs text

    hub = HubClient.create(settings.hf_endpoint, reveal(settings.hf_token), retries=1, max_wait=2.0)
    opened: dict[tuple[str, str], Source] = {}

    def open_source(repo: str, sha: str) -> Source:
        if (repo, sha) not in opened:
            opened[repo, sha] = HubSource.open(repo, sha, hub=hub)
        return opened[repo, sha]

    return source_reader(open_source)
