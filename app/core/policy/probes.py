"""Find `approve` rules that approve third parties whatever they hold, for `hfvet policy check`.

Each approve rule is evaluated against probe facts: a third-party repo with something that must
never pass unseen (a critical finding, an unscanned pickle, ...). A rule that fires on one does
not really look at the findings or files; the engine's floor stops the worst of it, but the
policy says something its authors probably did not mean. Evaluating beats reading the CEL: it
sees through `1 == 1`, `true || x` and tier-only conditions alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.findings import Severity
from app.core.policy.activation import build_activation
from app.core.policy.cel import CelEvalError, run_bool
from app.core.policy.facts import FileFact, FindingFact, PolicyFacts, RepoFacts
from app.core.policy.loader import LoadedPolicy

_REPO = RepoFacts(id="probe-org/probe-model", revision="0" * 40)


def _probe(files: list[FileFact], findings: list[FindingFact]) -> PolicyFacts:
    return PolicyFacts(repo=_REPO, files=files, findings=findings)


# Probe facts, named as the warning says them. The unscanned probes carry no finding on purpose:
# a rule that only reads `findings` would approve them.
PROBES: dict[str, PolicyFacts] = {
    "a critical finding": _probe(
        [FileFact(path="pytorch_model.bin", format="pytorch-zip")],
        [FindingFact(path="pytorch_model.bin", rule="pickle-dangerous-global", severity=Severity.CRITICAL)],
    ),
    "an unscanned pickle": _probe([FileFact(path="model.pkl", format="pickle", scanned=False)], []),
    "an unscanned executable": _probe([FileFact(path="lib.so", format="elf", scanned=False)], []),
    "an executable binary": _probe(
        [FileFact(path="lib.so", format="elf")],
        [FindingFact(path="lib.so", rule="executable-binary", severity=Severity.HIGH)],
    ),
}


@dataclass(frozen=True)
class LaxApproval:
    rule: str
    approves: tuple[str, ...]  # names of the probes it approves

    def message(self, unsafe: bool) -> str:
        floor = ("the policy is unsafe: no floor stops it" if unsafe
                 else "only the engine's floor stops critical findings and unscanned code")
        return f"rule {self.rule!r} would approve a third-party repo with {' or '.join(self.approves)} ({floor})"


def lax_approvals(policy: LoadedPolicy) -> list[LaxApproval]:
    """Every approve rule that fires on at least one probe, with the probes it fires on."""
    lax: list[LaxApproval] = []
    for rule in policy.model.rules:
        if rule.decision != "approve":
            continue
        fired = tuple(name for name, facts in PROBES.items() if _fires(policy, rule.id, facts))
        if fired:
            lax.append(LaxApproval(rule.id, fired))
    return lax


def _fires(policy: LoadedPolicy, rule_id: str, facts: PolicyFacts) -> bool:
    activation = build_activation(facts, list(facts.findings), [], ("third-party", None),
                                  dict(policy.model.lists))
    try:
        return run_bool(policy.programs[rule_id], activation)
    except CelEvalError:
        return False  # an error counts as `review` at run time, not as an approval
