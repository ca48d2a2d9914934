"""Provenance: what hfvet states about a vetted commit in formats other tools read, and what a repo's
publisher signed, checked against what the Hub serves (DESIGN §5). Pure."""
