"""What parsing one document shares: the context, the raw operation, and small lookups."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bridge import json_pointer as jsonpointer
from bridge.catalogue import SecurityScheme
from generator.issues import Issue, Level
from generator.options import GenerateOptions
from generator.schemas import SchemaConverter

MAX_REF_HOPS = 32


class Skip(Exception):
    """This operation cannot become a tool; the message says why."""


@dataclass(slots=True)
class Context:
    document: Mapping[str, Any]
    options: GenerateOptions
    source_name: str
    converter: SchemaConverter
    schemes: dict[str, SecurityScheme]
    level: Level
    issues: list[Issue] = field(default_factory=list)
    undeclared_schemes: set[str] = field(default_factory=set)

    def warn(self, where: str, detail: str) -> None:
        self.issues.append(Issue(self.level, where, detail))


@dataclass(frozen=True, slots=True)
class RawOperation:
    """An operation as found in the document, before conversion."""

    method: str  # upper case
    path: str
    op: Mapping[str, Any]
    path_params: Sequence[Any]
    overrides: Mapping[str, Any]

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def operation_id(self) -> str | None:
        value = self.op.get("operationId")
        return value if isinstance(value, str) and value else None


def deref(document: Mapping[str, Any], node: Any, what: str) -> Any:
    """Follow a chain of local ``$ref``s (components/parameters, requestBodies, …)."""
    for _ in range(MAX_REF_HOPS):
        ref = node.get("$ref") if isinstance(node, dict) else None
        if not isinstance(ref, str):
            return node
        if not ref.startswith("#"):
            raise Skip(f"{what} $ref {ref!r} cannot be loaded (it is not a local reference)")
        try:
            node = jsonpointer.resolve(document, ref)
        except jsonpointer.PointerError as exc:
            raise Skip(f"{what} $ref {ref!r} does not resolve") from exc
    raise Skip(f"{what} $ref chain is too long or circular")


def tags(op: Mapping[str, Any]) -> tuple[str, ...]:
    tags = op.get("tags")
    return tuple(str(tag) for tag in tags) if isinstance(tags, list) else ()


def text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None
