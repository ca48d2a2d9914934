"""Lineage by content through the real vet path: fixture hub, scanners, default policy, the store.

Each repo is vetted with `vet_remote` against a store holding the approved vendor commits, and the
report records what the policy saw: a mirror with its counts, a base claim verified, refuted or not
checkable, and the files new relative to the claimed base.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from app.core.policy import PolicyError, policy_from_data
from app.core.report import Report
from app.core.report_json import dump, load
from app.db.session import Store, upgrade
from app.hubfixture import FixtureHub
from app.services.lineage import StoreLineage
from app.services.vetting import record, vet_remote
from app.settings import Settings
from tests.integration import lineage_repos as repos


class World:
    def __init__(self, settings: Settings, store: Store) -> None:
        self.settings, self.store = settings, store

    def vet(self, repo: str, policy: str = "default") -> Report:
        report = vet_remote(repo, settings=self.settings, policy_path=Path(policy), store=self.store)
        record(self.store, report, requested_revision=None, actor="test")
        return report


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("lineage")
    repos.build_all(folder / "hub")
    url = f"sqlite:///{folder / 'store.db'}"
    upgrade(url)
    store = Store(url)
    with FixtureHub(folder / "hub") as hub:
        world = World(Settings(HF_ENDPOINT=hub.url), store)
        world.vet(repos.BASE)  # vendor-official and clean: approved
        world.vet(repos.VENDOR_QUANT)
        yield world
    store.close()


def test_the_vendor_repos_are_approved_first(world: World) -> None:
    lineage = StoreLineage(world.store, _default(world))
    assert lineage.approved_base(repos.BASE) is not None
    assert lineage.approved_base(repos.VENDOR_QUANT) is not None


def test_a_byte_identical_mirror_of_an_approved_vendor_repo_is_described_with_counts(world: World) -> None:
    report = world.vet(repos.MIRROR)
    lineage = report.lineage
    assert lineage is not None and lineage.checked
    mirror = lineage.mirror
    assert mirror is not None and mirror.repo == repos.VENDOR_QUANT and len(mirror.sha) == 40
    assert mirror.added == ["MIRROR.md"] and mirror.changed == [] and mirror.missing == []
    assert mirror.identical == mirror.total - 1
    assert mirror.summary.startswith(f"a mirror of {repos.VENDOR_QUANT} at {mirror.sha[:12]}: "
                                     f"{mirror.identical} of {mirror.total} files identical, 1 added")
    assert lineage.base.status == "none"  # its card claims no base


def test_a_quantized_derivative_verifies_its_base_claim_and_lists_what_is_new(world: World) -> None:
    lineage = world.vet(repos.QUANT).lineage
    assert lineage is not None and lineage.mirror is None
    base = lineage.base
    assert base.claimed == repos.BASE and base.status == "verified" and base.verified
    assert base.shared == ["tokenizer", "template", "generation-config"]  # config.json differs: no `config`
    assert {"tokenizer.json", "tokenizer_config.json", "generation_config.json"} == set(base.shared_files)
    assert base.tensors == "same-shapes" and base.tensor_count == 5
    assert base.dtypes == ["F8_E4M3"] and base.base_dtypes == ["BF16"]
    assert base.summary == (f"claims base {repos.BASE}: shares tokenizer, template and generation-config; "
                            "same tensor names (5); "
                            "dtypes differ (quantized)")
    assert "config.json" in lineage.new_files and "hf_quant_config.json" in lineage.new_files
    assert "model-00001-of-00001.safetensors" in lineage.new_files and "tokenizer.json" not in lineage.new_files


def test_a_repo_claiming_a_base_it_shares_nothing_with_says_so(world: World) -> None:
    lineage = world.vet(repos.IMPOSTOR).lineage
    assert lineage is not None
    assert lineage.base.status == "shares-nothing" and lineage.base.tensors == "differ"
    assert lineage.base.summary == f"claims base {repos.BASE} but shares nothing with it"


def test_a_base_never_vetted_here_cannot_be_checked(world: World) -> None:
    lineage = world.vet(repos.ORPHAN).lineage
    assert lineage is not None
    assert lineage.base.claimed == "someone/Unvetted-Base" and lineage.base.status == "not-vetted"
    assert lineage.base.summary == "base someone/Unvetted-Base not vetted here: cannot check"
    assert not lineage.base.verified and lineage.base.sha is None
    assert lineage.new_files == []  # nothing to be new relative to


def test_the_vendor_quant_checks_its_own_card_against_the_base(world: World) -> None:
    lineage = world.vet(repos.VENDOR_QUANT).lineage  # vetted again: its card claims the base
    assert lineage is not None and lineage.mirror is None  # not a mirror of itself
    assert lineage.base.claimed == repos.BASE
    assert lineage.base.status == "partial" and lineage.base.tensors == "differ"  # NVFP4 renames and adds tensors


MIRROR_RULE = {"id": "vendor-mirror-with-changes", "decision": "review", "description": "a changed vendor copy",
               "when": 'repo.tier != "vendor-official" && lineage.mirror_of != null'
                       " && size(lineage.mirror.changed) + size(lineage.mirror.added) > 0"}


def test_a_vendor_repo_sharing_bytes_with_its_own_org_is_no_mirror(world: World, tmp_path: Path) -> None:
    lite = world.vet(repos.VENDOR_LITE, str(_with_rules(world, tmp_path, [MIRROR_RULE])))
    assert lite.lineage is not None and lite.lineage.mirror is None  # nvidia cannot mirror nvidia
    assert lite.verdict.value == "approve"
    mirror = world.vet(repos.MIRROR).lineage  # the third party's copy still names its best match
    assert mirror is not None and mirror.mirror_of == repos.VENDOR_QUANT and mirror.mirror is not None
    assert mirror.mirror.changed == []


def _with_rules(world: World, tmp_path: Path, rules: list[dict[str, str]]) -> Path:
    document = yaml.safe_load(world.settings.resolve_policy(Path("default")).read_text())
    document["name"] = "lineage-rules"
    document["rules"] += rules
    path = tmp_path / "lineage-rules.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def test_the_lineage_round_trips_through_the_report_json_and_the_stored_document(world: World) -> None:
    report = world.vet(repos.QUANT)
    again = load(dump(report))
    assert again.lineage == report.lineage
    assert any(f.layout is not None and f.layout.tensors == 5 for f in again.files)


def test_a_policy_rule_reads_the_lineage_facts(world: World, tmp_path: Path) -> None:
    document = yaml.safe_load(world.settings.resolve_policy(Path("default")).read_text())
    document["name"] = "lineage-test"
    document["rules"] += [
        {"id": "false-base-claim", "decision": "reject", "description": "claims a base it shares nothing with",
         "when": 'lineage.base.claimed != null && lineage.base.status == "shares-nothing"'},
        {"id": "vendor-mirror", "decision": "review", "description": "a copy of a vendor repo with files added",
         "when": "lineage.mirror_of != null && size(lineage.mirror.added) > 0"}]
    path = tmp_path / "lineage-test.yaml"
    path.write_text(yaml.safe_dump(document))
    assert policy_from_data(document, "lineage-test").name == "lineage-test"  # the field names are known
    impostor, quant, mirror = (world.vet(r, str(path)) for r in (repos.IMPOSTOR, repos.QUANT, repos.MIRROR))
    assert "false-base-claim" in {r.rule for r in impostor.decision.reasons}
    assert impostor.verdict.value == "reject"
    assert "false-base-claim" not in {r.rule for r in quant.decision.reasons}
    assert "vendor-mirror" in {r.rule for r in mirror.decision.reasons}


def test_a_misspelt_lineage_field_is_refused_when_the_policy_loads() -> None:
    document = {"rules": [{"id": "x", "decision": "review", "description": "x",
                           "when": "lineage.base.verifed"}]}
    with pytest.raises(PolicyError, match="did you mean 'verified'"):
        policy_from_data(_with_defaults(document), "typo")


def _default(world: World):  # type: ignore[no-untyped-def]
    from app.services.policies import policy_for

    policy = policy_for(Path("default"), world.settings)
    assert policy is not None
    return policy


def _with_defaults(document: dict[str, object]) -> dict[str, object]:
    base = yaml.safe_load(Settings().resolve_policy(Path("default")).read_text())
    return {**base, **document}
