"""Read, validate and compile a policy file. Anything doubtful is an error, never approve."""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.core.findings import Severity
from app.core.policy.activation import VendorData, build_activation, top_level_names
from app.core.policy.cel import Activation, CelEvalError, CelProgram, compile_cel, run_bool, undeclared_name
from app.core.policy.errors import Issue, PolicyError
from app.core.policy.facts import FileFact, FindingFact, PolicyFacts
from app.core.policy.fields import unknown_fields
from app.core.policy.schema import Policy, cross_check
from app.core.policy.yamlmarks import line_of, load_yaml, validation_issues
from app.core.verdict import PolicyRef

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoadedPolicy:
    model: Policy
    sha256: str
    source: str
    programs: dict[str, CelProgram]  # rule id -> compiled `when` (compiled once per expression text)

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def ref(self) -> PolicyRef:
        return PolicyRef(self.model.name, self.sha256)


def load_policy(path: Path | str) -> LoadedPolicy:
    path = Path(path)
    return policy_from_data(load_yaml(path), str(path))


def policy_from_data(document: Any, source: str = "<policy>") -> LoadedPolicy:
    """Validate a parsed document (ideally from yamlmarks.load_yaml, for line numbers)."""
    if not document:
        raise PolicyError.single(source, 1, "empty policy: nothing would be decided")
    if not isinstance(document, dict):
        raise PolicyError.single(source, 1, "a policy is a YAML mapping")
    try:
        model = Policy.model_validate(document)
    except ValidationError as exc:
        raise PolicyError(validation_issues(exc, source, document)) from exc
    problems = cross_check(model) + _unknown_names(model) + _unknown_fields(model)
    if problems:
        issues = [Issue(source, line_of(document, loc), msg) for loc, msg in problems]
        raise PolicyError(sorted(issues, key=lambda i: i.line or 0))
    if model.unsafe:
        log.warning("UNSAFE policy %r loaded from %s: it approves everything. Development only.",
                    model.name, source)
    programs = {rule.id: compile_cel(rule.when) for rule in model.rules}
    return LoadedPolicy(model, policy_sha256(model), source, programs)


def policy_sha256(model: Policy) -> str:
    """sha256 of the canonical JSON of the validated model.

    YAML comments, quoting, key order, org order and re-wrapped text do not change it;
    any change of meaning (a rule, a list, a waiver) does.
    """
    dumped = model.model_dump(mode="json", by_alias=True)
    # Optional sections added later: a policy without them hashes as it did before they existed.
    for section in ("sources", "identities", "installers", "signatures"):
        if not dumped[section]:
            del dumped[section]
    if not dumped["tiers"]["distinct"]:
        del dumped["tiers"]["distinct"]
    canonical = json.dumps(dumped, sort_keys=True,
                           separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _unknown_names(model: Policy) -> list[tuple[tuple[str | int, ...], str]]:
    """Evaluate each rule on probe inputs to catch misspelled variables (`fidnings`) at load time."""
    known = top_level_names()
    problems: list[tuple[tuple[str | int, ...], str]] = []
    for i, rule in enumerate(model.rules):
        for activation in _probe_activations(model):
            try:
                run_bool(compile_cel(rule.when), activation)
            except CelEvalError as exc:
                name = undeclared_name(str(exc))
                if name and name not in known:
                    problems.append((("rules", i, "when"), f"unknown variable or function {name!r}"))
                    break
    return problems


def _unknown_fields(model: Policy) -> list[tuple[tuple[str | int, ...], str]]:
    """Read the parse trees for misspelt fields (`repo.teir`), which the probes cannot name: a missing key
    is no error in a branch they do not take, and `has()` of one is just false."""
    list_names = tuple(sorted(model.lists))
    return [(("rules", i, "when"), f"rule {rule.id!r}: {field.message()}")
            for i, rule in enumerate(model.rules)
            for field in unknown_fields(rule.when, list_names)]


def _probe_activations(model: Policy) -> list[Activation]:
    one = PolicyFacts(
        files=[FileFact(path="probe.bin", size=1, scanned=False)],
        findings=[FindingFact(path="probe.bin", rule="probe", severity=Severity.MEDIUM, source="probe.example/x")],
    )
    lists = dict(model.lists)
    return [
        build_activation(PolicyFacts(), [], [], ("third-party", None), lists),
        # No tiers: the probe names variables; judging its made-up source for lookalikes would load rapidfuzz.
        build_activation(one, list(one.findings), [], ("vendor-official", None), lists,
                         VendorData(model.sources, model.installers)),
    ]
