"""Policy errors: every problem names the file and the line it comes from."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Issue:
    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


class PolicyError(ValueError):
    """A policy (or policy test case) that cannot be used. Never treated as approve."""

    def __init__(self, issues: list[Issue]) -> None:
        self.issues = issues
        super().__init__("\n".join(str(i) for i in issues))

    @classmethod
    def single(cls, file: str, line: int | None, message: str) -> PolicyError:
        return cls([Issue(file, line, message)])
