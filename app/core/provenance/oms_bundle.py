"""Read an OMS signature (a Sigstore bundle) without trusting it: who it names and what it claims.

Only JSON, base64 and X.509 parsing: nothing here says the signature is genuine (``oms`` verifies).
Every malformed input is a ``BundleError`` with one line saying what is wrong.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from app.core.signature import SignerKind

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://model_signing/signature/v1.0"  # model-signing >= 1.0
LEGACY_PREDICATE_TYPE = "https://model_signing/Digests/v0.1"  # model-signing 0.x, used before 1.0
PAYLOAD_TYPE = "application/vnd.in-toto+json"


class BundleError(ValueError):
    """Not a model-signing v1.0 signature bundle (the message says why)."""


@dataclass(frozen=True)
class BundleView:
    kind: SignerKind
    identity: str  # as the bundle states it: unverified
    method: str | None  # predicate.serialization.method
    legacy: bool = False  # a model-signing 0.x signature: well-formed, but not checked by hfvet


def read_bundle(data: bytes) -> BundleView:
    doc = _json_object(data, "the signature file")
    material = _mapping(doc.get("verificationMaterial"), "verificationMaterial")
    kind, identity = _signer(material)
    envelope = _mapping(doc.get("dsseEnvelope"), "dsseEnvelope")
    if envelope.get("payloadType") != PAYLOAD_TYPE:
        raise BundleError(f"the DSSE payload type is {str(envelope.get('payloadType'))[:80]!r}, not {PAYLOAD_TYPE}")
    statement = _json_object(_b64(envelope.get("payload"), "dsseEnvelope.payload"), "the DSSE payload")
    if statement.get("_type") != STATEMENT_TYPE:
        raise BundleError(f"the payload is not an in-toto Statement v1 ({str(statement.get('_type'))[:80]!r})")
    predicate_type = statement.get("predicateType")
    if predicate_type == LEGACY_PREDICATE_TYPE:
        return BundleView(kind, identity, None, legacy=True)
    if predicate_type != PREDICATE_TYPE:
        raise BundleError(f"predicate type {str(predicate_type)[:80]!r} is not model-signing's {PREDICATE_TYPE}")
    serialization = _mapping(_mapping(statement.get("predicate"), "predicate").get("serialization"),
                             "predicate.serialization")
    method = serialization.get("method")
    return BundleView(kind, identity, method if isinstance(method, str) else None)


def _signer(material: dict[str, Any]) -> tuple[SignerKind, str]:
    if "publicKey" in material:
        hint = _mapping(material["publicKey"], "publicKey").get("hint")
        return "key", f"sha256:{hint}" if isinstance(hint, str) and hint else "(no key hint)"
    if "x509CertificateChain" in material:
        chain = _mapping(material["x509CertificateChain"], "x509CertificateChain").get("certificates")
        if not isinstance(chain, list) or not chain:
            raise BundleError("x509CertificateChain holds no certificate")
        return "certificate", certificate_subject(_cert_bytes(chain[0]))
    if "certificate" in material:
        return "sigstore", certificate_subject(_cert_bytes(material["certificate"]))
    raise BundleError("verificationMaterial names no public key, certificate chain or certificate")


def certificate_subject(der: bytes) -> str:
    """A certificate's subject as people name it: its first SAN (email, URI, DNS), else its CN, else its DN."""
    from cryptography import x509

    try:
        cert = x509.load_der_x509_certificate(der)
    except ValueError as exc:
        raise BundleError(f"a certificate does not parse: {exc}") from exc
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names = [*san.get_values_for_type(x509.RFC822Name), *san.get_values_for_type(x509.UniformResourceIdentifier),
                 *san.get_values_for_type(x509.DNSName)]
        if names:
            return str(names[0])
    except (x509.ExtensionNotFound, ValueError):
        pass
    common = cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
    return str(common[0].value) if common else cert.subject.rfc4514_string()


def _cert_bytes(entry: Any) -> bytes:
    return _b64(_mapping(entry, "certificate").get("rawBytes"), "certificate rawBytes")


def _json_object(data: bytes, what: str) -> dict[str, Any]:
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise BundleError(f"{what} is not JSON: {str(exc)[:120]}") from exc
    if not isinstance(doc, dict):
        raise BundleError(f"{what} is not a JSON object")
    return doc


def _mapping(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BundleError(f"{what} is missing or not an object")
    return value


def _b64(value: Any, what: str) -> bytes:
    if not isinstance(value, str):
        raise BundleError(f"{what} is missing or not a string")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BundleError(f"{what} is not base64: {exc}") from exc
