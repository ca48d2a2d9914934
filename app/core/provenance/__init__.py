"""Provenance: what hfvet states about a vetted commit, built and checked without a network or a store.

statement.py builds the in-toto Statements (a SLSA VSA for a verdict, hfvet's own predicate for a
review); envelope.py signs and opens them as DSSE envelopes; verify.py says whether one holds for
the files, repo and commit a verifier asks about (docs/provenance.md "Verdict attestations").
bom*.py build the CycloneDX ML-BOM of a stored report ("ML-BOM (CycloneDX)").
"""
