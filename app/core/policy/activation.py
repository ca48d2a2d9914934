"""The CEL variables a rule's `when` sees. VARIABLES is also the documentation table."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.core.closure import closure_from
from app.core.findings import Severity
from app.core.formats.detect import HOLDS_WEIGHTS, LOADS_THROUGH_PICKLE
from app.core.policy.cel import Activation, to_plain
from app.core.policy.facts import FindingFact, PolicyFacts, ReferenceFact, SignatureFact
from app.core.policy.floor import CODE_FORMATS
from app.core.policy.identity import imitates_org, repo_lookalike_of, tier_of
from app.core.policy.kinds import kind_of
from app.core.policy.schema import Identity, Policy, TierName, Tiers
from app.core.policy.sources import installer_of, source_owner
from app.core.policy.vendor_identity import Registry, registry_of, source_imitated
from app.core.repo_refs import references_from

# Formats whose loading runs pickle (content-sniffed, see app/core/formats.py and sniff.py).
SEVERITY_RANKS = {s.value: s.rank for s in Severity}
_CODE_FORMATS = sorted(str(f) for f in CODE_FORMATS)


@dataclass(frozen=True)
class Variable:
    name: str
    type: str
    description: str


VARIABLES: tuple[Variable, ...] = (
    Variable("repo.id", "string or null", "`org/name`; null for a local scan without `--repo`."),
    Variable("repo.org", "string or null", "The part before `/`; null without a repo id."),
    Variable("repo.name", "string or null", "The part after `/`."),
    Variable("repo.revision", "string or null", "The 40-hex commit vetted, when known."),
    Variable("repo.tier", "string",
             "`vendor-official`, `trusted` or `third-party` (unknown orgs, no repo id)."),
    Variable("repo.lookalike", "bool", "The org imitates a vendor-official or trusted org or a vendor's "
             "`identities`, or the repo name imitates a vendor's path (`models--nvidia--X`, or `nvidia` and a "
             "slash look-alike such as U+2215)."),
    Variable("repo.lookalike_of", "string or null", "The org or identity it imitates (`NVIDIA+NeMo` for two "
             "of a vendor's names joined)."),
    Variable("repo.facts", "map", "Hub metadata as given by the source (author, tags, gated, private, "
             "cardData...). Keys may be missing: guard with `has(repo.facts.x)`."),
    Variable("files", "list(map)", "One per file: `path`, `size`, `format` (content-sniffed), "
             "`scanned` (bool), `sha256` (or null)."),
    Variable("findings", "list(map)", "After waivers: `path`, `member`, `scanner`, `rule`, `kind` (what the "
             "rule declares it means: `incomplete`, `dangerous-capability`... see Rule kinds below; `unknown` "
             "for a rule id this hfvet does not declare), `severity` "
             "(info..critical), `rank` (0..4), `message`, `source` (where code would come from: "
             "`github.com/owner/repo`, an image, an index; or null), `source_owner` (the vendor whose "
             "policy `sources` list it, or null), `vendor_source` (bool: `source_owner` is set), "
             "`source_lookalike` (the vendor whose `identities` the source's owner imitates: a GitHub or "
             "GitLab owner, an image namespace, a conda channel, or a host's registrable-domain label; or null) "
             "and `installer` (a `download-and-execute` finding whose source is a listed `installers` script: "
             "the tool; else null)."),
    Variable("waived", "list(map)", "Findings removed by waivers (same shape as `findings`)."),
    Variable("finding_rules", "list(string)", "Distinct `rule` ids of `findings`."),
    Variable("severity", "map(string, int)", "Severity ranks: `severity.info` 0 ... `severity.critical` 4."),
    Variable("max_severity", "string", "Highest severity among `findings`, or `none`."),
    Variable("max_rank", "int", "Rank of `max_severity`; -1 when there are no findings."),
    Variable("counts", "map(string, int)", "Number of findings per severity name."),
    Variable("unscanned", "list(string)", "Paths of files with `scanned == false`."),
    Variable("formats", "list(string)", "Distinct file formats present."),
    Variable("pickle_formats", "list(string)",
             f"Formats that load through pickle: {', '.join(LOADS_THROUGH_PICKLE)}."),
    Variable("code_formats", "list(string)", "Formats whose loading runs pickle or native code, or that hold "
             f"Keras Lambda bytecode (the floor's code formats): {', '.join(sorted(CODE_FORMATS))}."),
    Variable("weights_formats", "list(string)",
             f"Formats that hold weights: {', '.join(HOLDS_WEIGHTS)}."),
    Variable("lists", "map(string, list(string))", "The policy's own named `lists`."),
    Variable("referenced_repos", "list(map)", "Other Hub repos this one loads or tells users to load "
             "(adapter base models, `auto_map` remote code, `_name_or_path`, `from_pretrained`, card "
             "`base_model`), from `repo-reference` findings after waivers: `repo`, `revision` (null: "
             "unpinned), `path`, `via`, `code` (loading it runs its code: remote code, the user's "
             "trust_remote_code carried to it, a kernel), `tier` and `lookalike` (its org, judged like "
             "`repo.tier` and `repo.lookalike`), and what the store says of it: `vetted`, `approved` (that commit "
             "is approved under this policy, as the gate decides, reviews included) and `sha` (the commit "
             "judged: a branch, tag or no revision is resolved on the hub; null if it could not be). "
             "Without a store (`hfvet scan`, `--no-store`) every reference is unvetted and unapproved. "
             "E.g. require each to be approved: `referenced_repos.exists(r, !r.approved)`."),
    Variable("closure", "list(map)", "The load closure (docs/attack-surface.md), from `load-closure` findings after "
             "waivers: one map per thing a runtime would do with the repo: `surface` (`endpoints.handler`), "
             "`runtime`, `kind` (`code`, `hook`, `native`, `install`, `repo`), `gate` (`always`, "
             "`trust_remote_code`, `opt-in`, `install`), `path` (the file naming it), `target`, `repo` and "
             "`revision` (another repo, or null), `carries_trust`, `runs`, `local`. E.g. no deploy-time "
             "installs: `!closure.exists(c, c.kind == \"install\" && c.gate == \"always\")`."),
    Variable("lineage", "map", "Lineage by content (docs/provenance.md), from the store at the vet and recorded "
             "in the report: `checked` (a store was consulted: false for `hfvet scan`), `mirror_of` (the approved "
             "vendor-official repo whose bytes these are, or null), `mirror` (`repo`, `sha`, `identical`, "
             "`total`, `added`, `changed`, `missing`), `base` (the card's `base_model` checked against that "
             "repo's newest approved vetted commit: `claimed` (or null), `status` (`none`, `not-vetted`, "
             "`verified`, `partial`, `shares-nothing`), `verified` (bool), `sha`, `shared` (`tokenizer`, "
             "`template`, `config` (config.json itself), `generation-config`, `preprocessor-config`), "
             "`shared_files`, `tensors` (`same`, `same-shapes`, `same-names`, `differ`, "
             "`unknown`), `tensor_count`, `dtypes`, `base_dtypes`) and `new_files` (paths not byte-identical to "
             "the base's; empty when no base was checked). E.g. a claimed base must check out: "
             "`lineage.base.claimed != null && lineage.base.status == \"shares-nothing\"`."),
    Variable("signature", "map", "The vendor signature check (docs/provenance.md): `checked` (a check ran), "
             "`present`, `verified` (signed by an identity of the `signatures` entry covering the repo, every file "
             "matching its signed sha256), `state` (`absent`, `verified`, `unverified`, `invalid`), `file`, "
             "`signer` (`kind`: `key`, `certificate` or `sigstore`, `identity` as the signature names it, "
             "`matched`: the policy identity that verified it, also set, `state` staying `unverified`, when no "
             "entry covers the repo but one of the policy's identities signed it; each null when unknown), "
             "`method` (`files`, `shards`), `problem`, and the paths `unsigned`, `mismatched`, `missing`. E.g. "
             "review unsigned vendor uploads: `repo.tier == \"vendor-official\" && !signature.present`."),
)


@dataclass(frozen=True)
class VendorData:
    """The policy's vendor data as the variables read it: sources, installers, tiers and identities."""

    sources: Mapping[str, Sequence[str]] = field(default_factory=dict)
    installers: Mapping[str, Sequence[str]] = field(default_factory=dict)
    tiers: Tiers | None = None  # None: every org third-party, no lookalike judgement (probes)
    identities: Mapping[str, Identity] = field(default_factory=dict)

    @classmethod
    def of(cls, policy: Policy) -> VendorData:
        return cls(policy.sources, policy.installers, policy.tiers, policy.identities)

    @property
    def registry(self) -> Registry | None:
        return registry_of(self.tiers, self.identities) if self.tiers else None


NO_VENDOR_DATA = VendorData()


def finding_map(f: FindingFact, vendors: VendorData) -> dict[str, Any]:
    owner = source_owner(f.source, vendors.sources)
    registry = vendors.registry
    # A source the policy's `sources` give to a vendor is that vendor's: no imitation of anyone.
    imitated = source_imitated(f.source, registry, imitates_org) if registry and f.source and not owner else None
    return {"path": f.path, "member": f.member, "scanner": f.scanner, "rule": f.rule, "kind": kind_of(f.rule),
            "severity": f.severity.value, "rank": f.severity.rank, "message": f.message,
            "source": f.source, "source_owner": owner, "vendor_source": owner is not None,
            "source_lookalike": imitated, "installer": installer_of(f.rule, f.source, vendors.installers)}


def build_activation(
    facts: PolicyFacts,
    findings: list[FindingFact],
    waived: list[FindingFact],
    identity: tuple[TierName, str | None],
    lists: dict[str, list[str]],
    vendors: VendorData = NO_VENDOR_DATA,
) -> Activation:
    """Values for every variable in VARIABLES, built once per decision.

    Plain JSON values (see cel.Activation): the facts are validated models, so only the free-form
    hub metadata needs a JSON round trip.
    """
    tier, lookalike_of = identity
    repo = facts.repo
    worst = max((f.severity for f in findings), key=lambda s: s.rank, default=None)
    plain: dict[str, Any] = {
        "repo": {"id": repo.id, "org": repo.org, "name": repo.name, "revision": repo.revision,
                 "tier": tier, "lookalike": lookalike_of is not None, "lookalike_of": lookalike_of,
                 "facts": to_plain(repo.facts)},  # hub metadata: anything JSON-able
        "files": [{"path": f.path, "size": f.size, "format": f.format, "scanned": f.scanned,
                   "sha256": f.sha256} for f in facts.files],
        "findings": [finding_map(f, vendors) for f in findings],  # registry_of is cached: built once
        "waived": [finding_map(f, vendors) for f in waived],
        "finding_rules": sorted({f.rule for f in findings}),
        "severity": SEVERITY_RANKS,
        "max_severity": worst.value if worst else "none",
        "max_rank": worst.rank if worst else -1,
        "counts": {s.value: sum(1 for f in findings if f.severity is s) for s in Severity},
        "unscanned": [f.path for f in facts.files if not f.scanned],
        "formats": sorted({f.format for f in facts.files}),
        "pickle_formats": [str(f) for f in LOADS_THROUGH_PICKLE],
        "code_formats": list(_CODE_FORMATS),
        "weights_formats": [str(f) for f in HOLDS_WEIGHTS],
        "lists": lists,
        "referenced_repos": referenced_repos(findings, facts.reference_status, vendors),
        "closure": [json.loads(item.evidence()) for item in closure_from(findings)],
        "lineage": facts.lineage.plain(),
        "signature": signature_map(facts.signature),
    }
    return Activation(plain)


def signature_map(fact: SignatureFact | None) -> dict[str, Any]:
    """The `signature` variable: always the same keys (a missing check is `checked: false`, `absent`)."""
    sig = fact or SignatureFact()
    signer = sig.signer
    return {"checked": fact is not None, "present": sig.state != "absent", "verified": sig.state == "verified",
            "state": sig.state, "file": sig.file, "method": sig.method, "problem": sig.problem,
            "signer": {"kind": signer.kind if signer else None, "identity": signer.identity if signer else None,
                       "matched": signer.matched if signer else None},
            "unsigned": list(sig.unsigned), "mismatched": list(sig.mismatched), "missing": list(sig.missing)}


def referenced_repos(findings: list[FindingFact], status: Sequence[ReferenceFact] = (),
                     vendors: VendorData = NO_VENDOR_DATA) -> list[dict[str, Any]]:
    """The `repo-reference` findings as maps, one per (repo, revision, path) as the report lists them, with the
    store's judgement and the tier of the referenced org (third-party when the policy's tiers are not given).

    A reference the service did not judge is unvetted and unapproved: unknown never approves.
    """
    judged = {(s.repo, s.revision): s for s in status}
    maps = []
    for ref in references_from(findings):
        known = judged.get((ref.repo, ref.revision))
        org = ref.repo.split("/", 1)[0]
        maps.append(vars(ref) | {"vetted": bool(known and known.vetted), "approved": bool(known and known.approved),
                                 "sha": known.sha if known else None,
                                 "tier": tier_of(org, vendors.tiers) if vendors.tiers else "third-party",
                                 "lookalike": bool(vendors.tiers and
                                                   repo_lookalike_of(ref.repo, vendors.tiers, vendors.identities))})
    return maps


def top_level_names() -> set[str]:
    return {v.name.split(".", 1)[0] for v in VARIABLES}
