"""Real reports of the example repos, vetted once through the fixture hub, to store in test databases."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core.policy import LoadedPolicy, load_policy
from app.core.report import Report
from app.examples import build_examples
from app.hubfixture import FixtureHub
from app.services.vetting import vet_remote
from app.settings import Settings

REVIEW_REPO = "nvidia/Nemotron-Mini-Custom-Code"  # vendor repo with auto_map remote code: `review`
REJECT_REPO = "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP"  # third party with findings: `reject`
APPROVE_REPO = "nvidia/DeepSeek-V4-Flash-NVFP4"  # clean vendor repo: `approve`


@dataclass(frozen=True)
class Vetted:
    review: Report
    reject: Report
    approve: Report
    strict_reject: Report  # REVIEW_REPO vetted under the strict policy, which rejects auto_map


def vet_examples(root: Path) -> Vetted:
    build_examples(root)
    with FixtureHub(root) as hub:
        settings = Settings(HF_ENDPOINT=hub.url)

        def vet(repo: str, policy: str = "default") -> Report:
            return vet_remote(repo, settings=settings, policy_path=Path(policy))

        return Vetted(vet(REVIEW_REPO), vet(REJECT_REPO), vet(APPROVE_REPO), vet(REVIEW_REPO, "strict"))


def policy(name: str) -> LoadedPolicy:
    settings = Settings()
    return load_policy(settings.resolve_policy(Path(name)))
