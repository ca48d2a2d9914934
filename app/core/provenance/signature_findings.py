"""The findings a signature check adds to a vet, so every output shows it (`hfvet vet`, SARIF, the page).

They inform; the verdict comes from the policy engine (`signature-required`, `signature-invalid`).
"""

from __future__ import annotations

from app.core.findings import Finding, RuleInfo, RuleKind, Severity
from app.core.signature import SignatureCheck

NAME = "signature"
VERIFIED, UNVERIFIED, INVALID, MISMATCH = ("signature-verified", "signature-unverified", "signature-invalid",
                                           "signature-mismatch")
MAX_FILE_FINDINGS = 20  # per-file findings; the `signature-invalid` finding counts them all
RULES = (
    RuleInfo(VERIFIED, Severity.INFO, "the repo's OMS signature (model.sig) verified against an identity the "
             "policy lists, and every file matches its signed sha256, checked before download", kind=RuleKind.NOTE),
    RuleInfo(UNVERIFIED, Severity.INFO, "the repo ships an OMS signature no listed identity could verify (none "
             "listed for it, or Sigstore keyless, which needs a trust root): the signer is as claimed",
             kind=RuleKind.NOTE),
    RuleInfo(INVALID, Severity.MEDIUM, "the repo's signature does not check out: unreadable, not model-signing "
             "v1.0, signed by no listed identity, `shards`-serialized, or not matching the files",
             kind=RuleKind.IDENTITY),
    RuleInfo(MISMATCH, Severity.MEDIUM, "a file differs from what the signature signs: another sha256, not "
             "covered, or signed but missing", kind=RuleKind.IDENTITY),
)


def signature_findings(check: SignatureCheck | None, before_download: bool = True) -> list[Finding]:
    """``before_download``: matched with the Hub's listing (false: a local snapshot's files, hashed)."""
    if check is None or not check.present:
        return []
    signer = check.signer.describe() if check.signer else "no readable signer"
    if check.verified:
        matched = check.signer.matched if check.signer else None
        by = signer if matched == signer else f"{signer} (the policy's {matched})"
        against = "the Hub's hashes at this commit" if before_download else "the files of this snapshot"
        return [Finding(check.file, NAME, VERIFIED, Severity.INFO,
                        f"signed by {by}; all {check.signed_files} signed files match {against}", evidence=signer)]
    if check.state == "unverified":
        return [Finding(check.file, NAME, UNVERIFIED, Severity.INFO, f"names {signer}, not verified: {check.problem}",
                        evidence=signer)]
    found = [Finding(check.file, NAME, INVALID, Severity.MEDIUM, f"signature does not check out: {check.problem}",
                     evidence=signer)]
    sig = check.file
    per_file = ([(p, f"its sha256 differs from the one {sig} signs") for p in check.mismatched]
                + [(p, f"not covered by {sig}: added or changed after signing?") for p in check.unsigned]
                + [(p, f"{sig} signs it, but this commit does not hold it") for p in check.missing])
    return found + [Finding(path, NAME, MISMATCH, Severity.MEDIUM, what) for path, what in per_file[:MAX_FILE_FINDINGS]]
