"""A vendor signature check as a value: what the report records and the policy judges.

``SignatureCheck`` is what ``oms.check_signature`` returns for one signature file. It is plain
data (no library objects), kept in the report's ``signature`` field and re-read from stored
reports, so a stored verdict re-decides under the same facts without the bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

DEFAULT_FILE = "model.sig"
MAX_SIGNATURE_BYTES = 1024 * 1024  # a real OMS bundle is a few KB to a few hundred KB

# absent: no signature file. verified: signed by an identity the policy lists, and every file at this
# commit is one it signed, with the same sha256. unverified: present, but the policy lists nobody to
# verify it against (or only a Sigstore identity, which needs a trust root), so it proves nothing.
# invalid: checked and failed (unreadable, not OMS v1.0, another signer, a file not as signed).
State = Literal["absent", "verified", "unverified", "invalid"]
STATES: tuple[State, ...] = ("absent", "verified", "unverified", "invalid")
SignerKind = Literal["key", "certificate", "sigstore"]


@dataclass(frozen=True)
class Signer:
    """Who the signature names: ``kind`` and ``identity`` as the bundle states them (a key's sha256
    hint, a certificate's subject), and ``matched``, the policy identity that verified it (or None)."""

    kind: SignerKind
    identity: str
    matched: str | None = None

    def describe(self) -> str:
        return f"{self.kind} {self.identity}"


@dataclass(frozen=True)
class SignatureCheck:
    file: str = DEFAULT_FILE
    state: State = "absent"
    signer: Signer | None = None
    method: str | None = None  # the signed manifest's serialization: `files` or `shards`
    problem: str | None = None  # one line: why it is not `verified`
    unsigned: tuple[str, ...] = ()  # files at this commit the signature does not cover
    mismatched: tuple[str, ...] = ()  # files whose sha256 differs from the signed one
    missing: tuple[str, ...] = ()  # files the signature covers that the commit does not hold
    signed_files: int = 0
    bytes_read: int = 0  # what the check itself read (the signature, small non-LFS files)

    @property
    def present(self) -> bool:
        return self.state != "absent"

    @property
    def verified(self) -> bool:
        return self.state == "verified"

    def summary(self, before_download: bool = True) -> str:
        """One line for people: `hfvet vet`'s text output, the dashboard. ``before_download``: the files were
        matched by the Hub's listing (false for a local snapshot: then they were read and hashed)."""
        if self.state == "absent":
            return f"none ({self.file} absent)"
        if self.signer is None:
            return f"{self.state}: {self.file}: the signer cannot be read ({self.problem})"
        signer = self.signer.describe()
        if self.verified:
            when = " before download" if before_download else ""
            return f"verified: {self.file} signed by {signer}; all {self.signed_files} files match{when}"
        if self.signer.identity in (self.problem or ""):
            return f"{self.state}: {self.file}: {self.problem}"  # the problem names the signer already
        return f"{self.state}: {self.file} names {signer}; {self.problem}"


class _Listed(Protocol):
    @property
    def blob_id(self) -> str | None: ...


def listed_by_hub(files: Iterable[_Listed]) -> bool:
    """Whether the files came with the Hub's listing (blob ids, LFS sha256): a signature matched against it
    was checked before download. A local snapshot's files carry none: they were read and hashed."""
    return any(f.blob_id for f in files)


# The files of the manifest as the check sees them: path -> (sha256 when the source knows it, size).
FileHashes = Mapping[str, tuple[str | None, int]]
# sha256 hex of a small listed file the source knows no sha256 of (a non-LFS file): read and hashed.
HashOf = Callable[[str], str]


@dataclass(frozen=True)
class DeclaredIdentity:
    """One `signed_by` entry of a policy, as the check uses it (pure data, built by the policy)."""

    kind: SignerKind
    label: str  # stable id recorded as ``Signer.matched``: `key sha256:<hex>`, `certificate sha256:<hex> ...`
    pem: str = ""  # the key (kind key) or the CA chain (kind certificate)
    subject: str | None = None  # certificate: the signing certificate's expected SAN or CN
    identity: str | None = None  # sigstore
    issuer: str | None = None  # sigstore


# A `signed_by` identity of the policy and whose it is, in the policy's words: `orgs [nvidia]`, `tier trusted`.
ListedIdentity = tuple[DeclaredIdentity, str]


def to_json(check: SignatureCheck | None) -> dict[str, Any] | None:
    if check is None:
        return None
    signer = None if check.signer is None else vars(check.signer).copy()
    doc = {"file": check.file, "state": check.state, "present": check.present, "verified": check.verified,
           "signer": signer, "method": check.method, "problem": check.problem, "unsigned": list(check.unsigned),
           "mismatched": list(check.mismatched), "missing": list(check.missing),
           "signed_files": check.signed_files, "bytes_read": check.bytes_read}
    return doc
