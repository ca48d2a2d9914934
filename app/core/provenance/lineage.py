"""Lineage by content, pure: is a commit a copy of a vendor's, and does it share what its card's base shares?

Bytes are compared by digest (sha256 where known, else the git blob id), never read again; weights
also by their tensor layout (app.core.provenance.layout). The store lookups that find the commits to
compare with are app.services.lineage's; the facts land in the report and the policy's `lineage`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.core.provenance.layout import TensorLayout, combine

MIRROR_SHARE = 0.9  # identical files must hold this share of a commit's bytes (and half its files) for a mirror
TEMPLATE_RULE = "chat-template"  # the template scanner's info finding: evidence is the template's sha256
# Files that make a model "the same model" to a runtime without being weights, by what they carry.
TOKENIZER_FILES = frozenset({"tokenizer.json", "tokenizer.model", "tokenizer_config.json", "special_tokens_map.json",
                             "vocab.json", "vocab.txt", "merges.txt", "added_tokens.json"})
TEMPLATE_FILES = frozenset({"chat_template.jinja", "chat_template.json"})
CONFIG_FILES = frozenset({"config.json", "generation_config.json", "preprocessor_config.json"})
IDENTITY_FILES = TOKENIZER_FILES | TEMPLATE_FILES | CONFIG_FILES
BaseStatus = Literal["none", "not-vetted", "verified", "partial", "shares-nothing"]
TensorMatch = Literal["same", "same-shapes", "same-names", "differ", "unknown"]


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


class _Fact(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class MirrorFact(_Fact):
    repo: str = Field(description="The approved vendor-official repo whose bytes these are.")
    sha: str = Field(description="Its commit compared.")
    identical: int = Field(description="Files here byte-identical to the same path there.")
    total: int = Field(description="Files here.")
    added: list[str] = Field(default_factory=list, description="Paths here, not there.")
    changed: list[str] = Field(default_factory=list, description="Paths in both, bytes differ.")
    missing: list[str] = Field(default_factory=list, description="Paths there, not here.")

    @property
    def summary(self) -> str:
        parts = [f"{len(self.added)} added" if self.added else "", f"{len(self.changed)} changed" if self.changed
                 else "", f"{len(self.missing)} missing" if self.missing else ""]
        tail = ", ".join(p for p in parts if p)
        return (f"a mirror of {self.repo} at {self.sha[:12]}: {self.identical} of {self.total} files identical"
                + (f", {tail}" if tail else ""))


class BaseFact(_Fact):
    claimed: str | None = Field(None, description="The card's `base_model` (the first, when it lists several).")
    status: BaseStatus = Field("none", description="none, not-vetted, verified, partial, shares-nothing.")
    sha: str | None = Field(None, description="The base's newest approved vetted commit compared with.")
    shared: list[str] = Field(default_factory=list, description="What is byte-identical: tokenizer, template, "
                              "config (the kinds), then the paths.")
    shared_files: list[str] = Field(default_factory=list, description="Identity files byte-identical to the base's.")
    tensors: TensorMatch = Field("unknown", description="Safetensors layout against the base's.")
    tensor_count: int = Field(0, description="Tensors here (safetensors files).")
    dtypes: list[str] = Field(default_factory=list, description="Dtypes here.")
    base_dtypes: list[str] = Field(default_factory=list, description="Dtypes of the base.")

    @property
    def verified(self) -> bool:
        return self.status == "verified"

    @property
    def summary(self) -> str:
        return base_summary(self)


class Lineage(_Fact):
    """What a vet found of a commit's lineage; ``checked`` false when no store was consulted."""

    checked: bool = Field(False, description="A store was consulted (not for `hfvet scan`, `--no-store`).")
    mirror: MirrorFact | None = None
    base: BaseFact = Field(default_factory=BaseFact)
    new_files: list[str] = Field(default_factory=list, description="Files not byte-identical to the claimed "
                                 "base's: what carries the risk (empty unless the base was checked).")

    @property
    def mirror_of(self) -> str | None:
        return self.mirror.repo if self.mirror else None

    def plain(self) -> dict[str, Any]:
        """The CEL value: a map with the same keys whatever was found (null where nothing was)."""
        mirror = self.mirror
        return {
            "checked": self.checked,
            "mirror_of": mirror.repo if mirror else None,
            "mirror": {"repo": mirror.repo if mirror else None, "sha": mirror.sha if mirror else None,
                       "identical": mirror.identical if mirror else 0, "total": mirror.total if mirror else 0,
                       "added": list(mirror.added if mirror else []), "changed": list(mirror.changed if mirror else []),
                       "missing": list(mirror.missing if mirror else [])},
            "base": {"claimed": self.base.claimed, "status": self.base.status, "verified": self.base.verified,
                     "sha": self.base.sha, "shared": list(self.base.shared),
                     "shared_files": list(self.base.shared_files), "tensors": self.base.tensors,
                     "tensor_count": self.base.tensor_count, "dtypes": list(self.base.dtypes),
                     "base_dtypes": list(self.base.base_dtypes)},
            "new_files": list(self.new_files),
        }

    def summaries(self) -> list[str]:
        """One line per fact, as the dashboard and `hfvet` text output say them."""
        lines = [self.mirror.summary] if self.mirror else []
        if self.base.claimed:
            lines.append(self.base.summary)
        if self.new_files and self.base.status != "not-vetted":
            lines.append(f"new relative to {self.base.claimed}: {', '.join(self.new_files[:8])}"
                         + (f" and {len(self.new_files) - 8} more" if len(self.new_files) > 8 else ""))
        return lines


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


def mirror_of(files: Sequence[ContentFile], candidates: Iterable[CommitContent]) -> MirrorFact | None:
    """The candidate (an approved vendor-official commit) whose bytes these mostly are, or None.

    A mirror: the byte-identical files hold at least MIRROR_SHARE of this commit's bytes and at least half its
    files; of several, the one sharing the most bytes (then files, then the smallest repo id, for determinism).
    """
    total = sum(f.size for f in files) or 1
    best: tuple[tuple[int, int, str], MirrorFact] | None = None
    for candidate in candidates:
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


def _reverse(text: str) -> str:
    return "".join(chr(0x10FFFF - ord(c)) for c in text)  # the smaller id wins a tie under max()


def check_base(this: CommitContent, claimed: str, base: CommitContent | None) -> tuple[BaseFact, list[str]]:
    """The claim ``claimed`` checked against the base's newest approved commit (None: not vetted here),
    and the files new relative to it (every file when it cannot be checked)."""
    layout = combine(f.layout for f in this.files if f.layout)
    if base is None:
        return (BaseFact(claimed=claimed, status="not-vetted", tensor_count=layout.tensors if layout else 0,
                         dtypes=list(layout.dtypes) if layout else []), [f.path for f in this.files])
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


def _shared_kinds(shared_files: Sequence[str], same_template: bool) -> list[str]:
    leaves = {_leaf(p) for p in shared_files}
    kinds = [kind for kind, names in (("tokenizer", TOKENIZER_FILES), ("template", TEMPLATE_FILES),
                                      ("config", CONFIG_FILES)) if leaves & names]
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


def base_summary(fact: BaseFact) -> str:
    claimed = fact.claimed or "nothing"
    if fact.status == "none":
        return "claims no base model"
    if fact.status == "not-vetted":
        return f"base {claimed} not vetted here: cannot check"
    if fact.status == "shares-nothing":
        return f"claims base {claimed} but shares nothing with it"
    parts = [f"shares {_and(fact.shared)}" if fact.shared else "shares no tokenizer, template or config"]
    parts.append(_tensor_words(fact))
    return f"claims base {claimed}: " + "; ".join(p for p in parts if p)


def _tensor_words(fact: BaseFact) -> str:
    count = fact.tensor_count
    if fact.tensors == "same":
        return f"same tensors ({count}), names, shapes and dtypes"
    if fact.tensors in ("same-shapes", "same-names"):
        what = "dtypes differ" if fact.tensors == "same-shapes" else "shapes and dtypes differ"
        return f"same tensor names ({count}); {what} (quantized)"
    if fact.tensors == "differ":
        return "tensor names differ from the base's"
    return "no safetensors layout to compare"


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
