"""What parsing one document shares: the context, the raw operation, the arguments under
construction, and small lookups."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bridge.contract.catalogue import SecurityScheme, StaticHeader
from bridge.contract.expressions import json_pointer as jsonpointer
from generator.issues import Issue, Level
from generator.options import GenerateOptions
from generator.parse import naming
from generator.parse.schemas.convert import SchemaConverter
from generator.parse.schemas.keywords import Schema

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
    # Long-running operations' cancel links, by operation label, resolved once all are named.
    cancel_links: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    # The config's `headers:`: sent on every request, so no parameter of that name is an argument.
    static_headers: tuple[StaticHeader, ...] = ()
    # Credential-carrying parameters and body properties left out: "name (location)" -> operations.
    credential_args: dict[str, set[str]] = field(default_factory=dict)
    # (location, name, value) of the spec constants already noted (generator/parse/constants.py).
    constant_notes: set[tuple[str, str, str]] = field(default_factory=set)
    # Shared subschemas' oneOf verdicts (generator/parse/schemas/one_of.py), by the converted dict's id.
    one_of_cache: dict[int, Any] = field(default_factory=dict)

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


@dataclass(slots=True)
class Inputs:
    """One operation's arguments under construction (parameters first, then the body)."""

    names: naming.ArgNames = field(default_factory=naming.ArgNames)
    properties: dict[str, Schema] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    needs: set[str] = field(default_factory=set)
    # An optional body's required properties: required as soon as any body field is given.
    dependent_required: dict[str, list[str]] = field(default_factory=dict)
    # The operation's `bind:` (global merged with its own) and the keys that bound something.
    bind: dict[str, Any] = field(default_factory=dict)
    bind_matched: set[str] = field(default_factory=set)


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


def described(schema: Schema, description: str | None) -> Schema:
    """A copy of ``schema`` carrying ``description`` (converted schemas are shared: never mutate)."""
    base: dict[str, Any] = schema if isinstance(schema, dict) else ({} if schema else {"not": {}})
    if description and base.get("description") != description:
        return {**base, "description": description}
    return base
