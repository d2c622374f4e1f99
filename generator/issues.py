"""Problems found while generating, collected as values with a level (never raised mid-parse)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Level(StrEnum):
    NOTE = "note"  # a choice the generator made that the operator should know; never an error, even --strict
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Issue:
    level: Level
    where: str  # "GET /pets/{id}", "FILE: /json/pointer" or "spec"
    detail: str

    def __str__(self) -> str:
        return f"{self.level.value}: {self.where}: {self.detail}"


class GenerationError(Exception):
    """Generation cannot go on; carries every error found so far."""

    def __init__(self, issues: list[Issue]) -> None:
        self.issues = issues
        super().__init__("\n".join(str(i) for i in issues))
