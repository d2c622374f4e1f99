"""A ``oneOf`` whose branches cannot be told apart refuses the values it means to accept: taken as ``anyOf``.

``oneOf`` accepts a value that matches exactly one branch. Once readOnly properties are gone from
a request schema, branches often become the same (Intellifi's ``addItem``: three empty objects),
or overlap (``{type: number}`` next to ``{type: integer}``; open objects that require nothing), so
the values the API wants match two branches and every call is refused. Each branch gets a
witness, the simplest value it accepts (its required properties, its ``const``, its lowest
number); when one branch's witness also matches another branch, the two cannot be told apart:
the ``oneOf`` becomes an ``anyOf`` (a value matching any branch is accepted, which is what the
API reads) and the generator warns, naming the operation and the pointer. Branches whose
witness cannot be built are not judged. Converted schemas are shared between tools: the walk
copies what it changes and never mutates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jsonschema import Draft202012Validator

from bridge.contract.expressions import json_pointer as jsonpointer
from generator.parse.schemas.keywords import LIST_KEYWORDS, MAP_KEYWORDS, ONE_KEYWORDS

__all__ = ["overlapping_branches", "without_ambiguous_one_ofs"]

_MAX_DEPTH = 12
_UNKNOWN = object()


def without_ambiguous_one_ofs(
    schema: dict[str, Any], warn: Callable[[str, str], None], cache: dict[int, Any] | None = None
) -> dict[str, Any]:
    """``schema`` (a tool's arguments, with its ``$defs``) with every ambiguous ``oneOf`` made an ``anyOf``.

    ``warn(pointer, detail)`` is called once per ``oneOf`` changed. ``cache`` (one per document)
    remembers each shared subschema's outcome, so a schema used by many tools is judged once.
    """
    defs = schema.get("$defs")
    walker = _Walker(defs if isinstance(defs, dict) else {}, {} if cache is None else cache)
    out, warnings = walker.walk(schema, 0)
    for tokens, detail in warnings:
        warn(jsonpointer.join(*tokens), detail)
    return out if isinstance(out, dict) else schema


def overlapping_branches(branches: list[Any], defs: Mapping[str, Any]) -> tuple[int, int] | None:
    """The first pair ``(i, j)`` where branch i's witness also matches branch j, or None."""
    validators = [_validator(branch, defs) for branch in branches]
    for i, branch in enumerate(branches):
        mine = validators[i]
        value = _witness(branch, defs, 0)
        if mine is None or value is _UNKNOWN or not _valid(mine, value):
            continue
        for j, other in enumerate(validators):
            if j != i and other is not None and _valid(other, value):
                return (i, j) if i < j else (j, i)
    return None


Warnings = list[tuple[tuple[str, ...], str]]  # (pointer tokens below the walked node, detail)


class _Walker:
    def __init__(self, defs: Mapping[str, Any], cache: dict[int, Any]) -> None:
        self.defs = defs
        self.cache = cache

    def walk(self, node: Any, depth: int) -> tuple[Any, Warnings]:
        if not isinstance(node, dict) or depth > 64:
            return node, []
        hit = self.cache.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1], hit[2]
        changed: dict[str, Any] = {}
        warnings: Warnings = []

        def sub(value: Any, *tokens: str) -> Any:
            new, found = self.walk(value, depth + 1)
            warnings.extend(((*tokens, *where), detail) for where, detail in found)
            return new

        for key, value in node.items():
            if key in MAP_KEYWORDS and isinstance(value, dict):
                new_map = {name: sub(item, key, name) for name, item in value.items()}
                if any(new_map[name] is not value[name] for name in value):
                    changed[key] = new_map
            elif key in ONE_KEYWORDS and isinstance(value, dict):
                new = sub(value, key)
                if new is not value:
                    changed[key] = new
            elif key in LIST_KEYWORDS and isinstance(value, list):
                new_list = [sub(item, key, str(i)) for i, item in enumerate(value)]
                if any(a is not b for a, b in zip(new_list, value, strict=True)):
                    changed[key] = new_list
        out = {**node, **changed} if changed else node
        branches = out.get("oneOf")
        if isinstance(branches, list) and len(branches) > 1 and "anyOf" not in out:
            pair = overlapping_branches(branches, self.defs)
            if pair is not None:
                warnings.append(
                    (
                        ("oneOf",),
                        f"oneOf branches {pair[0]} and {pair[1]} cannot be told apart (a value matches both, so it "
                        "would be refused); taken as anyOf: a value matching any branch is accepted",
                    )
                )
                out = {key: value for key, value in out.items() if key != "oneOf"}
                out["anyOf"] = branches
        self.cache[id(node)] = (node, out, warnings)  # the node is kept, so its id is never reused
        return out, warnings


def _validator(branch: Any, defs: Mapping[str, Any]) -> Draft202012Validator | None:
    # Not check_schema (most of the cost): a schema jsonschema cannot evaluate fails in _valid, unjudged.
    if isinstance(branch, dict):
        return Draft202012Validator({"$defs": defs, **branch})
    return Draft202012Validator(branch) if isinstance(branch, bool) else None


def _valid(validator: Draft202012Validator, value: Any) -> bool:
    try:
        return bool(validator.is_valid(value))
    except Exception:  # a schema jsonschema cannot evaluate (an unresolvable $ref): not judged
        return False


def _witness(schema: Any, defs: Mapping[str, Any], depth: int) -> Any:
    """The simplest value ``schema`` accepts, or ``_UNKNOWN`` (it is checked against the schema after)."""
    if schema is True or schema == {}:
        return None
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return _UNKNOWN
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list):
        return enum[0] if enum else _UNKNOWN
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.removeprefix("#/$defs/")
        return _witness(defs.get(name), defs, depth + 1) if name != ref else _UNKNOWN
    for key in ("anyOf", "oneOf"):
        members = schema.get(key)
        if isinstance(members, list) and members:
            return _witness(members[0], defs, depth + 1)
    if "allOf" in schema or "not" in schema or "if" in schema:
        return _UNKNOWN
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema or "required" in schema else None
    return _typed_witness(kind, schema, defs, depth)


def _typed_witness(kind: Any, schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int) -> Any:
    if kind == "object":
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        out: dict[str, Any] = {}
        for name in schema.get("required") or []:
            value = _witness(properties.get(name, True), defs, depth + 1)
            if value is _UNKNOWN:
                return _UNKNOWN
            out[str(name)] = value
        return out
    if kind == "array":
        count = schema.get("minItems", 0)
        if not isinstance(count, int) or count > 8:
            return _UNKNOWN
        item = _witness(schema.get("items", True), defs, depth + 1) if count else None
        return _UNKNOWN if item is _UNKNOWN else [item] * count
    if kind == "string":
        length = schema.get("minLength", 0)
        return "a" * length if isinstance(length, int) and length <= 64 else _UNKNOWN
    if kind in ("integer", "number"):
        for key, step in (("minimum", 0), ("exclusiveMinimum", 1)):
            bound = schema.get(key)
            if isinstance(bound, int | float) and not isinstance(bound, bool):
                return int(bound) + step if kind == "integer" or step == 0 else bound + 1
        return 0
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return _UNKNOWN
