"""The policy's `identities`: lookalikes of a vendor's every identity, repo names that spell a vendor path,
and install sources whose owner imitates a vendor."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from app.core.policy import PolicyError, load_policy
from app.core.policy.identity import imitates_org, lookalike_of, repo_lookalike_of
from app.core.policy.schema import Policy
from app.core.policy.vendor_identity import registrable_label, registry_of, source_imitated, source_owner_name

from .helpers import MINIMAL, POLICIES, policy


@cache
def default() -> Policy:
    return load_policy(POLICIES / "default.yaml").model


def imitated(org: str) -> str | None:
    return lookalike_of(org, default().tiers, default().identities)


# Real publishers on the Hub that are no vendor's: none may be judged a lookalike.
REAL_THIRD_PARTIES = [
    "TheBloke", "bartowski", "unsloth", "lmstudio-community", "mlx-community", "neuralmagic", "QuantFactory",
    "MaziyarPanahi", "NousResearch", "cognitivecomputations", "Orenguteng", "turboderp", "LoneStriker",
    "mradermacher", "second-state", "TechxGenus", "solidrust", "bullerwins", "legraphista", "DevQuasar",
    "NikolayKozloff", "ArliAI", "TheDrummer", "Undi95", "NeverSleep", "failspy", "mlabonne", "ggml-org",
    "llava-hf", "EleutherAI", "bigcode", "bigscience", "CompVis", "runwayml", "lllyasviel", "teknium",
    "WizardLMTeam", "openchat", "upstage", "Nexusflow", "argilla", "sentence-transformers", "intfloat",
    "Snowflake", "jinaai", "mixedbread-ai", "Alibaba-NLP", "alibaba-pai", "AIDC-AI", "TencentARC", "OpenGVLab",
    "lmms-lab", "h2oai", "SanctumAI", "PrunaAI", "ModelCloud", "anthracite-org", "allura-org", "Gryphe",
    "Sao10K", "meta-math", "TinyLlama", "LlamaIndex", "CohereForAI", "Habana", "aws-neuron", "keras",
    "keras-io", "hf-internal-testing", "huggingface-course", "stable-diffusion-v1-5", "Tongyi-Zhiwen", "laion",
    "timm", "pytorch", "Kwai-Kolors", "stepfun-ai", "MiniMaxAI", "ByteDance-Seed", "baichuan-inc",
    "inclusionAI", "XiaomiMiMo", "rednote-hilab", "mistral-community", "HuggingFaceH4", "open-r1",
    "deepseek-community", "mlc-ai", "lmsys", "togethercomputer", "databricks", "Helsinki-NLP", "Xenova",
    "onnx-community", "Systran", "pyannote",
]


def test_real_third_party_publishers_are_not_lookalikes() -> None:
    assert len(REAL_THIRD_PARTIES) >= 40
    flagged = {org: imitated(org) for org in REAL_THIRD_PARTIES if imitated(org)}
    assert flagged == {}


@pytest.mark.parametrize(("org", "what"), [
    # A vendor's GitHub org, product name or handle used as a Hub org it does not list.
    ("NVIDIA-NeMo", "nvidia"),  # also an nvidia word run
    ("NVlabs", "NVlabs"),
    ("triton-inference-server", "triton-inference-server"),
    ("QwenLM", "QwenLM"),
    ("nemo", "NeMo"),
    ("AIatMeta", "AIatMeta"),
    ("Alibaba_Qwen", "Qwen"),
    ("GoogleDeepMind", "google-deepmind"),
    # The company stem with an affix, where the company name is not the org.
    ("deepseek-labs", "DeepSeek"),
    ("mistral-official", "Mistral"),
    ("redhat-official", "RedHat"),
    ("kimi-ai", "Kimi"),
    # Vendor and product joined, with or without digits after.
    ("nvidianemo", "NVIDIA-NeMo"),
    ("nvidiatensorrt", "nvidia+TensorRT"),
    ("metallama3", "meta-llama"),
    ("googlegemma", "google+Gemma"),
    # Long product names: one edit away.
    ("nemotr0n", "Nemotron"),
    ("Mixtra1", "Mixtral"),
    ("PaliGema", "PaliGemma"),
])
def test_identity_lookalikes(org: str, what: str) -> None:
    assert imitated(org) == what


@pytest.mark.parametrize("org", ["Phind", "gemmatic", "Llamas-Farm", "metamaterials", "cudaq-hub", "grokking"])
def test_short_names_match_only_whole(org: str) -> None:
    """No word runs and no edits on names under 6 letters: ordinary words around them stay third-party."""
    assert imitated(org) is None


def test_listed_and_distinct_orgs_are_never_lookalikes() -> None:
    model = default()
    for org in (*model.tiers.vendor_official, *model.tiers.trusted, *model.tiers.distinct):
        assert imitated(org) is None, org
    for identity in model.identities.values():
        for org in identity.hub:
            assert imitated(org) is None, org


@pytest.mark.parametrize(("repo", "what"), [
    ("canada-quant/models--nvidia--Llama-3.1-8B", "nvidia"),
    ("canada-quant/nvidia--Llama-3.1-8B", "nvidia"),
    ("canada-quant/NVIDIA-NeMo--canary", "NVIDIA-NeMo"),
    ("canada-quant/nvidia\u2215Llama", "nvidia"),  # DIVISION SLASH
    ("canada-quant/Qwen\uff0fQwen3-8B", "Qwen"),  # FULLWIDTH SOLIDUS
    ("canada-quant/AIatMeta\u2044Llama", "AIatMeta"),  # FRACTION SLASH
    ("canada-quant/deepseek-ai\u29f8R1", "deepseek-ai"),  # BIG SOLIDUS
    ("canada-quant/nv\u0456dia--X", "nvidia"),  # a Cyrillic i in the spelled path
    ("nvldia/Llama", "nvidia"),  # the org itself, as before
])
def test_repo_names_that_spell_a_vendor_path(repo: str, what: str) -> None:
    assert repo_lookalike_of(repo, default().tiers, default().identities) == what


@pytest.mark.parametrize("repo", [
    "bartowski/nvidia_Llama-3.1-Nemotron-70B-Instruct-HF-GGUF",  # vendor + `_`: ordinary naming
    "bartowski/Qwen_Qwen3-8B-GGUF",
    "canada-quant/Llama-3--GGUF",  # a product name is no path
    "canada-quant/models--someone--x",
    "nvidia/models--nvidia--Llama-3.1-8B",  # a vendor's own path
    "RedHatAI/RedHat--x",
    "canada-quant/nvidia-Llama-3.1-8B",
])
def test_ordinary_repo_names_are_not_lookalikes(repo: str) -> None:
    assert repo_lookalike_of(repo, default().tiers, default().identities) is None


@pytest.mark.parametrize(("source", "owner"), [
    ("github.com/NVIDIA/vllm", "NVIDIA"),
    ("raw.githubusercontent.com/Homebrew/install/HEAD/install.sh", "Homebrew"),
    ("docker.io/rocm/vllm", "rocm"),
    ("anaconda.org/nvidia", "nvidia"),
    ("nvidia.github.io/TensorRT-LLM", "nvidia"),
    ("pypi.nvidia.com/simple", "nvidia"),
    ("download.example.co.uk/x", "example"),
    ("127.0.0.1/x", None),
    ("github.com", None),
])
def test_who_owns_a_source(source: str, owner: str | None) -> None:
    assert source_owner_name(source) == owner


def source_lookalike(source: str) -> str | None:
    return source_imitated(source, registry_of(default().tiers, default().identities), imitates_org)


@pytest.mark.parametrize(("source", "vendor"), [
    ("github.com/nvidia-ai/TensorRT-Model-Optimizer", "nvidia"),  # a handle is no GitHub owner
    ("github.com/NVIDIA-NeMo-official/NeMo", "nvidia"),
    ("gitlab.com/deepseek-labs/DeepSeek-V3", "deepseek"),
    ("docker.io/nvldia/tritonserver", "nvidia"),
    ("ghcr.io/qwen-official/qwen-agent", "qwen"),
    ("anaconda.org/nvidla", "nvidia"),
    ("pypi.nvidla.com/simple", "nvidia"),
    ("download.nvidia-cdn.com/install.sh", "nvidia"),
    ("nv\u0456dia.com/install.sh", "nvidia"),  # a Cyrillic i in the host
    ("quay.io/redhat-ai-official/vllm", "redhat"),
])
def test_source_lookalikes(source: str, vendor: str) -> None:
    assert source_lookalike(source) == vendor


@pytest.mark.parametrize("source", [
    "github.com/NVIDIA/vllm", "github.com/NVIDIA-ISAAC-ROS/x", "github.com/intel-analytics/ipex-llm",
    "github.com/google-research-datasets/x", "github.com/mlc-ai/mlc-llm", "github.com/NVIDIA-NeMo/NeMo",
    "github.com/meta-llama/llama-models", "github.com/huggingface/transformers", "github.com/vllm-project/vllm",
    "github.com/neuralmagic/llm-compressor",
    "pypi.nvidia.com/simple", "developer.download.nvidia.com/compute/cuda/x.run", "registry.redhat.io/rhaiis/vllm",
    "mcr.microsoft.com/azureml", "us-docker.pkg.dev/vertex-ai/x", "docker.io/rocm/vllm", "anaconda.org/nvidia",
    "astral.sh/uv/install.sh", "sh.rustup.rs", "download.pytorch.org/whl", "storage.googleapis.com/x",
    "repo.anaconda.com/miniconda/x.sh", "ollama.com/install.sh", "pixi.sh/install.sh", "get.docker.com",
    "github.com/Homebrew/install", "huggingface.co/deepseek-ai/x", "repo.radeon.com/amdgpu-install/x",
    "ascend-repo.obs.cn-east-2.myhuaweicloud.com/CANN/x.run", "files.pythonhosted.org/x",
])
def test_real_sources_are_not_lookalikes(source: str) -> None:
    assert source_lookalike(source) is None


def test_registrable_label() -> None:
    assert registrable_label("a.b.example.com") == "example"
    assert registrable_label("example.com.cn") == "example"
    assert registrable_label("localhost") is None


IDENTITIES = """identities:
  nvidia:
    hub: [nvidia]
    github: [NVIDIA-NeMo]
    names: [NeMo]
rules:
"""


def test_identities_make_lookalikes_in_any_policy(tmp_path: Path) -> None:
    loaded = policy(tmp_path, MINIMAL.replace("rules:\n", IDENTITIES))
    assert lookalike_of("nemo-official", loaded.model.tiers, loaded.model.identities) == "NeMo"
    assert lookalike_of("nemo-official", loaded.model.tiers) is None  # tiers alone do not know NeMo


@pytest.mark.parametrize(("identities", "message"), [
    ("  nvidia:\n    hub: [nvidia-nemo]\n", "in no tier"),
    ("  nvidia:\n    hub: [nvidia]\n  other:\n    hub: [NVIDIA]\n", "listed for 'nvidia' and 'other'"),
    ("  nvidia:\n    names: [NeMo, nemo]\n", "listed twice"),
    ("  nvidia:\n    handles: ['@nvidia']\n", "identities.nvidia.handles.0"),
    ("  nvidia:\n    website: [nvidia.com]\n", "identities.nvidia.website"),
])
def test_bad_identities_are_load_errors(tmp_path: Path, identities: str, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        policy(tmp_path, MINIMAL.replace("rules:\n", f"identities:\n{identities}rules:\n"))


def test_strict_lists_the_same_identities_as_default() -> None:
    strict = load_policy(POLICIES / "strict.yaml").model
    tiered = {o.casefold() for o in (*strict.tiers.vendor_official, *strict.tiers.trusted)}
    expected = {vendor: identity.model_copy(update={"hub": [o for o in identity.hub if o.casefold() in tiered]})
                for vendor, identity in default().identities.items()}
    assert strict.identities == expected
    assert strict.tiers.distinct == default().tiers.distinct


def test_every_tier_org_has_a_vendor_identity() -> None:
    """So `lookalike_of` knows each listed vendor's names, not only its Hub org."""
    hub = {o.casefold() for identity in default().identities.values() for o in identity.hub}
    missing = [o for o in (*default().tiers.vendor_official, *default().tiers.trusted) if o.casefold() not in hub]
    assert missing == []
