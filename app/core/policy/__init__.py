"""Trust policy as code: `policies/*.yaml` -> a Decision for every vet.

Findings are not decisions: which publisher is trusted, and what a finding means for it,
is a reviewed policy file recorded (name + sha256) with every verdict.
"""

from app.core.policy.engine import Evaluation, RuleResult, evaluate, explain, make_decide
from app.core.policy.errors import Issue, PolicyError
from app.core.policy.facts import PolicyFacts, facts_from, facts_from_report_dict
from app.core.policy.loader import LoadedPolicy, load_policy, policy_from_data, policy_sha256

__all__ = [
    "Evaluation",
    "Issue",
    "LoadedPolicy",
    "PolicyError",
    "PolicyFacts",
    "RuleResult",
    "evaluate",
    "explain",
    "facts_from",
    "facts_from_report_dict",
    "load_policy",
    "make_decide",
    "policy_from_data",
    "policy_sha256",
]
