"""What an example repo is expected to produce: the contract the demo and the tests share."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core.findings import Severity
from app.core.verdict import Verdict


@dataclass(frozen=True)
class ExampleRepo:
    repo_id: str  # "org/name"; written to root/org/name/
    description: str  # one line for the demo table
    expected_verdict: Verdict  # under the default trust policy
    # Finding rule ids a content scan must produce (all of them) ...
    expected_rules: tuple[str, ...] = ()
    # ... and groups of alternatives, at least one id of each group.
    expected_rules_any: tuple[tuple[str, ...], ...] = ()
    # The worst severity a scan may report (None: no limit), e.g. MEDIUM = no high/critical.
    max_severity: Severity | None = None
    # Why the policy decides so when the reason is identity, not content (e.g. a lookalike org).
    policy_note: str = ""

    @property
    def org(self) -> str:
        return self.repo_id.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.repo_id.split("/", 1)[1]

    def path(self, root: Path) -> Path:
        return root / self.org / self.name
