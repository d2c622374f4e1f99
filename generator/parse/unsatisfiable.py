"""Tools no input can satisfy: a spec mistake that would otherwise show only as failing calls.

Walks what a call must send (the root schema and, through ``required``, the properties it cannot
omit) and reports each schema that rejects every value: an ``enum`` with no value of the declared
``type`` (``type: string, enum: [1, 2]``), or a ``required`` property that does not exist while
``additionalProperties`` is false. Optional parts are not reported: omitting them still works.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bridge.contract.expressions import json_pointer as jsonpointer

__all__ = ["impossible_parts"]

_TYPE_CHECKS: dict[str, Any] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def impossible_parts(schema: Any) -> list[tuple[str, str]]:
    """(JSON pointer into ``schema``, why) for each required part that no value satisfies."""
    return list(_walk(schema, ()))


def _walk(schema: Any, path: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    if not isinstance(schema, dict):
        return
    where = jsonpointer.join(*path)
    types = schema.get("type")
    names = [types] if isinstance(types, str) else list(types) if isinstance(types, list) else []
    enum = schema.get("enum")
    if isinstance(enum, list) and names and all(isinstance(n, str) and n in _TYPE_CHECKS for n in names):
        if not any(_TYPE_CHECKS[name](value) for value in enum for name in names):
            yield where, f"no enum value is of type {' or '.join(names)}"
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    if not isinstance(required, list):
        return
    closed = schema.get("additionalProperties") is False
    for name in required:
        if not isinstance(name, str):
            continue
        if name in properties:
            yield from _walk(properties[name], (*path, "properties", name))
        elif closed:
            yield where, f"required property {name!r} is not among the properties and no other is allowed"
