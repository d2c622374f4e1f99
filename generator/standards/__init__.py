"""The companion standards' JSON Schemas (Overlay 1.0 and 1.1, Arazzo 1.0), and checking a document against them."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from bridge.contract.expressions import json_pointer as pointer

__all__ = ["MAX_SCHEMA_PROBLEMS", "SchemaProblem", "Standard", "schema_problems"]

MAX_SCHEMA_PROBLEMS = 20  # a document that is wrong everywhere gets its first twenty problems
Standard = Literal["overlay-1.0", "overlay-1.1", "arazzo-1.0"]
_HERE = Path(__file__).parent


@dataclass(frozen=True, slots=True)
class SchemaProblem:
    pointer: str  # into the checked document ("" at the top)
    message: str


@functools.cache
def _validator(standard: Standard) -> Draft202012Validator:
    schema = json.loads((_HERE / f"{standard}.schema.json").read_text(encoding="utf-8"))
    return Draft202012Validator(schema)  # formats are not asserted (2020-12's default)


def _leaf(error: ValidationError) -> ValidationError:
    # best_match walks into oneOf/anyOf to the branch that came closest: its message says what is wrong.
    return best_match([error]) if error.context else error


def _problems(standard: Standard, document: Any) -> Iterator[SchemaProblem]:
    seen: set[str] = set()
    for error in _validator(standard).iter_errors(document):
        leaf = _leaf(error)
        where = pointer.join(*leaf.absolute_path)
        message = " ".join(leaf.message.split())
        if len(message) > 300:
            message = message[:297] + "..."
        if where + message in seen:
            continue
        seen.add(where + message)
        yield SchemaProblem(where, message)


def schema_problems(standard: Standard, document: Any) -> list[SchemaProblem]:
    """The first :data:`MAX_SCHEMA_PROBLEMS` ways ``document`` breaks ``standard``'s schema, by pointer."""
    found: list[SchemaProblem] = []
    for problem in _problems(standard, document):
        found.append(problem)
        if len(found) >= MAX_SCHEMA_PROBLEMS:
            break
    return sorted(found, key=lambda p: p.pointer)
