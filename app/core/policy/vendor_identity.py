"""A vendor's identities (the policy's `identities`) and what imitates them: Hub orgs, repo names, sources.

Names are compared by skeleton (skeleton.py). Company and product names are often short ordinary
words, so they are matched whole (after affix words come off: `deepseek-labs`, `mistral-official`),
joined to another of the vendor's names (`nvidianemo`, `metallama3`), and by edit distance only
from 6 characters on (1 edit, 2 from 10 characters). Word runs are not used for them: `meta-math`
is someone else's org, not Meta's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, NamedTuple

from app.core.policy.skeleton import edits, forms, plain, skeleton, without_affixes

if TYPE_CHECKING:
    from app.core.policy.schema import Identity, Tiers

OrgCheck = Callable[[str, str], bool]  # (org, listed org) -> does org imitate it


class Imitated(NamedTuple):
    vendor: str  # the `identities` key, or the tier org itself when no vendor lists it
    what: str  # the org or identity imitated, as the policy writes it (`NVIDIA+NeMo` for a join)


@dataclass(frozen=True)
class Vendor:
    key: str
    hub: tuple[str, ...] = ()
    github: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    handles: tuple[str, ...] = ()

    @property
    def accounts(self) -> tuple[str, ...]:
        """Identities that are namespaces somewhere: what a path or an owner can name."""
        return (*self.hub, *self.github, *self.handles)


@dataclass(frozen=True)
class Registry:
    """Tier orgs, distinct orgs and vendor identities, hashable so judgements can be cached."""

    tier_orgs: tuple[str, ...]
    distinct: tuple[str, ...]
    vendors: tuple[Vendor, ...]

    @cached_property
    def exempt(self) -> frozenset[str]:
        return frozenset(o.casefold() for o in (*self.tier_orgs, *self.distinct, *(h for v in self.vendors
                                                                                    for h in v.hub)))

    @cached_property
    def real(self) -> frozenset[str]:
        """Listed orgs and names as an owner would spell them: a source owned by one is no imitation.

        Not handles: `NVIDIAAI` on X says nothing of who owns github.com/nvidia-ai."""
        listed = (*self.tier_orgs, *self.distinct, *(i for v in self.vendors for i in (*v.hub, *v.github, *v.names)))
        return frozenset(plain(i) for i in listed)

    def vendor_of(self, org: str) -> str:
        folded = org.casefold()
        return next((v.key for v in self.vendors if folded in {h.casefold() for h in v.hub}), org)

    @cached_property
    def exact(self) -> dict[str, Imitated]:
        table: dict[str, Imitated] = {}
        for v in self.vendors:
            for identity in (*v.accounts, *v.names):
                table.setdefault(skeleton(identity), Imitated(v.key, identity))
        return table

    @cached_property
    def joined(self) -> dict[str, Imitated]:
        """Two of a vendor's names written as one (`nvidianemo`, `metallama`)."""
        table: dict[str, Imitated] = {}
        for v in self.vendors:
            parts = [p for p in (*v.hub, *v.github, *v.names) if len(skeleton(p)) >= 3]
            for a in parts:
                for b in parts:
                    if skeleton(a) != skeleton(b):
                        table.setdefault(skeleton(a) + skeleton(b), Imitated(v.key, f"{a}+{b}"))
        return table

    @cached_property
    def long(self) -> tuple[tuple[str, Imitated], ...]:
        return tuple((s, hit) for s, hit in sorted(self.exact.items()) if len(s) >= 6)

    @cached_property
    def accounts(self) -> dict[str, Imitated]:
        table = {skeleton(o): Imitated(self.vendor_of(o), o) for o in self.tier_orgs}
        for v in self.vendors:
            for account in v.accounts:
                table.setdefault(skeleton(account), Imitated(v.key, account))
        return table


def registry_of(tiers: Tiers, identities: Mapping[str, Identity] | None = None) -> Registry:
    vendors = tuple(Vendor(key, tuple(i.hub), tuple(i.github), tuple(i.names), tuple(i.handles))
                    for key, i in sorted((identities or {}).items()))
    return _registry((*tiers.vendor_official, *tiers.trusted), tuple(tiers.distinct), vendors)


@lru_cache(maxsize=16)
def _registry(tier_orgs: tuple[str, ...], distinct: tuple[str, ...], vendors: tuple[Vendor, ...]) -> Registry:
    """One instance per policy content, so its indexes are built once."""
    return Registry(tier_orgs, distinct, vendors)


@lru_cache(maxsize=8192)
def imitated(org: str, registry: Registry, imitates_org: OrgCheck) -> Imitated | None:
    """What `org`, used as a Hub org, imitates; None for a listed org. Cached: asked at every decision."""
    if org.casefold() in registry.exempt:
        return None
    listed = next((k for k in registry.tier_orgs if imitates_org(org, k)), None)
    if listed is not None:
        return Imitated(registry.vendor_of(listed), listed)
    return _identity_imitated(org, registry)


def _identity_imitated(org: str, registry: Registry) -> Imitated | None:
    base = forms(org)
    candidates = sorted(base | {c for f in base for c in without_affixes(f)})
    for candidate in candidates:
        hit = registry.exact.get(candidate) or registry.joined.get(candidate)
        if hit:
            return hit
    for candidate in candidates:
        for target, hit in registry.long:
            budget = 1 if len(target) < 10 else 2
            if abs(len(candidate) - len(target)) <= budget and edits(candidate, target) <= budget:
                return hit
    return None


# `/` and characters drawn like it: a repo name holding one reads as `vendor/model`.
SLASH_LOOKALIKES = "/\u2215\u2044\u29f8\uff0f\u2571\u27cb\u2cc6\u3033\u30ce\u4e3f\u2f03\u31d3\u1735\u0338\u0337"
_NAME_PARTS = re.compile(f"--|[{re.escape(SLASH_LOOKALIKES)}]")
_CACHE_KINDS = {"models", "datasets", "spaces"}


def name_imitated(name: str, org: str | None, registry: Registry, imitates_org: OrgCheck) -> Imitated | None:
    """A repo name that starts with a vendor's account and `--` or a slash look-alike (`models--nvidia--X`).

    `nvidia_Llama-3.1-Nemotron-GGUF` (vendor and `_`) is ordinary third-party naming, not a path.
    """
    parts = _NAME_PARTS.split(name)
    if len(parts) < 2:
        return None
    if parts[0].casefold() in _CACHE_KINDS:
        parts = parts[1:]
        if len(parts) < 2:
            return None
    hit = registry.accounts.get(skeleton(parts[0]))  # by skeleton: a homoglyph in the name too
    if hit is None or (org is not None and registry.vendor_of(org).casefold() == hit.vendor.casefold()):
        return None  # a vendor naming its own path imitates no one
    return hit


# Hosts where the first path segment is the owner (a user, org, namespace or channel).
MULTI_TENANT = frozenset({
    "github.com", "gist.github.com", "raw.githubusercontent.com", "gist.githubusercontent.com", "gitlab.com",
    "bitbucket.org", "codeberg.org", "docker.io", "registry.hub.docker.com", "ghcr.io", "quay.io", "gcr.io",
    "anaconda.org", "conda.anaconda.org", "huggingface.co", "hf.co"})
_PAGES = (".github.io", ".gitlab.io")
# Object stores: anyone's bucket under the provider's domain; the bucket is the owner
# (`s3.amazonaws.com/BUCKET/...`, `BUCKET.s3.us-west-1.amazonaws.com`, `storage.googleapis.com/BUCKET`).
_PATH_BUCKETS = re.compile(r"^(?:s3(?:[.-][\w-]+)?\.amazonaws\.com|storage\.googleapis\.com)$")
_HOST_BUCKETS = re.compile(r"^(?P<bucket>[\w.-]+?)\.(?:s3(?:[.-][\w-]+)*\.amazonaws\.com|storage\.googleapis\.com|"
                           r"blob\.core\.windows\.net)$")
# `example.co.uk`, `example.com.cn`: the registrable domain is three labels.
_SECOND_LEVEL = frozenset({"co", "com", "org", "net", "gov", "edu", "ac"})


def source_owner_name(source: str) -> str | None:
    """Who a source belongs to: the owner on a shared host, else the host's registrable-domain label."""
    host, _, path = source.partition("/")
    host = host.casefold().split(":")[0]
    segments = [p for p in path.split("/") if p]
    if host in MULTI_TENANT or _PATH_BUCKETS.match(host):
        return segments[0] if segments else None
    bucket = _HOST_BUCKETS.match(host)
    if bucket:
        return bucket.group("bucket").rsplit(".", 1)[-1]
    for suffix in _PAGES:
        if host.endswith(suffix):
            return host.removesuffix(suffix).rsplit(".", 1)[-1]
    return registrable_label(host)


def registrable_label(host: str) -> str | None:
    labels = [label for label in host.split(".") if label]
    if len(labels) < 2 or all(label.isdigit() for label in labels):
        return None
    if len(labels) >= 3 and labels[-2] in _SECOND_LEVEL and len(labels[-1]) == 2:
        return labels[-3]
    return labels[-2]


def source_imitated(source: str | None, registry: Registry, imitates_org: OrgCheck) -> str | None:
    """The vendor whose identity a source's owner imitates; None for a listed identity or no imitation."""
    owner = source_owner_name(source) if source else None
    if not owner or plain(owner) in registry.real:
        return None
    hit = imitated(owner, registry, imitates_org)
    return hit.vendor if hit else None
