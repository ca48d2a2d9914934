"""Provenance: what hfvet states about a vetted commit, and what a repo's publisher signed, built and
checked without a network or a store (DESIGN §5).

statement.py builds the in-toto Statements (a SLSA VSA for a verdict, hfvet's own predicate for a
review); envelope.py signs and opens them as DSSE envelopes; verify.py says whether one holds for
the files, repo and commit a verifier asks about ("Verdict attestations" in docs/provenance.md).
oms*.py check a publisher's OpenSSF model signature against the Hub's hashes ("Vendor signatures");
lineage.py compares a commit's bytes with vetted ones ("Lineage"); bom*.py build the CycloneDX ML-BOM.
"""
