"""The verdict as CycloneDX Attestations (CDXA): the policy as a standard, hfvet's claims as declarations.

cyclonedx-python-lib 11 models `definitions.standards` but not `declarations`, so declarations are a
plain dict merged into the serialized document (app.core.provenance.bom); tests validate the result
against the 1.6 schema. The claims are hfvet's own statements about the commit; nothing here is signed.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from cyclonedx.model import Property
from cyclonedx.model.definition import Definitions, Requirement, Standard

from app.core.findings import Severity
from app.core.formats.detect import LOADS_THROUGH_PICKLE
from app.core.provenance.bom_context import BomContext, PolicyRule
from app.core.report import Report
from app.core.signature import listed_by_hub
from app.core.verdict import ENGINE_REASON_IDS, Reason, Verdict

ASSESSOR = "hfvet:assessor"
_CONFORMANCE = {Verdict.APPROVE: 1.0, Verdict.REVIEW: 0.5, Verdict.REJECT: 0.0}
_PICKLED = frozenset(f.value for f in LOADS_THROUGH_PICKLE)


def policy_ref(report: Report) -> str:
    policy = report.decision.policy
    return f"hfvet:policy:{policy.name}@{policy.sha256 or 'none'}"


def _rule_ref(report: Report, rule: str) -> str:
    return f"{policy_ref(report)}#{rule}"


def definitions(report: Report, ctx: BomContext) -> Definitions:
    """The policy that decided as a standard: its rules, and the other rules a reason names (hfvet's floor,
    the tier default, waivers, signatures; a rule of a policy not at hand), so every reason maps to a
    requirement."""
    policy = report.decision.policy
    requirements = [_requirement(report, rule) for rule in ctx.rules]
    known = {rule.id for rule in ctx.rules}
    for reason in dict.fromkeys(r.rule for r in report.decision.reasons):
        if reason not in known:
            requirements.append(Requirement(bom_ref=_rule_ref(report, reason), identifier=reason,
                                            title=_unlisted_title(report, reason)))
    standard = Standard(bom_ref=policy_ref(report), name=policy.name, version=policy.sha256,
                        description="The hfvet trust policy that decided the verdict (version: its sha256).",
                        owner="hfvet", requirements=requirements)
    return Definitions(standards=[standard])


def _unlisted_title(report: Report, rule: str) -> str:
    """A rule a reason names whose text this document lacks: the engine's own, or the deciding policy's."""
    policy = report.decision.policy
    if rule in ENGINE_REASON_IDS:
        return f"{rule} (applied by hfvet with every policy)"
    if policy.sha256 is None:
        return f"{rule} (hfvet's interim severity verdict: no policy)"
    return f"{rule}: a rule of policy {policy.name} (sha256 {policy.sha256}): its text is not at hand"


def _requirement(report: Report, rule: PolicyRule) -> Requirement:
    return Requirement(bom_ref=_rule_ref(report, rule.id), identifier=rule.id, title=rule.description,
                       text=f"when {rule.when}: {rule.decision}",
                       properties=[Property(name="hfvet:decision", value=rule.decision)])


def declarations(report: Report, ctx: BomContext, target: str) -> dict[str, Any]:
    """Assessor hfvet, its claims about ``target`` (the model's bom-ref), and the attestation mapping each
    reason's rule to the claim it made."""
    facts = [_verdict(report), *_checks(report, ctx)]
    claims = [{"bom-ref": f"hfvet:claim:{key}", "target": target, "predicate": predicate, "reasoning": why}
              for key, predicate, why in facts]
    reasons = list(dict.fromkeys(report.decision.reasons))
    claims += [{"bom-ref": f"hfvet:claim:reason-{n}", "target": target,
                "predicate": f"rule {r.rule} decided {r.decision.value}", "reasoning": r.message}
               for n, r in enumerate(reasons, 1)]
    return {
        "assessors": [{"bom-ref": ASSESSOR, "thirdParty": False,
                       "organization": {"name": "hfvet"}}],
        "attestations": [{"summary": f"hfvet verdict for {report.repo or 'a local snapshot'}: "
                                     f"{report.verdict.value}", "assessor": ASSESSOR,
                          "map": [_mapped(report, n, r) for n, r in enumerate(reasons, 1)]}],
        "claims": claims,
        "targets": {"components": [_target(report)]},
        "affirmation": {"statement": _affirmation(report, ctx)},
    }


def _target(report: Report) -> dict[str, Any]:
    """The model as the claims' target (its bom-ref is the inventory's: this copy names it without one)."""
    org, _, name = (report.repo or "").partition("/")
    found: dict[str, Any] = {"type": "machine-learning-model", "name": name or "local-snapshot"}
    if org and name:
        found["group"] = org
    if report.revision:
        found["version"] = report.revision
    return found


def _mapped(report: Report, n: int, reason: Reason) -> dict[str, Any]:
    return {"requirement": _rule_ref(report, reason.rule), "claims": [f"hfvet:claim:reason-{n}", "hfvet:claim:verdict"],
            "conformance": {"score": _CONFORMANCE[reason.decision], "rationale": reason.message}}


def _verdict(report: Report) -> tuple[str, str, str]:
    policy = report.decision.policy
    why = "; ".join(f"{r.rule}: {r.message}" for r in report.decision.reasons) or "no reasons recorded"
    return ("verdict", f"verdict {report.verdict.value} under policy {policy.name} "
                       f"(sha256 {policy.sha256 or 'none: the interim severity verdict'})", why)


def _checks(report: Report, ctx: BomContext) -> list[tuple[str, str, str]]:
    """What was checked, each as it came out: scanning, executable serialization, tier, findings, references."""
    files = report.files
    unscanned = [f.path for f in files if not f.scanned]
    pickled = [f.path for f in files if f.format in _PICKLED]
    found = [("files-scanned", f"{len(files) - len(unscanned)} of {len(files)} files scanned",
              "not scanned: " + ", ".join(unscanned) if unscanned else "every file was read by the scanners for "
              "its format")]
    found.append(("executable-serialization",
                  f"{len(pickled)} file(s) load through pickle" if pickled else "no executable serialization",
                  ", ".join(pickled) if pickled else "no file is a pickle, a legacy torch file or a PyTorch zip"))
    if ctx.tier is not None:
        org = (report.repo or "").partition("/")[0] or "no org"
        found.append(("publisher-tier", f"publisher in tier {ctx.tier}",
                      f"{org} under policy {report.decision.policy.name}"))
    counts = Counter(f.severity for f in report.findings)
    found.append(("findings", f"{len(report.findings)} finding(s)",
                  ", ".join(f"{counts[s]} {s.value}" for s in Severity if counts[s]) or "none"))
    if report.references:
        repos = dict.fromkeys(f"{r.repo}@{r.revision or 'default branch'}" for r in report.references)
        found.append(("references", f"loads {len(repos)} other repo(s)", ", ".join(repos)))
    return found + _provenance(report)


def _provenance(report: Report) -> list[tuple[str, str, str]]:
    """The publisher's signature and the lineage by content, as the vet found them (when it looked)."""
    found: list[tuple[str, str, str]] = []
    if report.signature is not None:
        found.append(("publisher-signature", f"publisher signature ({report.signature.file}): "
                      f"{report.signature.state}", report.signature.summary(listed_by_hub(report.files))))
    lineage = report.lineage
    if lineage is not None and lineage.checked:
        found += [(f"lineage-{n}", line, "by content: files compared by digest with vetted commits in hfvet's store")
                  for n, line in enumerate(lineage.summaries(), 1)]
    return found


def _affirmation(report: Report, ctx: BomContext) -> str:
    stored = f"stored report {ctx.report_id}" if ctx.report_id is not None else "an unstored scan"
    return (f"hfvet {ctx.hfvet_version} states these claims from {stored}. This document is not signed: it proves "
            "nothing by itself; check the commit with `hfvet gate` or a signed attestation.")
