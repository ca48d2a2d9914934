"""Evaluate a policy over facts -> Decision. Most severe fired rule wins; errors fail closed.

Under the rules sits the floor (floor.py): no policy short of an unsafe one approves critical
findings or files not fully vetted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Literal

from app.core.findings import Finding
from app.core.manifest import Manifest
from app.core.policy.activation import VendorData, build_activation
from app.core.policy.cel import Activation, CelEvalError, run_bool
from app.core.policy.facts import (
    FindingFact,
    LineageJudge,
    PolicyFacts,
    ReferenceFact,
    ReferenceJudge,
    facts_from,
)
from app.core.policy.floor import apply_floor
from app.core.policy.identity import repo_lookalike_of, tier_of
from app.core.policy.loader import LoadedPolicy
from app.core.policy.schema import Rule, TierName
from app.core.policy.signatures import apply_signatures
from app.core.policy.waivers import INFO, WaiverOutcome, apply_waivers
from app.core.repo_refs import RepoReference, references_from
from app.core.report import FileReport
from app.core.signature import SignatureCheck
from app.core.verdict import Decision, Reason, Verdict, most_severe

Status = Literal["fired", "not-fired", "error", "waived"]


@dataclass(frozen=True)
class RuleResult:
    rule: Rule
    status: Status
    decision: Verdict | None = None  # the decision it contributes (fired or error)
    detail: str = ""


@dataclass(frozen=True)
class Evaluation:
    """A decision plus everything `hfvet policy explain` shows about how it was reached."""

    decision: Decision
    tier: TierName
    lookalike_of: str | None
    results: tuple[RuleResult, ...]
    waived: tuple[FindingFact, ...]


def evaluate(policy: LoadedPolicy, facts: PolicyFacts, *, today: date | None = None) -> Decision:
    return explain(policy, facts, today=today).decision


def make_decide(policy: LoadedPolicy, judge: ReferenceJudge | None = None,
                lineage: LineageJudge | None = None) -> PolicyDecide:
    """The pipeline's `decide=` hook for this policy; ``judge`` says which referenced repos the store approves,
    ``lineage`` what the store says of the commit's lineage (recorded in the decision, so in the report)."""
    return PolicyDecide(policy, judge, lineage)


@dataclass(frozen=True)
class PolicyDecide:
    """A ``DecideFn`` that also judges the vet's signature check (``SignatureAwareDecide``)."""

    policy: LoadedPolicy
    judge: ReferenceJudge | None = None
    lineage: LineageJudge | None = None

    def __call__(self, manifest: Manifest, findings: list[Finding], files: list[FileReport]) -> Decision:
        return self.with_signature(manifest, findings, files, None)

    def with_signature(self, manifest: Manifest, findings: list[Finding], files: list[FileReport],
                       signature: SignatureCheck | None) -> Decision:
        seen = self.lineage(manifest, findings, files) if self.lineage is not None else None
        facts = facts_from(manifest, findings, files, lineage=seen, signature=signature)
        return evaluate_referencing(self.policy, facts, references_from(findings), self.judge)


def evaluate_referencing(policy: LoadedPolicy, facts: PolicyFacts, references: Sequence[RepoReference],
                         judge: ReferenceJudge | None) -> Decision:
    """evaluate(), with ``judge`` asked about ``references`` only when the verdict could depend on it.

    Without a judge every reference is unknown: not vetted, not approved (fail closed).
    """
    if judge is None or not depends_on_references(policy, facts, references):
        return evaluate(policy, facts)
    return evaluate(policy, facts.model_copy(update={"reference_status": list(judge(references))}))


def depends_on_references(policy: LoadedPolicy, facts: PolicyFacts, references: Sequence[RepoReference], *,
                          today: date | None = None) -> bool:
    """Could the store's judgement of ``references`` change the verdict?

    Asking costs store reads and hub calls (a branch is resolved), so only the rules that read
    `referenced_repos` are run, with every reference unknown and with every one approved: if none
    of them comes out differently, the judgement cannot matter (under the default policy, a card's
    `base_model` mention never does).
    """
    if not references or not reads_references(policy):
        return False
    unknown = _context(policy, facts.model_copy(update={"reference_status": []}), today).activation
    assumed = [ReferenceFact(repo=r.repo, revision=r.revision, vetted=True, approved=True) for r in references]
    context = _context(policy, facts.model_copy(update={"reference_status": assumed}), today)
    reading = [r for r in policy.model.rules if "referenced_repos" in r.when and r.id not in context.waived_rules]
    return any(_run_rule(policy, r, unknown).status != _run_rule(policy, r, context.activation).status
               for r in reading)


def reads_references(policy: LoadedPolicy) -> bool:
    """Does a rule read `referenced_repos`? Only then can a reference's approval change the verdict."""
    return any("referenced_repos" in rule.when for rule in policy.model.rules)


@dataclass(frozen=True)
class _Context:
    tier: TierName
    imitated: str | None
    waivers: WaiverOutcome
    activation: Activation

    @property
    def waived_rules(self) -> set[str]:
        return self.waivers.waived_rules


def _context(policy: LoadedPolicy, facts: PolicyFacts, today: date | None) -> _Context:
    """Identity, waivers and the CEL variables: what every rule of ``policy`` runs against."""
    model = policy.model
    tier = tier_of(facts.repo.org, model.tiers)
    imitated = repo_lookalike_of(facts.repo.id, model.tiers, model.identities)
    waivers = apply_waivers(model.waivers, facts, today or datetime.now(UTC).date())
    activation = build_activation(facts, waivers.findings, waivers.waived, (tier, imitated), model.lists,
                                  VendorData.of(model))
    return _Context(tier, imitated, waivers, activation)


def explain(policy: LoadedPolicy, facts: PolicyFacts, *, today: date | None = None) -> Evaluation:
    model = policy.model
    context = _context(policy, facts, today)
    tier, imitated, waivers, activation = context.tier, context.imitated, context.waivers, context.activation
    results = tuple(
        RuleResult(rule, "waived") if rule.id in waivers.waived_rules
        else _run_rule(policy, rule, activation)
        for rule in model.rules
    )
    verdict, reasons = _combine(policy, results, tier)
    if not policy.model.unsafe:
        verdict, reasons = apply_floor(facts, waivers.findings, waivers.waived, (verdict, reasons),
                                       model.installers)
    verdict, reasons = apply_signatures(model, facts, tier, (verdict, reasons))
    decision = Decision(verdict, (*reasons, *waivers.reasons), policy.ref,
                        facts.lineage if facts.lineage.checked else None)
    return Evaluation(decision, tier, imitated, results, tuple(waivers.waived))


def _combine(
    policy: LoadedPolicy, results: tuple[RuleResult, ...], tier: TierName
) -> tuple[Verdict, list[Reason]]:
    """Most severe contributed decision wins; nothing contributed -> the tier's default."""
    reasons = [_rule_reason(r) for r in results if r.decision is not None]
    verdict = most_severe([r.decision for r in reasons], Verdict.APPROVE)
    if not reasons:
        verdict = Verdict(policy.model.default.for_tier(tier))
        reasons.append(Reason("default", verdict, f"no rule fired; the policy default for {tier} repos"))
    if policy.model.unsafe:
        warning = f"policy {policy.name!r} is UNSAFE (development only)"
        reasons.insert(0, Reason("unsafe-policy", INFO, warning))
    return verdict, reasons


def _run_rule(policy: LoadedPolicy, rule: Rule, activation: Activation) -> RuleResult:
    try:
        fired = run_bool(policy.programs[rule.id], activation)
    except CelEvalError as exc:
        # Fail closed: a rule that cannot be evaluated counts as at least `review`.
        decision = most_severe([Verdict(rule.decision), Verdict.REVIEW], Verdict.REVIEW)
        return RuleResult(rule, "error", decision, str(exc))
    if fired:
        return RuleResult(rule, "fired", Verdict(rule.decision))
    return RuleResult(rule, "not-fired")


def _rule_reason(result: RuleResult) -> Reason:
    assert result.decision is not None  # noqa: S101 - only fired or failed rules give reasons
    if result.status == "error":
        return Reason(result.rule.id, result.decision,
                      f"rule could not be evaluated (fail closed): {result.detail}")
    return Reason(result.rule.id, result.decision, result.rule.description)
