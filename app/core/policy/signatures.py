"""The policy's `signatures` section at work: which signature a vet checks, and what the engine makes of it.

The requirement is the engine's, not a rule's: a repo a `signatures` entry covers is rejected
(`signature-required`) unless its signature verified against one of the entry's `signed_by` and
matches every file. A signature present but invalid is at least `review` in every tier
(`signature-invalid`): something claims to vouch for the files and does not. A verified signature
adds no reason: it is a fact (`signature` in CEL), never an approval.
"""

from __future__ import annotations

from app.core.manifest import Manifest
from app.core.policy.facts import PolicyFacts, SignatureFact
from app.core.policy.identity import lookalike_of, tier_of
from app.core.policy.loader import LoadedPolicy
from app.core.policy.schema import Policy, SignatureRequirement, TierName
from app.core.ports import SignatureStep, Source
from app.core.signature import ListedIdentity, SignatureCheck
from app.core.signature_step import check_source, unlisted_check
from app.core.verdict import Reason, Verdict, most_severe

SIGNATURE_REQUIRED = "signature-required"
SIGNATURE_INVALID = "signature-invalid"


def requirement_for(policy: Policy, org: str | None, tier: TierName) -> SignatureRequirement | None:
    """The first `signatures` entry covering a repo of ``org`` in ``tier``, if any."""
    return next((r for r in policy.signatures if r.covers(org, tier)), None)


def signature_step(policy: LoadedPolicy) -> SignatureStep:
    """The vet's signature step under ``policy``: the file and identities of the entry covering the repo
    (none: the default `model.sig`, recorded unverified when present, with whose identity of the policy
    signed it if one did; ``signature_step.unlisted_check``)."""

    listed = listed_identities(policy.model)

    def step(source: Source, manifest: Manifest) -> SignatureCheck:
        org = manifest.identity.org
        requirement = requirement_for(policy.model, org, tier_of(org, policy.model.tiers))
        if requirement is None:
            return unlisted_check(source, manifest, listed)
        return check_source(source, manifest, requirement.file, requirement.identities())

    return step


def listed_identities(policy: Policy) -> tuple[ListedIdentity, ...]:
    """Every identity of every `signatures` entry, with the entry's scope: tried on a signature no entry
    covers, to say whose it is (they are all declared in the policy, so this trusts nothing new)."""
    return tuple((identity, r.scope()) for r in policy.signatures for identity in r.identities())


def apply_signatures(policy: Policy, facts: PolicyFacts, tier: TierName,
                     ruled: tuple[Verdict, list[Reason]]) -> tuple[Verdict, list[Reason]]:
    """Raise the verdict for an unmet requirement or an invalid signature, recording why."""
    verdict, reasons = ruled
    others = [f.path for f in facts.files if f.path.endswith(".sig")]
    added = signature_reasons(policy, facts.signature, facts.repo.org, tier, others)
    if not added:
        return verdict, reasons
    return most_severe([verdict, *(r.decision for r in added)], verdict), [*reasons, *added]


def signature_reasons(policy: Policy, signature: SignatureFact | None, org: str | None,
                      tier: TierName, sig_files: list[str] | None = None) -> list[Reason]:
    """``sig_files``: the commit's `*.sig` files, named when the required one is absent."""
    requirement = requirement_for(policy, org, tier)
    if requirement is not None:
        problem = unmet(requirement, signature, sig_files or [])
        if problem is None:
            return []
        scope = f"{tier} repos" if requirement.tier else f"repos of {', '.join(requirement.orgs)}"
        return [Reason(SIGNATURE_REQUIRED, Verdict.REJECT,
                       f"{scope} must ship {requirement.file} signed by an identity the policy lists: {problem}")]
    if signature is not None and signature.state == "invalid" and not policy.unsafe:
        return [Reason(SIGNATURE_INVALID, Verdict.REVIEW,
                       f"{signature.file} is present but does not check out: {signature.problem}")]
    return []


def unmet(requirement: SignatureRequirement, signature: SignatureFact | None,
          sig_files: list[str] | None = None) -> str | None:
    """Why ``signature`` does not meet ``requirement`` (None: it does)."""
    if signature is None:
        return "no signature check was recorded for this vet (vet it again)"
    if signature.file != requirement.file:
        return f"the vet checked {signature.file}, not {requirement.file} (vet it again)"
    if signature.state == "absent":
        other = next((p for p in sig_files or [] if p != requirement.file), None)
        hint = f" (found {other}: a `signatures` entry's `file:` names another file)" if other else ""
        return f"the repo has no {requirement.file}: it is not signed{hint}"
    if signature.state != "verified":
        return signature.problem or f"the signature is {signature.state}"
    matched = signature.signer.matched if signature.signer else None
    if matched not in requirement.labels():
        return f"verified by {matched}, which this requirement does not list (vet it again under this policy)"
    return None


def lookalike_signature_orgs(policy: Policy) -> list[str]:
    """Warnings for `signatures` orgs that imitate a listed org or vendor (`nvidai` for `nvidia`): likely
    typos, and the requirement then covers the imitator, not the vendor."""
    return [f"signatures[{i}] lists org {org!r}, a lookalike of {hit}: a typo? it does not cover {hit}'s repos"
            for i, requirement in enumerate(policy.signatures) for org in requirement.orgs
            if (hit := lookalike_of(org, policy.tiers, policy.identities))]
