"""`hfvet verify`: check a verdict or review attestation offline, with the public key alone."""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from app.cli import exit_codes, ids
from app.cli.console import console
from app.cli.options import command_examples


@command_examples(
    ("check an attestation and the downloaded files it names",
     "hfvet verify verdict.dsse.json --key hfvet-attestation.pub --files ./model"),
    ("and that it is about this commit and approves it",
     "hfvet verify verdict.dsse.json --key server.pub --repo nvidia/DeepSeek-V4-Flash-NVFP4 --revision 4f904d...  "
     "--require-approve"),
)
def verify_cmd(
    attestation: Annotated[Path, typer.Argument(metavar="ATTESTATION", help="The DSSE envelope (JSON); - for stdin.",
                                                show_default=False)],
    key: Annotated[Path, typer.Option("--key", help="The signer's public key (PEM), e.g. from GET /attestations/key.",
                                      show_default=False)],
    files: Annotated[Path | None, typer.Option("--files", help="A folder whose files must be exactly the "
                                               "attested subjects, byte for byte.")] = None,
    repo: Annotated[str | None, typer.Option("--repo", help="The repo it must be about (ORG/NAME).")] = None,
    revision: Annotated[str | None, typer.Option("--revision", help="The 40-hex commit it must be about.")] = None,
    require_approve: Annotated[bool, typer.Option("--require-approve", help="Refuse unless the verdict (or the "
                                                  "review's decision) is approve.")] = False,
    key_expires: Annotated[str | None, typer.Option("--key-expires", help="The key's last day + 1 as you know it "
                                                    "(YYYY-MM-DD): refuse what was signed on or after it.")] = None,
) -> None:
    """Verify an attestation offline: its signature by --key, its statement, and what you ask of it.

    Refused (exit 1, the reason on stderr): a bad signature, another key, truncated or garbled JSON, a wrong
    payloadType or statement/predicate type, a statement signed on or after the key's expiry (the one it
    carries, or --key-expires), another repo or commit than --repo/--revision, files in --files that are not
    exactly the subjects (each by sha256 or git blob id; a link to a regular file counts as its target, so a
    hub cache snapshot verifies; a dangling link is refused), or, with --require-approve, no approval.

    Exit 0 prints one line: the verdict, the repo and commit, the file count, the key id and the time it
    was verified (reviewed), which the statement says; refusal codes: docs/provenance.md.
    Exit 2: a usage error (no such file, not a public key, a bad date or commit).
    """
    from app.core.provenance.envelope import AttestationRefused
    from app.core.provenance.verify import Expect, verify
    from app.services.attested import directory_digests, load_public_key

    expect_repo = None if repo is None else ids.repo_id(repo)
    commit = None if revision is None else _commit(revision)
    expires = None if key_expires is None else _date(key_expires)
    public = exit_codes.guard(lambda: load_public_key(key))
    text = _read(attestation)
    if files is not None and not files.is_dir():
        exit_codes.fail(f"--files {files}: not a directory")
    try:
        digests = None if files is None else directory_digests(files)
        found = verify(text, public, Expect(repo=expect_repo, revision=commit, files=digests,
                                            require_approve=require_approve, key_expires=expires))
    except AttestationRefused as exc:
        console(stderr=True).print(Text.assemble(("refused: ", "bold red"), f"{exc} [{exc.reason}]"))
        raise typer.Exit(exit_codes.EXIT_FAILED) from None
    checked = f"; all {len(digests)} files in {files} match" if digests is not None else ""
    sys.stdout.write(found.summary() + checked + "\n")


def _read(path: Path) -> bytes:
    try:
        return sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
    except OSError as exc:
        exit_codes.fail(f"ATTESTATION {path}: cannot read it: {exc.strerror or exc}")


def _commit(value: str) -> str:
    from app.core.ids import is_commit

    if not is_commit(value):
        exit_codes.fail(f"--revision must be a full 40-hex commit sha, not {value[:80]!r}")
    return value.lower()


def _date(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        exit_codes.fail(f"--key-expires must be a date (YYYY-MM-DD), not {value[:40]!r}")
