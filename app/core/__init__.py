"""Pure domain: manifest, findings, scanners, verdicts and the vet pipeline.

Nothing here imports web, database or network code (import-linter enforces it).
"""
