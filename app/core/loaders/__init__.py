"""The loader model: what each runtime reads from a repo, and what that makes it import, run or fetch."""
