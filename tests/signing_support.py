"""Keys, certificates and OMS-signed fixture repos, generated in tmp_path by the tests (never committed)."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from app.examples.safetensors_writer import TensorSpec, write_safetensors

WEIGHTS = "model.safetensors"
WEIGHT_BYTES = 12 * 1024 * 1024  # over the hub's 10 MiB LFS line; sparse on disk


@dataclass(frozen=True)
class KeyPair:
    private: Path
    public_pem: str


def key_pair(where: Path, name: str) -> KeyPair:
    key = ec.generate_private_key(ec.SECP256R1())
    private = where / f"{name}.key"
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return KeyPair(private, public.decode())


@dataclass(frozen=True)
class CertificateAuthority:
    where: Path
    name: str
    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate

    @property
    def chain_pem(self) -> str:
        return self.cert.public_bytes(serialization.Encoding.PEM).decode()

    def chain_path(self) -> Path:
        path = self.where / f"{self.name}-ca.pem"
        path.write_text(self.chain_pem)
        return path

    def issue(self, email: str) -> tuple[Path, Path]:
        """A code-signing certificate for ``email``: (private key path, certificate path)."""
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (_builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, email)]), self.cert.subject, key)
                .add_extension(x509.SubjectAlternativeName([x509.RFC822Name(email)]), critical=False)
                .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False),
                               critical=True)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .sign(self.key, hashes.SHA256()))
        stem = self.where / f"{self.name}-{email.split('@')[0]}"
        key_path, cert_path = stem.with_suffix(".key"), stem.with_suffix(".crt")
        key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return key_path, cert_path


def certificate_authority(where: Path, name: str) -> CertificateAuthority:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name} test CA")])
    cert = (_builder(subject, subject, key)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
            .sign(key, hashes.SHA256()))
    return CertificateAuthority(where, name, key, cert)


def _builder(subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30)))


def build_repo(path: Path) -> Path:
    """A small repo: config, card, and sparse safetensors weights the hub serves as LFS."""
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 8}))
    (path / "README.md").write_text("# A signed model\n")
    write_safetensors(path / WEIGHTS, [TensorSpec("w", "U8", (WEIGHT_BYTES,))], sparse=True)
    return path


def sign_with_key(repo: Path, key: KeyPair, signature: str = "model.sig") -> None:
    import model_signing

    (repo / signature).unlink(missing_ok=True)
    model_signing.signing.Config().use_elliptic_key_signer(private_key=key.private).sign(repo, repo / signature)


def sign_with_certificate(repo: Path, ca: CertificateAuthority, email: str) -> None:
    import model_signing

    key_path, cert_path = ca.issue(email)
    (repo / "model.sig").unlink(missing_ok=True)
    model_signing.signing.Config().use_certificate_signer(
        private_key=key_path, signing_certificate=cert_path, certificate_chain=[ca.chain_path()],
    ).sign(repo, repo / "model.sig")
