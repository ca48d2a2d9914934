"""Sources: where the bytes of a repo come from (local disk, a hub)."""
