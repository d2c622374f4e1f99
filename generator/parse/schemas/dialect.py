"""OpenAPI 3.0's schema dialect → JSON Schema 2020-12, one keyword at a time: ``nullable``,
boolean exclusive bounds, and keywords written next to a ``$ref`` (3.0 ignores them; a tool
schema keeps what they say)."""

from __future__ import annotations

from typing import Any

from generator.parse.schemas.keywords import ANNOTATIONS, Schema


def merge_siblings(target: Schema, extra: dict[str, Any]) -> Schema:
    """Combine a ``$ref`` target with the keywords written next to the ``$ref``."""
    if not extra:
        return target
    if target is False:
        return False
    if target is True:
        return extra
    if extra.keys() <= ANNOTATIONS:
        return {**target, **extra}
    return {"allOf": [target], **extra}


def make_nullable(schema: Schema) -> Schema:
    """3.0 ``nullable: true``: add ``null`` to the type (and enum), else ``anyOf`` with null."""
    if schema is True:
        return True
    if schema is False:
        return {"type": "null"}
    kind = schema.get("type")
    if isinstance(kind, str):
        types = [kind] if kind == "null" else [kind, "null"]
    elif isinstance(kind, list):
        types = kind if "null" in kind else [*kind, "null"]
    else:
        return {"anyOf": [schema, {"type": "null"}]}
    out = {**schema, "type": types[0] if len(types) == 1 else types}
    enum = out.get("enum")
    if isinstance(enum, list) and None not in enum:
        out["enum"] = [*enum, None]
    return out


def fix_exclusive_bounds(out: dict[str, Any]) -> None:
    """3.0 boolean ``exclusiveMinimum: true`` + ``minimum: n`` → numeric ``exclusiveMinimum: n``."""
    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = out.get(exclusive)
        if isinstance(flag, bool):
            del out[exclusive]
            if flag and bound in out:
                out[exclusive] = out.pop(bound)
