"""The lineage facts a vet records (report `lineage`, the policy's `lineage`): values only.

The comparison that finds them is app.core.provenance.lineage; they live here, beside the report and
verdict that carry them, so those stay free of the provenance package.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

BaseStatus = Literal["none", "not-vetted", "verified", "partial", "shares-nothing"]
TensorMatch = Literal["same", "same-shapes", "same-names", "differ", "unknown"]


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
        return f"a mirror of {self.repo} at {self.sha[:12]}: {self.counts}"

    @property
    def counts(self) -> str:
        """"41 of 43 files identical, 2 added": the summary after the repo and commit (the dashboard links those)."""
        parts = [f"{len(self.added)} added" if self.added else "", f"{len(self.changed)} changed" if self.changed
                 else "", f"{len(self.missing)} missing" if self.missing else ""]
        tail = ", ".join(p for p in parts if p)
        return f"{self.identical} of {self.total} files identical" + (f", {tail}" if tail else "")


class BaseFact(_Fact):
    claimed: str | None = Field(None, description="The card's `base_model` (the first, when it lists several).")
    status: BaseStatus = Field("none", description="none, not-vetted, verified, partial, shares-nothing.")
    sha: str | None = Field(None, description="The base's newest approved vetted commit compared with.")
    shared: list[str] = Field(default_factory=list, description="What is byte-identical, by kind: tokenizer, "
                              "template, config (config.json itself), generation-config, preprocessor-config.")
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
