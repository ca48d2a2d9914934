"""Provenance: what hfvet states about a vetted commit in formats other tools read (DESIGN §5)."""
