"""`hfvet keys create` (the attestation key) and `hfvet attest` (sign or print a local store's verdicts)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from app.cli import exit_codes, ids
from app.cli.console import console
from app.cli.options import RepoArg, command_examples, examples
from app.settings import Settings

if TYPE_CHECKING:
    from app.core.provenance.envelope import SigningKey

keys_app = typer.Typer(help="The ed25519 key that signs verdict attestations (HFVET_ATTESTATION_KEY).",
                       no_args_is_help=True)


@keys_app.command("create", epilog=examples(("a key pair in ./keys", "hfvet keys create --out ./keys")))
def keys_create(
    out: Annotated[Path, typer.Option("--out", help="Folder for hfvet-attestation.key (0600) and .pub.")] = Path("."),
) -> None:
    """Create an ed25519 key pair: the private key (PEM, PKCS8, mode 0600) and its public key (PEM).

    Never overwrites a key. Prints the key id (sha256 of the public key's DER form) on stdout.

    Set HFVET_ATTESTATION_KEY to the private key's path (and optionally HFVET_ATTESTATION_KEY_EXPIRES);
    publish the .pub file (the server also serves it at GET /attestations/key).
    """
    from app.services.signing_keys import create_key

    made = exit_codes.guard(lambda: create_key(out))
    err = console(stderr=True)
    private, public = made.private.absolute(), made.public.absolute()  # the setting works from any folder
    err.print(Text(f"private key: {private} (keep it secret; HFVET_ATTESTATION_KEY={private})"))
    err.print(Text(f"public key:  {public} (publish it; `hfvet verify --key {public}`)"))
    sys.stdout.write(made.key_id + "\n")


@command_examples(
    ("sign the stored verdicts of a repo not yet attested", "hfvet attest nvidia/DeepSeek-V4-Flash-NVFP4"),
    ("write a commit's attestation to a file",
     "hfvet attest nvidia/DeepSeek-V4-Flash-NVFP4 --revision 4f904d1 --out verdict.dsse.json"),
)
def attest_cmd(
    repo: RepoArg,
    revision: Annotated[str | None, typer.Option("--revision", "-r", help="A vetted commit (40-hex, or 7+ hex "
                                                 "of one); with it, its attestation is printed.")] = None,
    key: Annotated[Path | None, typer.Option("--key", help="The private key to sign with (default: "
                                             "$HFVET_ATTESTATION_KEY; none: only print what is signed).")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the envelope here, not stdout.")] = None,
) -> None:
    """Sign a local store's verdicts and reviews of a repo that have no attestation yet; print a commit's envelope.

    With a key (--key, or HFVET_ATTESTATION_KEY with HFVET_ATTESTATION_KEY_EXPIRES), every stored report of
    the repo (of --revision only, when given) without a verdict attestation is signed now: a backfill of
    verdicts stored before the key was configured. Its statement says when the verdict was made, not when
    it was signed. With --revision, the commit's newest verdict attestation (DSSE JSON) goes to stdout or --out.

    Stored reviews without a review attestation are signed too (each names its verdict's statement), and
    a review carried to a commit's newest re-vet without one (marked carriedBy: hfvet, docs/provenance.md).
    An expired key still prints (--revision) what was signed before.

    Exit 4: the repo (or --revision) was never vetted. Exit 2: no such key, nothing attested for
    --revision, or a store that cannot be opened.
    """
    repo, revision = ids.repo_id(repo), ids.revision(revision)
    settings = Settings()
    exit_codes.guard(lambda: _attest(settings, repo, revision, key, out))


def _attest(settings: Settings, repo: str, revision: str | None, key: Path | None, out: Path | None) -> None:
    from app.services import attestations
    from app.services.store import open_store

    signer = _signer(settings, key, printing=revision is not None)
    store = open_store(settings)
    err = console(stderr=True)
    try:
        if signer is not None:
            signed = attestations.attest_stored(store, signer, repo, revision)
            err.print(Text(f"signed {len(signed.verdicts)} verdict(s) and {len(signed.reviews)} review(s) of {repo} "
                           f"with key {signer.key_id[:16]}"))
        elif revision is None:
            exit_codes.fail("no key to sign with: pass --key PRIVATE.pem or set HFVET_ATTESTATION_KEY "
                            "(or --revision SHA to print what is already signed)")
        if revision is None:
            return
        found = attestations.newest_envelope(store, repo, revision)
    except attestations.CommitNotVetted as exc:
        err.print(Text(f"not vetted: {exc}"))
        raise typer.Exit(exit_codes.EXIT_NOT_VETTED) from None
    if out is None:
        sys.stdout.write(found.envelope + "\n")
    else:
        out.write_text(found.envelope + "\n", encoding="utf-8")
        err.print(Text(f"wrote the verdict attestation of {repo}@{found.sha} to {out}"))


def _signer(settings: Settings, key: Path | None, *, printing: bool) -> SigningKey | None:
    """The key to sign with; an expired configured key only prints (--revision) what it signed before."""
    from app.services.signing_keys import SigningKeyExpired, configured_key, load_signing_key

    try:
        if key is not None:
            return load_signing_key(key, settings.attestation_key_expires, flag="--key")
        return configured_key(settings)
    except SigningKeyExpired:
        if not printing:
            raise
        return None
