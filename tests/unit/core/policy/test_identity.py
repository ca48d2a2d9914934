"""Identity checks: tiers and lookalike orgs."""

from __future__ import annotations

import pytest

from app.core.policy.identity import lookalike_of, skeleton, tier_of
from app.core.policy.schema import Tiers

from .helpers import POLICIES

TIERS = Tiers.model_validate({
    "vendor-official": ["nvidia", "deepseek-ai", "meta-llama", "Qwen", "mistralai", "google", "microsoft"],
    "trusted": ["unsloth"],
})


@pytest.mark.parametrize(("org", "imitated"), [
    ("nvldia", "nvidia"),
    ("nvidia-ai", "nvidia"),
    ("deepseek-al", "deepseek-ai"),
    ("meta-l1ama", "meta-llama"),
    ("nvidia_official", "nvidia"),
    ("NVIDlA", "nvidia"),
    ("deep-seek-ai", "deepseek-ai"),
    ("rneta-llama", "meta-llama"),
    ("nv\u0456d\u0456a", "nvidia"),  # Cyrillic i
    ("g00gle", "google"),
    ("unsl0th", "unsloth"),  # trusted orgs are imitated too
])
def test_lookalikes(org: str, imitated: str) -> None:
    assert lookalike_of(org, TIERS) == imitated


@pytest.mark.parametrize("org", [
    "nvidia", "NVIDIA", "canada-quant", "deepseek-ai", "unsloth", "TheBloke", "google", "bartowski",
    "lmstudio-community", "mlx-community", "NousResearch", "mistral-community", "EleutherAI", None,
])
def test_not_lookalikes(org: str | None) -> None:
    assert lookalike_of(org, TIERS) is None


def test_default_policy_lists_do_not_flag_each_other_or_common_publishers() -> None:
    from app.core.policy import load_policy

    tiers = load_policy(POLICIES / "default.yaml").model.tiers
    for org in [*tiers.vendor_official, "TheBloke", "bartowski", "unsloth", "mradermacher", "QuantFactory"]:
        assert lookalike_of(org, tiers) is None, org


def test_tiers_are_case_insensitive_and_default_to_third_party() -> None:
    assert tier_of("NVIDIA", TIERS) == "vendor-official"
    assert tier_of("Unsloth", TIERS) == "trusted"
    assert tier_of("canada-quant", TIERS) == "third-party"
    assert tier_of(None, TIERS) == "third-party"


def test_skeleton_merges_lookalike_characters() -> None:
    assert skeleton("Meta-L1ama") == skeleton("meta_llama") == "metallama"
    assert skeleton("rnicrosoft") == skeleton("microsoft")
