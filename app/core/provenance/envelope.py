"""DSSE envelopes (securesystemslib) over in-toto statements, signed with ed25519. Pure.

A key's id is the sha256 (hex) of its public key in DER SubjectPublicKeyInfo form, the same bytes as
``openssl pkey -pubin -in key.pub -outform DER | sha256sum``. The crypto libraries load only when a
key is used: the gate and the API's start never import them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from app.core.provenance.statement import PAYLOAD_TYPE, KeyValidity, canonical

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey


class AttestationRefused(ValueError):
    """An attestation that does not hold; ``reason`` is a stable code, the message says why in one line.

    Codes: garbled, payload-type, unknown-key, bad-signature, statement-type, predicate-type, subjects,
    repo, revision, not-approved, key-expired, files, missing."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class SigningKey:
    """A private key that signs statements, with its id and validity (what each statement carries)."""

    private: Ed25519PrivateKey
    expires: date | None = None

    @property
    def key_id(self) -> str:
        return key_id(self.private.public_key())

    @property
    def validity(self) -> KeyValidity:
        return KeyValidity(self.key_id, self.expires)

    def public_pem(self) -> bytes:
        return public_pem(self.private.public_key())

    def expired_on(self, today: date) -> bool:
        """Signs no more from its expiry day on (00:00 UTC)."""
        return self.expires is not None and today >= self.expires


def key_id(public: Ed25519PublicKey) -> str:
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return hashlib.sha256(public.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)).hexdigest()


def public_pem(public: Ed25519PublicKey) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return public.public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)


def load_public(pem: bytes) -> Ed25519PublicKey:
    """An ed25519 public key from PEM; ValueError when it is not one."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    key = load_pem_public_key(pem)
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError(f"not an ed25519 public key ({type(key).__name__})")
    return key


def sign(statement: dict[str, Any], key: SigningKey) -> str:
    """The DSSE envelope of ``statement`` signed by ``key``, as the JSON text stored and served."""
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import CryptoSigner, SSlibKey  # type: ignore[attr-defined]

    public = SSlibKey.from_crypto(key.private.public_key(), keyid=key.key_id)
    envelope = Envelope(canonical(statement), PAYLOAD_TYPE, {})
    envelope.sign(CryptoSigner(key.private, public))
    return json.dumps(envelope.to_dict(), sort_keys=True, separators=(",", ":"))


def open_envelope(text: str | bytes, public: Ed25519PublicKey) -> tuple[bytes, dict[str, Any]]:
    """(payload bytes, statement) of an envelope signed by ``public``; AttestationRefused otherwise."""
    from securesystemslib.exceptions import VerificationError
    from securesystemslib.signer import SSlibKey  # type: ignore[attr-defined]

    envelope = _parsed(text)
    if envelope.payload_type != PAYLOAD_TYPE:
        raise AttestationRefused("payload-type", f"payloadType is {envelope.payload_type[:80]!r}, "
                                                 f"not {PAYLOAD_TYPE!r}")
    wanted = key_id(public)
    if wanted not in envelope.signatures:
        named = ", ".join(k[:16] for k in envelope.signatures) or "none"
        raise AttestationRefused("unknown-key", f"not signed by the given key {wanted[:16]} (signed by: {named})")
    try:
        envelope.verify([SSlibKey.from_crypto(public, keyid=wanted)], 1)
    except VerificationError:
        raise AttestationRefused("bad-signature", f"the signature by key {wanted[:16]} does not match the "
                                                  "payload: it was changed after signing") from None
    try:
        statement = json.loads(envelope.payload)
    except ValueError:
        raise AttestationRefused("garbled", "the signed payload is not JSON") from None
    if not isinstance(statement, dict):
        raise AttestationRefused("garbled", "the signed payload is not a JSON object")
    return envelope.payload, statement


def _parsed(text: str | bytes) -> Any:
    """The envelope, or a plain reason why this JSON is not one (never a library's exception text)."""
    from securesystemslib.dsse import Envelope

    data = _envelope_fields(text)
    keyids = [sig["keyid"] for sig in data["signatures"]]
    if len(set(keyids)) != len(keyids):
        raise _garbled("two signatures name the same key id")
    try:
        return Envelope.from_dict(data)
    except (ValueError, TypeError, KeyError, AttributeError):  # binascii.Error is a ValueError
        raise _garbled("the payload or a signature is not base64") from None


def _envelope_fields(text: str | bytes) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError:
        raise _garbled("truncated or not JSON") from None
    if not isinstance(data, dict):
        raise _garbled("the JSON is not an object")
    error = data.get("error")
    if "payload" not in data and isinstance(error, dict):  # an hfvet API error body saved in its place
        raise _garbled(f"an hfvet error answer ({str(error.get('code'))[:40]}): {str(error.get('message'))[:200]}")
    for field in ("payload", "payloadType", "signatures"):
        if field not in data:
            raise _garbled(f"no {field}")
    if not isinstance(data["payload"], str) or not isinstance(data["payloadType"], str):
        raise _garbled("payload and payloadType must be strings")
    signatures = data["signatures"]
    if not isinstance(signatures, list) or not all(
            isinstance(sig, dict) and isinstance(sig.get("keyid"), str) and isinstance(sig.get("sig"), str)
            for sig in signatures):
        raise _garbled("signatures must be a list of {keyid, sig} strings")
    return data


def _garbled(why: str) -> AttestationRefused:
    return AttestationRefused("garbled", f"not a DSSE envelope: {why}")
