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


@pytest.mark.parametrize(("org", "imitated"), [
    # Affixes written together, as squatters do when a separator looks too obvious.
    ("nvidiaresearch", "nvidia"),
    ("NvidiaOfficial", "nvidia"),
    ("theofficialnvidia", "nvidia"),
    ("QwenTeam", "Qwen"),
    ("deepseek-ai-research", "deepseek-ai"),
    ("mistralai-labs", "mistralai"),
    # Digits for letters (0/o, 1/l/i, 5/s) and digits tacked on.
    ("nv1dia", "nvidia"),
    ("micr0soft", "microsoft"),
    ("mi5tralai", "mistralai"),
    ("nvidia2024", "nvidia"),
    ("Qwen-2", "Qwen"),
    # Letters doubled or dropped beyond the edit budget, and an affix around a typo.
    ("nviiidiaa", "nvidia"),
    ("nviidia-official", "nvidia"),
    ("g00gle-research", "google"),
    # Letter case and every separator.
    ("NVIDIA-AI", "nvidia"),
    ("meta.llama", "meta-llama"),
    ("n-v-i-d-i-a", "nvidia"),
])
def test_lookalikes_as_people_form_them(org: str, imitated: str) -> None:
    assert lookalike_of(org, TIERS) == imitated


@pytest.mark.parametrize("org", [
    # Words that merely start with a vendor's letters, or a vendor name plus an ordinary word.
    "intelligent-systems", "pineapple-ai", "applied-ai", "mistral-community", "NousResearch",
    "QuantFactory", "mlx-community", "TheBloke", "metaresearch", "applebee", "nvidiaish-unrelated-words",
])
def test_affix_rule_needs_the_whole_name(org: str) -> None:
    tiers = Tiers.model_validate({"vendor-official": ["nvidia", "Intel", "apple", "mistralai", "meta-llama"]})
    assert lookalike_of(org, tiers) is None


def test_orgs_the_policy_lists_as_distinct_are_not_lookalikes() -> None:
    tiers = Tiers.model_validate({"vendor-official": ["Intel"], "distinct": ["IntelLabs"]})
    assert lookalike_of("IntelLabs", tiers) is None
    assert tier_of("IntelLabs", tiers) == "third-party"
    assert lookalike_of("Intel-Labs-Official", tiers) == "Intel"


def test_distinct_orgs_may_not_also_sit_in_a_tier() -> None:
    with pytest.raises(ValueError, match="both in a tier and distinct"):
        Tiers.model_validate({"vendor-official": ["Intel"], "distinct": ["intel"]})


def test_default_policy_distinct_orgs_resemble_a_listed_org() -> None:
    """Each `distinct` entry earns its place: without it, the org would be a lookalike."""
    from app.core.policy import load_policy

    model = load_policy(POLICIES / "default.yaml").model
    tiers, identities = model.tiers, model.identities
    bare = tiers.model_copy(update={"distinct": []})
    for org in tiers.distinct:
        assert lookalike_of(org, bare, identities) is not None, org
        assert lookalike_of(org, tiers, identities) is None, org
