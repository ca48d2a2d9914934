"""The shape of `policies/*.yaml` (pydantic v2, unknown keys rejected).

Field descriptions here are the documentation: `policies/README.md` is generated from them.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from app.core.ids import COMMIT_HEX
from app.core.policy.cel import canonical_cel, compile_cel
from app.core.policy.schema_signatures import SignatureRequirement
from app.core.policy.schema_vendors import (
    Identity,
    OrgName,
    SourcePattern,
    identity_problems,
    literal_owners,
    sorted_identities,
    sorted_patterns,
)
from app.core.verdict import ENGINE_REASON_IDS

__all__ = ["Identity", "OrgName", "SignatureRequirement", "SourcePattern"]

DecisionName = Literal["approve", "review", "reject"]
TierName = Literal["vendor-official", "trusted", "third-party"]
TIERS: tuple[TierName, ...] = ("vendor-official", "trusted", "third-party")

Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")]
RepoId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._-]+$")]
Revision = Annotated[str, StringConstraints(pattern=rf"^({COMMIT_HEX}|\*)$")]
ListName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
Text = Annotated[str, StringConstraints(min_length=1)]

# Reason ids the engine itself emits; a policy rule may not take them (declared beside Reason, so the BOM,
# which the policy package imports through the signature check, can name them too).
RESERVED_RULE_IDS = ENGINE_REASON_IDS


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _one_line(text: str) -> str:
    """Re-wrapping prose in YAML must not change the policy hash."""
    return " ".join(text.split())


class Tiers(_Model):
    vendor_official: list[OrgName] = Field(
        alias="vendor-official", min_length=1,
        description="Orgs whose own uploads are first-party (e.g. nvidia, deepseek-ai, meta-llama, Qwen).",
    )
    trusted: list[OrgName] = Field(
        default_factory=list,
        description="Third parties that passed human scrutiny. Never lookalikes. Optional.",
    )
    distinct: list[OrgName] = Field(
        default_factory=list,
        description="Orgs whose names resemble a listed org but are known to be someone else (or the "
        "vendor's own, not yet promoted): never lookalikes, still third-party. Optional.",
    )

    @field_validator("vendor_official", "trusted", "distinct")
    @classmethod
    def _sorted_unique(cls, orgs: list[str]) -> list[str]:
        folded = [o.casefold() for o in orgs]
        dupes = sorted({o for o in folded if folded.count(o) > 1})
        if dupes:
            raise ValueError(f"org listed twice: {', '.join(dupes)}")
        return sorted(orgs, key=str.casefold)  # order carries no meaning: keep the hash stable

    @model_validator(mode="after")
    def _disjoint(self) -> Tiers:
        both = {o.casefold() for o in self.vendor_official} & {o.casefold() for o in self.trusted}
        if both:
            raise ValueError(f"org in both vendor-official and trusted: {', '.join(sorted(both))}")
        listed = {o.casefold() for o in (*self.vendor_official, *self.trusted)} & {o.casefold() for o in self.distinct}
        if listed:
            raise ValueError(f"org both in a tier and distinct: {', '.join(sorted(listed))}")
        return self


class Defaults(_Model):
    vendor_official: DecisionName = Field(
        "review", alias="vendor-official", description="When no rule fires for a vendor-official repo."
    )
    trusted: DecisionName = Field("review", description="When no rule fires for a trusted repo.")
    third_party: DecisionName = Field(
        "review", alias="third-party", description="When no rule fires for anyone else. Never approve."
    )

    @model_validator(mode="before")
    @classmethod
    def _one_for_all(cls, data: Any) -> Any:
        # `default: review` is shorthand for the same decision in every tier.
        if isinstance(data, str):
            return {"vendor-official": data, "trusted": data, "third-party": data}
        return data

    @model_validator(mode="after")
    def _third_party_not_approved(self) -> Defaults:
        if self.third_party == "approve":
            raise ValueError("the default for third-party repos may not be approve")
        return self

    def for_tier(self, tier: TierName) -> DecisionName:
        return {"vendor-official": self.vendor_official, "trusted": self.trusted}.get(tier, self.third_party)


class Rule(_Model):
    id: Slug = Field(description="Stable kebab-case id; recorded in every reason and fixture expectation.")
    description: Text = Field(description="Why the rule exists; shown as the reason's message.")
    when: Text = Field(description="CEL expression over the variables below; must give a bool.")
    decision: DecisionName = Field(description="approve, review or reject when `when` is true.")

    @field_validator("description")
    @classmethod
    def _one_line_description(cls, text: str) -> str:
        return _one_line(text)

    @field_validator("when")
    @classmethod
    def _compiles(cls, expr: str) -> str:
        expr = canonical_cel(expr)
        compile_cel(expr)  # raises CelCompileError (a ValueError): reported with the line
        return expr


class FindingMatch(_Model):
    rule: Text = Field(description="Finding rule id or glob, e.g. `pickle-unknown-global`, `yara:*`.")
    path: Text = Field("*", description="Repo-relative path glob of the finding (default: any file).")


class Waiver(_Model):
    repo: RepoId = Field(description="`org/name` the exception is for.")
    revision: Revision = Field(
        description="The 40-hex commit it was granted for, or `*` for any (a `*` waiver never drops "
        "critical findings; a waived critical finding still means review, see the floor).",
    )
    rule: Slug | None = Field(None, description="Policy rule id to switch off for this repo+revision.")
    finding: FindingMatch | None = Field(None, description="Findings to drop before evaluation.")
    reason: Text = Field(description="Why the exception is acceptable.")
    approver: Text = Field(description="Who granted it.")
    expires: date = Field(description="Last day (inclusive, UTC) the waiver applies; then it is reported.")

    @model_validator(mode="after")
    def _one_target(self) -> Waiver:
        if (self.rule is None) == (self.finding is None):
            raise ValueError("a waiver needs exactly one of `rule` or `finding`")
        return self


class Policy(_Model):
    name: Slug = Field(description="Recorded with every verdict, with the sha256 of the policy.")
    description: Text = Field(description="What the policy is for.")
    unsafe: bool = Field(
        False, description="Must be true for a policy that approves unconditionally. Exempts it from "
        "the floor (see above); loading it warns."
    )
    tiers: Tiers = Field(description="Org tiers; every org not listed is `third-party`.")
    lists: dict[ListName, list[str]] = Field(
        default_factory=dict, description="Named string lists, visible in CEL as `lists.<name>`."
    )
    rules: list[Rule] = Field(min_length=1, description="Ordered rules; the most severe decision fired wins.")
    default: Defaults = Field(
        default_factory=Defaults,
        description="Decision when no rule fires: one word for all tiers, or a map per tier.",
    )
    waivers: list[Waiver] = Field(default_factory=list, description="Exceptions as data, each with expiry.")
    sources: dict[OrgName, list[SourcePattern]] = Field(
        default_factory=dict,
        description="Code sources a listed org owns: its forks, package indexes, container registries "
        "(`github.com/NVIDIA/*`, `nvcr.io/nim/*`, `pypi.nvidia.com`), as `host/path` globs. A finding "
        "whose `source` matches is `vendor_source` in CEL. A key names the vendor (usually an org in a "
        "tier); listing a vendor's sources trusts where its code comes from, not its repos.",
    )

    identities: dict[OrgName, Identity] = Field(
        default_factory=dict,
        description="A vendor's identities, keyed by vendor like `sources`: its Hub orgs (`hub`, each in a "
        "tier), GitHub orgs, company and product names, social handles. An org that imitates any of them is "
        "a lookalike (`repo.lookalike`), and so is a source owner (`f.source_lookalike`).",
    )
    installers: dict[Slug, list[SourcePattern]] = Field(
        default_factory=dict,
        description="Documented install scripts of tools (`astral.sh/uv/*`, `sh.rustup.rs`), as `host/path` "
        "globs (on a shared host such as github.com, with a literal owner). A `download-and-execute` finding "
        "whose `source` matches one has `f.installer` set to the tool, and the floor does not count it as "
        "critical.",
    )

    signatures: list[SignatureRequirement] = Field(
        default_factory=list,
        description="Vendor signatures (OpenSSF model signing, `model.sig`) a tier's or an org's repos must carry, "
        "checked against the Hub's hashes before download. The first entry covering a repo applies. A repo it "
        "covers whose signature is absent, by none of `signed_by`, or not matching every file is rejected "
        "(reason `signature-required`); a verified signature never approves by itself (docs/provenance.md).",
    )

    @field_validator("description")
    @classmethod
    def _one_line_description(cls, text: str) -> str:
        return _one_line(text)

    @field_validator("sources")
    @classmethod
    def _sources_sorted(cls, sources: dict[str, list[str]]) -> dict[str, list[str]]:
        return sorted_patterns("sources", sources)

    @field_validator("installers")
    @classmethod
    def _installers_sorted(cls, installers: dict[str, list[str]]) -> dict[str, list[str]]:
        return sorted_patterns("installers", literal_owners(installers))

    @field_validator("identities")
    @classmethod
    def _identities_sorted(cls, identities: dict[str, Identity]) -> dict[str, Identity]:
        return sorted_identities(identities)


def cross_check(policy: Policy) -> list[tuple[tuple[str | int, ...], str]]:
    """Checks spanning fields, as (location, message): the loader turns locations into lines."""
    problems: list[tuple[tuple[str | int, ...], str]] = []
    seen: set[str] = set()
    for i, rule in enumerate(policy.rules):
        if rule.id in seen or rule.id in RESERVED_RULE_IDS:
            problems.append((("rules", i, "id"), f"rule id {rule.id!r} is duplicated or reserved"))
        seen.add(rule.id)
    for i, waiver in enumerate(policy.waivers):
        if waiver.rule is not None and waiver.rule not in seen:
            problems.append((("waivers", i, "rule"), f"waiver names unknown rule {waiver.rule!r}"))
    unconditional = [i for i, r in enumerate(policy.rules) if r.decision == "approve" and r.when == "true"]
    if unconditional and not policy.unsafe:
        problems.append((("rules", unconditional[0], "when"), "approves everything: requires `unsafe: true`"))
    if policy.unsafe != policy.name.startswith("unsafe-"):
        problems.append((("name",), "a policy is `unsafe: true` exactly when its name starts with `unsafe-`"))
    return problems + identity_problems(policy.identities, [*policy.tiers.vendor_official, *policy.tiers.trusted])
