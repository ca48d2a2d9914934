"""Evaluate a policy over facts -> Decision. Most severe fired rule wins; errors fail closed.

Under the rules sits the floor (floor.py): no policy short of an unsafe one approves critical
findings or files not fully vetted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Literal

from app.core.findings import Finding
from app.core.manifest import Manifest
from app.core.policy.activation import build_activation
from app.core.policy.cel import Activation, CelEvalError, run_bool
from app.core.policy.facts import FindingFact, PolicyFacts, facts_from
from app.core.policy.floor import apply_floor
from app.core.policy.identity import lookalike_of, tier_of
from app.core.policy.loader import LoadedPolicy
from app.core.policy.schema import Rule, TierName
from app.core.policy.waivers import INFO, apply_waivers
from app.core.ports import DecideFn
from app.core.report import FileReport
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


def make_decide(policy: LoadedPolicy) -> DecideFn:
    """The pipeline's `decide=` hook for this policy."""

    def decide(manifest: Manifest, findings: list[Finding], files: list[FileReport]) -> Decision:
        return evaluate(policy, facts_from(manifest, findings, files))

    return decide


def explain(policy: LoadedPolicy, facts: PolicyFacts, *, today: date | None = None) -> Evaluation:
    model = policy.model
    org = facts.repo.org
    tier, imitated = tier_of(org, model.tiers), lookalike_of(org, model.tiers)
    waivers = apply_waivers(model.waivers, facts, today or datetime.now(UTC).date())
    activation = build_activation(facts, waivers.findings, waivers.waived, (tier, imitated), model.lists,
                                  model.sources)
    results = tuple(
        RuleResult(rule, "waived") if rule.id in waivers.waived_rules
        else _run_rule(policy, rule, activation)
        for rule in model.rules
    )
    verdict, reasons = _combine(policy, results, tier)
    if not policy.model.unsafe:
        verdict, reasons = apply_floor(facts, waivers.findings, waivers.waived, (verdict, reasons))
    decision = Decision(verdict, (*reasons, *waivers.reasons), policy.ref)
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
