"""Lineage by content, pure: is a commit a copy of a vendor's, and does it share what its card's base shares?

Bytes are compared by digest (sha256 where known, else the git blob id), never read again; weights
also by their tensor layout (app.core.tensor_layout). The store lookups that find the commits to
compare with are app.services.lineage's; the facts land in the report and the policy's `lineage`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.core.lineage_facts import BaseFact, BaseStatus, Lineage, MirrorFact, TensorMatch
from app.core.tensor_layout import TensorLayout, combine

MIRROR_SHARE = 0.9  # identical files must hold this share of a commit's bytes (and half its files) for a mirror
TEMPLATE_RULE = "chat-template"  # the template scanner's info finding: evidence is the template's sha256
# Files that make a model "the same model" to a runtime without being weights, by what they carry.
TOKENIZER_FILES = frozenset({"tokenizer.json", "tokenizer.model", "tokenizer_config.json", "special_tokens_map.json",
                             "vocab.json", "vocab.txt", "merges.txt", "added_tokens.json"})
TEMPLATE_FILES = frozenset({"chat_template.jinja", "chat_template.json"})
CONFIG_FILES = frozenset({"config.json", "generation_config.json", "preprocessor_config.json"})
IDENTITY_FILES = TOKENIZER_FILES | TEMPLATE_FILES | CONFIG_FILES


@dataclass(frozen=True)
class ContentFile:
    """One file of a vetted commit, as the comparison needs it."""

    path: str
    size: int
    sha256: str | None = None
    blob_id: str | None = None
    layout: TensorLayout | None = None

    def digests(self) -> tuple[str, ...]:
        """Its content-index keys: ``sha256:<hex>`` and/or ``gitblob:<hex>``."""
        return tuple(d for d in (f"sha256:{self.sha256}" if self.sha256 else None,
                                 f"gitblob:{self.blob_id}" if self.blob_id else None) if d)


@dataclass(frozen=True)
class CommitContent:
    repo: str
    sha: str
    files: tuple[ContentFile, ...]
    templates: frozenset[str] = field(default_factory=frozenset)  # chat-template sha256s its vet found


def claimed_base(identity: Mapping[str, Any]) -> str | None:
    """The card's `base_model` (cardData), the first one when it lists several; None when it names none."""
    card = identity.get("cardData")
    claimed = card.get("base_model") if isinstance(card, Mapping) else None
    if isinstance(claimed, list):
        claimed = next((c for c in claimed if isinstance(c, str)), None)
    return claimed.strip() if isinstance(claimed, str) and "/" in claimed else None


def same_bytes(a: ContentFile, b: ContentFile) -> bool:
    """Known to hold the same bytes: equal sha256, or (no sha256 on one side) equal git blob id."""
    if a.sha256 and b.sha256:
        return a.sha256 == b.sha256
    return bool(a.blob_id and b.blob_id and a.blob_id == b.blob_id)


@dataclass(frozen=True)
class Comparison:
    """This commit's files against another's, by path."""

    identical: list[str]
    changed: list[str]
    added: list[str]  # here only
    missing: list[str]  # there only


def compare(files: Sequence[ContentFile], other: Sequence[ContentFile]) -> Comparison:
    mine, theirs = {f.path: f for f in files}, {f.path: f for f in other}
    identical = sorted(p for p, f in mine.items() if p in theirs and same_bytes(f, theirs[p]))
    changed = sorted(p for p, f in mine.items() if p in theirs and not same_bytes(f, theirs[p]))
    return Comparison(identical, changed, sorted(mine.keys() - theirs.keys()), sorted(theirs.keys() - mine.keys()))


def mirror_of(files: Sequence[ContentFile], candidates: Iterable[CommitContent], *, repo: str) -> MirrorFact | None:
    """The candidate (an approved vendor-official commit) whose bytes ``repo``'s files mostly are, or None.

    A mirror: the byte-identical files hold at least MIRROR_SHARE of this commit's bytes and at least half its
    files; of several, the one sharing the most bytes (then files, then the smallest repo id, for determinism).
    A repo of ``repo``'s own org is never one: a vendor's repos share bytes, and an org cannot mirror itself.
    """
    total = sum(f.size for f in files) or 1
    best: tuple[tuple[int, int, str], MirrorFact] | None = None
    for candidate in candidates:
        if same_org(candidate.repo, repo):
            continue
        seen = compare(files, candidate.files)
        same = set(seen.identical)
        shared = sum(f.size for f in files if f.path in same)
        if shared < MIRROR_SHARE * total or 2 * len(same) < len(files):
            continue
        fact = MirrorFact(repo=candidate.repo, sha=candidate.sha, identical=len(same), total=len(files),
                          added=seen.added, changed=seen.changed, missing=seen.missing)
        key = (shared, len(same), _reverse(candidate.repo))
        if best is None or key > best[0]:
            best = (key, fact)
    return best[1] if best else None


def same_org(a: str, b: str) -> bool:
    """Both repo ids name one org (case-insensitively, as the Hub does); never for an id without one."""
    return "/" in a and "/" in b and a.split("/", 1)[0].casefold() == b.split("/", 1)[0].casefold()


def _reverse(text: str) -> str:
    return "".join(chr(0x10FFFF - ord(c)) for c in text)  # the smaller id wins a tie under max()


def check_base(this: CommitContent, claimed: str, base: CommitContent | None) -> tuple[BaseFact, list[str]]:
    """The claim ``claimed`` checked against the base's newest approved commit (None: not vetted here),
    and the files new relative to it (none when it cannot be checked: there is nothing to be new against)."""
    layout = combine(f.layout for f in this.files if f.layout)
    if base is None:
        return (BaseFact(claimed=claimed, status="not-vetted", tensor_count=layout.tensors if layout else 0,
                         dtypes=list(layout.dtypes) if layout else []), [])
    seen = compare(this.files, base.files)
    shared_files = [p for p in seen.identical if _leaf(p) in IDENTITY_FILES]
    kinds = _shared_kinds(shared_files, bool(this.templates & base.templates))
    base_layout = combine(f.layout for f in base.files if f.layout)
    tensors = _tensor_match(layout, base_layout)
    weights_match = tensors in ("same", "same-shapes", "same-names")
    status: BaseStatus = ("verified" if kinds and weights_match else "partial" if kinds or weights_match
                          else "shares-nothing")
    fact = BaseFact(claimed=claimed, status=status, sha=base.sha, shared=kinds, shared_files=shared_files,
                    tensors=tensors, tensor_count=layout.tensors if layout else 0,
                    dtypes=list(layout.dtypes) if layout else [],
                    base_dtypes=list(base_layout.dtypes) if base_layout else [])
    return fact, sorted(seen.added + seen.changed)


def _leaf(path: str) -> str:
    return path.rsplit("/", 1)[-1]


# What a shared identity file says. `config` is config.json alone (the architecture): a quant usually changes it
# (its quantization_config), and a copied generation_config.json must not read as a shared architecture.
_KINDS = (("tokenizer", TOKENIZER_FILES), ("template", TEMPLATE_FILES), ("config", frozenset({"config.json"})),
          ("generation-config", frozenset({"generation_config.json"})),
          ("preprocessor-config", frozenset({"preprocessor_config.json"})))


def _shared_kinds(shared_files: Sequence[str], same_template: bool) -> list[str]:
    leaves = {_leaf(p) for p in shared_files}
    kinds = [kind for kind, names in _KINDS if leaves & names]
    if same_template and "template" not in kinds:
        kinds.insert(1 if "tokenizer" in kinds else 0, "template")
    return kinds


def _tensor_match(mine: TensorLayout | None, base: TensorLayout | None) -> TensorMatch:
    if mine is None or base is None:
        return "unknown"
    if mine.typed == base.typed:
        return "same"
    if mine.shapes == base.shapes:
        return "same-shapes"  # same names and shapes, other dtypes: a cast (e.g. BF16 -> FP8)
    return "same-names" if mine.names == base.names else "differ"




__all__ = ["BaseFact", "Lineage", "MirrorFact"]  # the facts, for callers of the comparison
