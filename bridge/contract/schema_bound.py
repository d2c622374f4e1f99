"""Input schemas cut to a byte bound for showing: deeper parts as a plain ``object`` that says so.

The largest public APIs have request bodies nested ten levels deep (an e-signature API's
envelope: recipients, their tabs, each tab's forty kinds); spelled out, one tool's input schema
is 575 KB and the whole ``tools/list`` 18 MB. What a tool *shows* is therefore bounded
(:data:`DEFAULT_INPUT_SCHEMA_BYTES` of compact JSON by default): objects more than N levels deep
are replaced by ``{"type": "object", "description": ...}``, N as large as fits, and the
description says how to learn more. Showing is all this changes: the runtime keeps validating
arguments against the full schema, so an error still names the exact field.

Levels count object nesting: the arguments are level 0, an argument's own fields level 1; array
items and ``allOf``/``anyOf``/``oneOf`` members stay at their parent's level. ``$ref`` targets
are written in place (the bound keeps that small), a recursive one is cut where it repeats.
:func:`schema_at` finds the part a dotted path names (``body.recipients.signers``), for
discovery's ``describe_operation(name, path=...)``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["DEFAULT_INPUT_SCHEMA_BYTES", "Note", "bounded_schema", "compact_size", "schema_at"]

DEFAULT_INPUT_SCHEMA_BYTES = 16 * 1024
"""Largest input schema a tool shows, in bytes of compact JSON (``--max-input-schema-bytes``)."""
MAX_LEVELS = 64  # deeper than any real schema; the loop over levels stops long before
_DEFS = "#/$defs/"
_COMPOSED = ("allOf", "anyOf", "oneOf")
_KEPT_DESCRIPTION = 120  # characters of a cut part's own description kept before the note

Note = Callable[[str], str]
"""The text a cut part carries, given its dotted path."""


class _TooBig(Exception):
    pass


def compact_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def bounded_schema(schema: Mapping[str, Any], max_bytes: int, note: Note) -> dict[str, Any] | None:
    """``schema`` with parts below some depth cut so that it is at most ``max_bytes`` of compact
    JSON, or None when it already fits (or ``max_bytes`` is 0: no bound).

    The deepest cut that fits is used; when even the arguments' own fields spelled out are too
    many, each argument keeps only its type, and as a last resort the schema is one open object
    whose description says why.
    """
    if max_bytes <= 0 or compact_size(schema) <= max_bytes:
        return None
    defs = schema.get("$defs") if isinstance(schema.get("$defs"), dict) else {}
    assert isinstance(defs, dict)
    best: dict[str, Any] | None = None
    for levels in range(MAX_LEVELS):
        try:
            candidate = _Cutter(defs, levels, note, max_bytes).root(schema)
        except _TooBig:
            break
        if compact_size(candidate) > max_bytes:
            break
        best = candidate
    if best is not None:
        return best
    typed = _types_only(schema, note)
    if compact_size(typed) <= max_bytes:
        return typed
    return {"type": "object", "description": note(""), "additionalProperties": True}


def schema_at(schema: Mapping[str, Any], path: str) -> tuple[dict[str, Any] | None, list[str]]:
    """The part of ``schema`` that the dotted ``path`` names (property names; array items and
    composition members are entered on the way), with the root's ``$defs`` so its refs resolve;
    None and the names that were possible at the first segment that matched nothing."""
    defs = schema.get("$defs") if isinstance(schema.get("$defs"), dict) else {}
    assert isinstance(defs, dict)
    nodes: list[Any] = [schema]
    for segment in [s for s in path.split(".") if s]:
        found: list[Any] = []
        names: list[str] = []
        for node in nodes:
            for holder in _objects(node, defs, set()):
                properties = holder.get("properties")
                if isinstance(properties, dict):
                    names.extend(str(n) for n in properties)
                    if segment in properties:
                        found.append(properties[segment])
        if not found:
            return None, list(dict.fromkeys(names))
        nodes = found
    part: dict[str, Any] = dict(_resolved(nodes[0], defs)) if len(nodes) == 1 else {"anyOf": nodes}
    if defs:
        part["$defs"] = defs
    return part, []


def _resolved(node: Any, defs: Mapping[str, Any]) -> Mapping[str, Any]:
    seen: set[str] = set()
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith(_DEFS):
        name = node["$ref"][len(_DEFS) :]
        if name in seen or name not in defs:
            break
        seen.add(name)
        node = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
    return node if isinstance(node, dict) else {}


def _objects(node: Any, defs: Mapping[str, Any], seen: set[str]) -> list[Mapping[str, Any]]:
    """The object schemas ``node`` stands for: itself, its array items, its members, its ref."""
    if not isinstance(node, dict):
        return []
    out: list[Mapping[str, Any]] = [node]
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_DEFS) and ref[len(_DEFS) :] in defs and ref not in seen:
        out += _objects(defs[ref[len(_DEFS) :]], defs, seen | {ref})
    for key in _COMPOSED:
        if isinstance(node.get(key), list):
            for member in node[key]:
                out += _objects(member, defs, seen)
    items = node.get("items")
    if isinstance(items, dict):
        out += _objects(items, defs, seen)
    return out


class _Cutter:
    """One rendering of a schema with objects deeper than ``levels`` cut; gives up (``_TooBig``)
    as soon as what it wrote is surely over ``max_bytes``, so no level costs more than the bound."""

    def __init__(self, defs: Mapping[str, Any], levels: int, note: Note, max_bytes: int) -> None:
        self.defs = defs
        self.levels = levels
        self.note = note
        self.max_bytes = max_bytes
        self.written = 0

    def _count(self, value: Any) -> None:
        self.written += len(value) + 3 if isinstance(value, str) else 4
        if self.written > self.max_bytes:
            raise _TooBig

    def root(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        out = self.node(schema, 0, "", frozenset())
        return out if isinstance(out, dict) else {"type": "object"}

    def node(self, node: Any, level: int, path: str, open_refs: frozenset[str]) -> Any:
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS):
            name = ref[len(_DEFS) :]
            target = self.defs.get(name)
            if target is None:
                return {k: v for k, v in node.items() if k != "$ref"}
            if name in open_refs:  # recursion: cut where it repeats
                return self._cut(target, path)
            merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            return self.node(merged, level, path, open_refs | {name})
        if level > self.levels and _is_structured(node, self.defs):
            return self._cut(node, path)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("$defs", "definitions"):
                continue
            self._count(key)
            if key == "properties" and isinstance(value, dict):
                out[key] = {
                    name: self._named(name, sub, level + 1, _join(path, str(name)), open_refs)
                    for name, sub in value.items()
                }
            elif key in ("patternProperties", "dependentSchemas") and isinstance(value, dict):
                out[key] = {name: self._named(name, sub, level + 1, path, open_refs) for name, sub in value.items()}
            elif key in ("additionalProperties", "unevaluatedProperties", "propertyNames") and isinstance(value, dict):
                out[key] = self.node(value, level + 1, path, open_refs)
            elif key in ("items", "contains", "not", "if", "then", "else") and isinstance(value, dict):
                out[key] = self.node(value, level, path, open_refs)
            elif key in (*_COMPOSED, "prefixItems") and isinstance(value, list):
                out[key] = [self.node(member, level, path, open_refs) for member in value]
            else:
                out[key] = value
                self._count(json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value)
        return out

    def _named(self, name: Any, sub: Any, level: int, path: str, open_refs: frozenset[str]) -> Any:
        self._count(str(name))
        return self.node(sub, level, path, open_refs)

    def _cut(self, node: Mapping[str, Any], path: str) -> dict[str, Any]:
        own = node.get("description")
        text = self.note(path)
        if isinstance(own, str) and own.strip():
            first = own.strip().split("\n", 1)[0]
            if len(first) > _KEPT_DESCRIPTION:
                first = first[: _KEPT_DESCRIPTION - 1].rstrip() + "…"
            text = f"{first} ({text})"
        kind = node.get("type")
        types = kind if isinstance(kind, list) else [kind]
        out: dict[str, Any] = {"type": ["object", "null"] if "null" in types else "object", "description": text}
        self._count(text)
        return out


def _is_structured(node: Mapping[str, Any], defs: Mapping[str, Any]) -> bool:
    """An object with fields of its own (or a choice between such): what a cut replaces."""
    if isinstance(node.get("properties"), dict) and node["properties"]:
        return True
    if isinstance(node.get("additionalProperties"), dict) or isinstance(node.get("patternProperties"), dict):
        return True
    members = [m for key in _COMPOSED if isinstance(node.get(key), list) for m in node[key]]
    return bool(members) and all(isinstance(m, dict) and _is_structured(_resolved(m, defs), defs) for m in members)


def _types_only(schema: Mapping[str, Any], note: Note) -> dict[str, Any]:
    """The arguments with only their types: the bound's last resort but one."""
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    assert isinstance(properties, dict)
    out: dict[str, Any] = {
        "type": "object",
        "description": note(""),
        "properties": {name: _type_of(sub) for name, sub in properties.items()},
    }
    for key in ("required", "additionalProperties"):
        if isinstance(schema.get(key), list | bool):
            out[key] = schema[key]
    return out


def _type_of(node: Any) -> dict[str, Any]:
    kind = node.get("type") if isinstance(node, dict) else None
    return {"type": kind} if isinstance(kind, str | list) else {}


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def names_hint(names: Sequence[str], limit: int = 20) -> str:
    """``a, b, c`` (and how many more)."""
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
