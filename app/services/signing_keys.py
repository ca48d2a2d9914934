"""The attestation key: made by `hfvet keys create`, named by HFVET_ATTESTATION_KEY, read once at start.

A key that is set but cannot be used (no such file, not an ed25519 PKCS8 PEM, expired) stops the
command that would sign with it, in one line: a server never runs believing it signs when it does not.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from app.core.provenance.envelope import SigningKey, key_id
from app.errors import HfvetError
from app.settings import Settings

PRIVATE_NAME = "hfvet-attestation.key"
PUBLIC_NAME = "hfvet-attestation.pub"


class SigningKeyError(HfvetError):
    """The attestation key cannot be made, read or used."""


class SigningKeyExpired(SigningKeyError):
    """The attestation key is past its HFVET_ATTESTATION_KEY_EXPIRES: it signs nothing more."""


@dataclass(frozen=True)
class CreatedKey:
    private: Path
    public: Path
    key_id: str


def create_key(out: Path) -> CreatedKey:
    """Write a new ed25519 key pair into ``out``: the private key 0600, never over an existing file."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

    private, public = out / PRIVATE_NAME, out / PUBLIC_NAME
    for path in (private, public):
        if path.exists() or path.is_symlink():
            raise SigningKeyError(f"{path} exists: refusing to overwrite a key (move it away or use --out DIR)")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never readable by others, not even briefly
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
        public.write_bytes(SigningKey(key).public_pem())
    except OSError as exc:
        raise SigningKeyError(f"cannot write the key into {out}: {exc.strerror or exc}") from None
    return CreatedKey(private, public, key_id(key.public_key()))


def load_signing_key(path: Path, expires: date | None = None, *, today: date | None = None,
                     flag: str = "HFVET_ATTESTATION_KEY") -> SigningKey:
    """The private key at ``path``; SigningKeyError (one line, naming ``flag``, the setting or option that gave
    it) when it cannot sign."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    where = f"{flag} {path}" if flag.startswith("-") else f"{flag} ({path})"
    try:
        pem = path.read_bytes()
    except OSError as exc:
        raise SigningKeyError(f"{where}: cannot read it: {exc.strerror or exc}") from None
    if b"-----BEGIN PUBLIC KEY-----" in pem:
        raise SigningKeyError(f"{where}: this is a public key; {flag} needs the private key "
                              f"({PRIVATE_NAME}, beside the .pub)")
    try:
        key = load_pem_private_key(pem, password=None)
    except (ValueError, TypeError):
        raise SigningKeyError(f"{where}: not an unencrypted PKCS8 PEM private key; "
                              "make one with `hfvet keys create`") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(f"{where}: a {type(key).__name__}, not an ed25519 key; make one with `hfvet keys create`")
    signing = SigningKey(key, expires)
    if expired(signing, today):
        raise SigningKeyExpired(f"HFVET_ATTESTATION_KEY_EXPIRES: the key expired on {expires}; create a new one "
                              "(`hfvet keys create`) and publish its public key")
    return signing


def configured_key(settings: Settings) -> SigningKey | None:
    """The key HFVET_ATTESTATION_KEY names (None when unset; an expiry without a key is an error)."""
    if settings.attestation_key is None:
        if settings.attestation_key_expires is not None:
            raise SigningKeyError("HFVET_ATTESTATION_KEY_EXPIRES is set but HFVET_ATTESTATION_KEY is not: set the "
                                  "key it is the expiry of, or unset it")
        return None
    return load_signing_key(settings.attestation_key, settings.attestation_key_expires)


def exposed_key_warning(settings: Settings) -> str | None:
    """One line when the configured private key file is readable by group or others (None: fine, or unset)."""
    path = settings.attestation_key
    try:
        mode = path.stat().st_mode & 0o777 if path is not None else 0
    except OSError:
        return None  # unreadable: loading it says so
    if not mode & 0o044:
        return None
    return (f"warning: HFVET_ATTESTATION_KEY ({path}) is readable by group or others (mode {mode:o}): "
            f"anyone who reads it can sign as this server; chmod 600 it")


def expired(key: SigningKey, today: date | None = None) -> bool:
    return key.expired_on(today or datetime.now(UTC).date())
