"""The policy's vendor data: `sources`, `identities` and `installers` (pydantic v2, part of schema.py).

Field descriptions here are documentation: `policies/README.md` is generated from them.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from app.core.policy.vendor_identity import MULTI_TENANT

OrgName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")]
# `host[/path]`, no scheme: github.com/NVIDIA/*, nvcr.io/nim/*, pypi.nvidia.com, anaconda.org/nvidia.
SourcePattern = Annotated[str, StringConstraints(
    pattern=r"^(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,63}(?::\d{1,5})?(?:/[A-Za-z0-9._*~+-]+)*/?$", max_length=200)]
# A company or product name as people write it: `NVIDIA`, `TensorRT-LLM`, `Black Forest Labs`.
VendorName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9 .+_-]{0,63}$")]
# A social handle without `@`: `NVIDIAAI`, `deepseek_ai`.
Handle = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,49}$")]


class Identity(BaseModel):
    """One vendor's names: what a squatter would imitate."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    hub: list[OrgName] = Field(
        default_factory=list, description="Its Hugging Face orgs; each must sit in a tier (checked on load).")
    github: list[OrgName] = Field(default_factory=list, description="Its GitHub orgs (`NVIDIA`, `NVIDIA-NeMo`).")
    names: list[VendorName] = Field(
        default_factory=list, description="Company and product names (`NVIDIA`, `NeMo`, `TensorRT`, `Nemotron`).")
    handles: list[Handle] = Field(default_factory=list, description="Social handles without `@` (`NVIDIAAI`).")

    @field_validator("hub", "github", "names", "handles")
    @classmethod
    def _sorted_unique(cls, values: list[str]) -> list[str]:
        folded = [v.casefold() for v in values]
        dupes = sorted({v for v in folded if folded.count(v) > 1})
        if dupes:
            raise ValueError(f"listed twice: {', '.join(dupes)}")
        return sorted(values, key=str.casefold)  # order carries no meaning: keep the hash stable


def sorted_patterns(kind: str, table: dict[str, list[str]]) -> dict[str, list[str]]:
    """`sources` and `installers`: non-empty, no duplicates, no dot segments; sorted for a stable hash."""
    for key, patterns in table.items():
        if not patterns:
            raise ValueError(f"{kind} of {key!r}: list at least one")
        if len({p.casefold() for p in patterns}) != len(patterns):
            raise ValueError(f"{kind} of {key!r}: a pattern is listed twice")
        if any(part in (".", "..") for p in patterns for part in p.split("/")):
            raise ValueError(f"{kind} of {key!r}: `.` and `..` are not path segments of a source")
    return {key: sorted(p, key=str.casefold) for key, p in sorted(table.items(), key=lambda i: i[0].casefold())}


def literal_owners(installers: dict[str, list[str]]) -> dict[str, list[str]]:
    """On a shared host an installer pattern names the owner exactly: `github.com/*` vouches for anyone."""
    for tool, patterns in installers.items():
        for pattern in patterns:
            host, _, path = pattern.partition("/")
            if host.casefold() in MULTI_TENANT and (not path or "*" in path.split("/", 1)[0]):
                raise ValueError(f"installers of {tool!r}: {pattern!r} must name the owner on {host}")
    return installers


def sorted_identities(identities: dict[str, Identity]) -> dict[str, Identity]:
    return dict(sorted(identities.items(), key=lambda i: i[0].casefold()))


def identity_problems(identities: dict[str, Identity], tier_orgs: list[str]) -> list[tuple[tuple[str | int, ...], str]]:
    """Each `hub` org sits in a tier and belongs to one vendor."""
    problems: list[tuple[tuple[str | int, ...], str]] = []
    listed = {o.casefold() for o in tier_orgs}
    owner: dict[str, str] = {}
    for vendor, identity in identities.items():
        for i, org in enumerate(identity.hub):
            if org.casefold() not in listed:
                problems.append((("identities", vendor, "hub", i),
                                 f"hub org {org!r} of {vendor!r} is in no tier (vendor-official or trusted)"))
            if owner.setdefault(org.casefold(), vendor) != vendor:
                problems.append((("identities", vendor, "hub", i),
                                 f"hub org {org!r} is listed for {owner[org.casefold()]!r} and {vendor!r}"))
    return problems
