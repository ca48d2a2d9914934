"""Provenance: what a repo's publisher signed, checked against what the Hub serves (pure)."""
