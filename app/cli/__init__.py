"""The `hfvet` command line: one module per command group."""
