"""Vet jobs: the JobQueue interface and its embedded (in-process) runner."""
