"""The policy's `signatures` section: which repos must carry a vendor signature, by whom (part of schema.py).

Keys and CA chains are inline PEM, so the policy's sha256 covers them. Field descriptions here are
documentation: `policies/README.md` is generated from them.
"""

from __future__ import annotations

import hashlib
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from app.core.policy.schema_vendors import OrgName
from app.core.signature import DEFAULT_FILE, DeclaredIdentity

# A repo-relative path: no control character or backslash; no leading slash, `..` segment or edge space
# (checked by SignatureRequirement, to say what a file name must be rather than quote this pattern).
_REPO_PATH = re.compile(r"[^\x00-\x1f\\]{1,200}")
Text = Annotated[str, StringConstraints(min_length=1)]
_CURVES = ("secp256r1", "secp384r1", "secp521r1")  # model-signing's EC key signer supports these


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CertificateSigner(_Model):
    """A certificate signer: signatures whose certificate chains to `chain` (model-signing's certificate
    signer)."""

    chain: Text = Field(description="PEM of the CA certificate(s) the signing certificate must chain to.")
    subject: Text | None = Field(None, description="The signing certificate's expected subject: its first SAN "
                                 "(email, URI, DNS name), else its CN. Null: any certificate under `chain`.")

    @field_validator("chain")
    @classmethod
    def _parses(cls, chain: str) -> str:
        from cryptography import x509

        try:
            certificates = x509.load_pem_x509_certificates(chain.encode("utf-8"))
        except ValueError as exc:
            raise ValueError(f"`chain` is not PEM certificates: {exc}") from exc
        if not certificates:
            raise ValueError("`chain` holds no certificate")
        return chain


class SigstoreSigner(_Model):
    """A Sigstore keyless signer (an OIDC identity). hfvet verifies offline and has no Sigstore trust root,
    so such a signature is recorded as unverified: a requirement met only by it is not met."""

    identity: Text = Field(description="The certificate identity (an email or a workflow URI).")
    issuer: Text = Field(description="The OIDC issuer, e.g. `https://token.actions.githubusercontent.com`.")


class SignedBy(_Model):
    """One identity a signature may be by: exactly one of `key`, `certificate`, `sigstore`."""

    key: Text | None = Field(None, description="PEM of an EC public key (P-256, P-384 or P-521): model-signing's "
                             "key signer.")
    certificate: CertificateSigner | None = Field(None, description="A CA chain, and optionally the subject.")
    sigstore: SigstoreSigner | None = Field(None, description="A Sigstore identity (cannot be verified offline).")

    @field_validator("key")
    @classmethod
    def _ec_key(cls, pem: str | None) -> str | None:
        if pem is not None:
            key_fingerprint(pem)
        return pem

    @model_validator(mode="after")
    def _exactly_one(self) -> SignedBy:
        if sum(x is not None for x in (self.key, self.certificate, self.sigstore)) != 1:
            raise ValueError("a `signed_by` entry needs exactly one of `key`, `certificate`, `sigstore`")
        return self

    def declared(self) -> DeclaredIdentity:
        if self.key is not None:
            return DeclaredIdentity("key", f"key sha256:{key_fingerprint(self.key)}", pem=self.key)
        if self.certificate is not None:
            cert = self.certificate
            label = f"certificate under CA sha256:{_first_cert_fingerprint(cert.chain)}"
            label += f" for {cert.subject}" if cert.subject else ""
            return DeclaredIdentity("certificate", label, pem=cert.chain, subject=cert.subject)
        assert self.sigstore is not None  # noqa: S101 - _exactly_one
        store = self.sigstore
        return DeclaredIdentity("sigstore", f"sigstore {store.identity} from {store.issuer}",
                                identity=store.identity, issuer=store.issuer)


class SignatureRequirement(_Model):
    """Repos that must ship a signature by one of `signed_by`: those of a `tier`, or of listed `orgs`."""

    tier: Literal["vendor-official", "trusted", "third-party"] | None = Field(
        None, description="The tier whose repos it covers.")
    orgs: list[OrgName] = Field(default_factory=list, description="Or the orgs whose repos it covers.")
    file: str = Field(DEFAULT_FILE, description="The signature file, repo-relative (OMS's default name).")
    signed_by: list[SignedBy] = Field(min_length=1, description="Who may have signed: any one of them.")

    @field_validator("file")
    @classmethod
    def _relative(cls, path: str) -> str:
        if not _REPO_PATH.fullmatch(path) or path != path.strip():
            raise ValueError(f"`file` must name the signature file as in the repo, e.g. `model.sig`: 1 to 200 "
                             f"characters, no backslash, control character or leading/trailing space (got {path!r})")
        if path.startswith("/") or ".." in path.split("/"):
            raise ValueError(f"`file` must be a repo-relative path without `..`: {path!r}")
        return path

    @model_validator(mode="after")
    def _one_scope(self) -> SignatureRequirement:
        if (self.tier is None) == (not self.orgs):
            raise ValueError("a `signatures` entry needs exactly one of `tier` or `orgs`")
        return self

    def covers(self, org: str | None, tier: str) -> bool:
        if self.tier is not None:
            return self.tier == tier
        return org is not None and org.casefold() in {o.casefold() for o in self.orgs}

    def identities(self) -> tuple[DeclaredIdentity, ...]:
        return tuple(s.declared() for s in self.signed_by)

    def scope(self) -> str:
        """Whose identities these are, in the policy's words: `tier vendor-official`, `orgs [nvidia]`."""
        return f"tier {self.tier}" if self.tier else f"orgs [{', '.join(self.orgs)}]"

    def labels(self) -> frozenset[str]:
        return frozenset(i.label for i in self.identities())


def key_fingerprint(pem: str) -> str:
    """sha256 of the key's PEM SubjectPublicKeyInfo: model-signing's key hint. ValueError: not a supported key."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    if "-----BEGIN" not in pem:
        raise ValueError(f"`key` must be the public key's PEM inline (`key: |` then -----BEGIN PUBLIC KEY-----...), "
                         f"not a path or a hint: the policy's sha256 covers the key (got {pem.strip()[:60]!r})")
    try:
        key = serialization.load_pem_public_key(pem.encode("utf-8"))
    except (ValueError, TypeError) as exc:
        raise ValueError(f"`key` is not a PEM public key: {exc}") from exc
    if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name not in _CURVES:
        raise ValueError("`key` must be an EC public key on P-256, P-384 or P-521 (model-signing's key signer)")
    spki = key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(spki).hexdigest()


def _first_cert_fingerprint(chain: str) -> str:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    return x509.load_pem_x509_certificates(chain.encode("utf-8"))[0].fingerprint(hashes.SHA256()).hex()
