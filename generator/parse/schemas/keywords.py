"""JSON Schema's vocabulary as the generator uses it: which keywords hold subschemas, which are
data, and walks over a converted schema (its subschemas, its unresolved ``$ref``s)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bridge.contract.expressions import json_pointer as jsonpointer

Schema = dict[str, Any] | bool

# Keywords whose value is a map of name → subschema.
MAP_KEYWORDS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
# Keywords whose value is one subschema.
ONE_KEYWORDS = frozenset(
    {
        "items",
        "additionalProperties",
        "unevaluatedProperties",
        "additionalItems",
        "unevaluatedItems",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
# Keywords whose value is a list of subschemas.
LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
# Keywords copied as they are (their values are data, not schemas).
COPY_KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "const",
        "format",
        "title",
        "description",
        "default",
        "examples",
        "multipleOf",
        "maximum",
        "minimum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "required",
        "dependentRequired",
        "contentEncoding",
        "contentMediaType",
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)
# Keywords that only describe: a $ref with only these next to it can be merged into its target.
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"})


def child_schemas(node: Any) -> Iterator[Any]:
    """The direct subschemas of a schema (values in schema positions only, never data)."""
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key in MAP_KEYWORDS and isinstance(value, dict):
            yield from value.values()
        elif key in LIST_KEYWORDS and isinstance(value, list):
            yield from value
        elif key in ONE_KEYWORDS:
            if isinstance(value, list):  # tuple-form items
                yield from value
            else:
                yield value


def refs_in(node: Any) -> Iterator[str]:
    """Every ``$ref`` string in schema positions of a raw schema (not following them)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if not isinstance(current, dict):
            continue
        ref = current.get("$ref")
        if isinstance(ref, str):
            yield ref
        stack.extend(child_schemas(current))


def unresolved_refs(schema: Any) -> list[str]:
    """``$ref`` values in ``schema`` that do not resolve inside ``schema`` itself.

    An empty list means the schema is self-contained. Shared sub-dicts are visited once.
    """
    problems: list[str] = []
    seen: set[int] = set()
    stack = [schema]
    while stack:
        current = stack.pop()
        if not isinstance(current, dict) or id(current) in seen:
            continue
        seen.add(id(current))
        ref = current.get("$ref")
        if ref is not None and not resolves(schema, ref) and ref not in problems:
            problems.append(ref)
        stack.extend(child_schemas(current))
    return problems


def resolves(root: Any, ref: Any) -> bool:
    if not isinstance(ref, str) or not ref.startswith("#"):
        return False
    try:
        jsonpointer.resolve(root, ref)
    except jsonpointer.PointerError:
        return False
    return True


def is_file_schema(schema: Schema) -> bool:
    """A string schema that carries file content (multipart uploads)."""
    if not isinstance(schema, dict) or schema.get("type") not in (None, "string"):
        return False
    return schema.get("format") in ("binary", "byte") or "contentMediaType" in schema or "contentEncoding" in schema
