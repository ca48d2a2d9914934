"""Provenance, pure: what a vetted commit's bytes are and where else they were seen (DESIGN §5).

Store lookups are the services' (app.services.lineage); this package only compares values.
"""
