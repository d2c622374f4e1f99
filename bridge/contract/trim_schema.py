"""The output schema trimmed results always satisfy.

At generation time, :func:`advertised_schema` turns an operation's output schema into the shape
trimmed results have, so that ``structuredContent`` always validates against what the tool
advertises: nothing is required, ``oneOf`` becomes ``anyOf``, keywords a cut or a dropped member
could violate are removed (``minLength``, ``pattern``, ``minItems``, ``uniqueItems``,
``min/maxProperties``, ``dependent*``, ``not``, ``if``/``then``/``else``, ``contains``, closed
``additionalProperties``, formats whose values can be long such as ``uri``), ``_truncated`` is
declared at the root, and objects below ``depth`` levels are reduced to their type. ``enum`` and
``const`` are left out as well: APIs add values to response enums without calling it a breaking
change, and each new value would turn a good answer into a tool error. Repeated ``anyOf`` and
``allOf`` members are listed once. Every change only widens the schema (or keeps it equal), so an
instance of the original schema, once trimmed, is an instance of the advertised one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from bridge.contract.result_shape import DEFAULT_OUTPUT_DEPTH, MARKER_KEY
from bridge.contract.trim_fields import Trie, parse_fields

__all__ = ["MARKER_SCHEMA", "SHORT_FORMATS", "advertised_schema", "project_schema"]

# Explained once, in the server's instructions (bridge.results.trim.INSTRUCTIONS), not in every tool.
MARKER_SCHEMA: dict[str, Any] = {"type": "array", "items": {"type": "string"}}


_DROPPED_KEYWORDS = frozenset(
    {
        "required",
        "minLength",
        "pattern",
        "minItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "dependentSchemas",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "minContains",
        "maxContains",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
        "readOnly",
        "writeOnly",
        "$comment",
        "$schema",
        "$id",
        "$anchor",
        "definitions",
        "$defs",
    }
)
_DOC_KEYWORDS = frozenset({"title", "description", "examples", "default", "deprecated"})
# Formats whose values are never longer than MIN_STRING, so never cut; other formats (uri, byte...)
# are not advertised, since a cut value might not satisfy them.
SHORT_FORMATS = frozenset(
    {
        "date",
        "date-time",
        "time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uuid",
        "int32",
        "int64",
        "float",
        "double",
    }
)
_DEFS_PREFIX = "#/$defs/"


def _type_only(node: Mapping[str, Any]) -> dict[str, Any]:
    kind = node.get("type")
    return {"type": kind} if kind is not None else {}


class _Advertiser:
    def __init__(self, root: Mapping[str, Any], depth: int, descriptions: bool) -> None:
        defs = root.get("$defs")
        self.defs: Mapping[str, Any] = defs if isinstance(defs, dict) else {}
        self.depth = depth
        self.descriptions = descriptions

    def node(self, node: Any, level: int, open_refs: frozenset[str]) -> Any:
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict):
            return {}
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref[len(_DEFS_PREFIX) :] if ref.startswith(_DEFS_PREFIX) else None
            target = self.defs.get(name) if name is not None else None
            if target is None or name in open_refs:
                return {}
            assert name is not None
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            body = self.node(target, level, open_refs | {name})
            if not siblings:
                return body
            extra = self.node(siblings, level, open_refs)
            if isinstance(body, dict) and isinstance(extra, dict) and extra.keys() <= _DOC_KEYWORDS:
                return {**body, **extra}
            return {"allOf": [body, extra]}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED_KEYWORDS or key.startswith("x-"):
                continue
            if key in _DOC_KEYWORDS and not (self.descriptions and key in ("title", "description")):
                continue
            if key in ("properties", "patternProperties"):
                if not isinstance(value, dict):
                    continue
                if level >= self.depth:
                    continue
                out[key] = {name: self.child(sub, level + 1, open_refs) for name, sub in value.items()}
            elif key == "additionalProperties":
                if value is False or value is True or value == {}:
                    continue
                if level >= self.depth:
                    continue
                out[key] = self.child(value, level + 1, open_refs)
            elif key in ("items", "additionalItems"):
                out[key] = self.node(value, level, open_refs)
            elif key == "prefixItems" and isinstance(value, list):
                out[key] = [self.node(item, level, open_refs) for item in value]
            elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
                target = "anyOf" if key == "oneOf" else key
                members = [self.node(item, level, open_refs) for item in value]
                if any(m == {} or m is True for m in members) and target == "anyOf":
                    continue  # one branch accepts anything: so does the whole
                listed = out.setdefault(target, [])
                listed.extend(m for i, m in enumerate(members) if m not in listed and m not in members[:i])
            elif key in ("maxLength", "maxItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
                out[key] = value
            elif key == "format":
                if value in SHORT_FORMATS:
                    out[key] = value
            elif key in ("multipleOf", "type", "title", "description"):
                out[key] = value
        if "allOf" in out:
            out["allOf"] = [m for m in out["allOf"] if m != {} and m is not True]
            if not out["allOf"]:
                del out["allOf"]
        for key in ("anyOf", "allOf"):
            group = out.get(key)
            if isinstance(group, list) and len(group) == 1 and isinstance(group[0], dict):
                only = group[0]
                if not (only.keys() & (out.keys() - {key})):  # one member, no clash: the same as its keywords
                    del out[key]
                    out.update(only)
        return out

    def child(self, node: Any, level: int, open_refs: frozenset[str]) -> Any:
        if level > self.depth and isinstance(node, dict):
            return _type_only(self._resolve(node, open_refs))
        return self.node(node, level, open_refs)

    def _resolve(self, node: Mapping[str, Any], open_refs: frozenset[str]) -> Mapping[str, Any]:
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
            target = self.defs.get(ref[len(_DEFS_PREFIX) :])
            if isinstance(target, dict):
                return target
        return node


def _admit_marker(node: dict[str, Any], root: bool = True) -> dict[str, Any]:
    """``node`` with ``_truncated`` declared: at the root always, in a member of a root
    composition only where its ``additionalProperties`` or ``patternProperties`` would otherwise
    judge the key."""
    out = dict(node)
    patterns = out.get("patternProperties")
    if isinstance(patterns, dict):
        kept = {p: v for p, v in patterns.items() if not _matches(p, MARKER_KEY)}
        if kept:
            out["patternProperties"] = kept
        else:
            del out["patternProperties"]
    if root or "additionalProperties" in out:
        out["properties"] = {**(out.get("properties") or {}), MARKER_KEY: MARKER_SCHEMA}
    for key in ("allOf", "anyOf"):
        members = out.get(key)
        if isinstance(members, list):
            out[key] = [_admit_marker(m, False) if isinstance(m, dict) else m for m in members]
    return out


def _matches(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return True  # a pattern Python cannot read might match: leave it out


def advertised_schema(
    schema: Mapping[str, Any],
    *,
    depth: int = DEFAULT_OUTPUT_DEPTH,
    descriptions: bool = False,
    wrapped: bool = False,
    selected: Sequence[str] = (),
) -> dict[str, Any]:
    """The output schema a trimmed result always satisfies (see the module docstring).

    ``depth`` counts object levels below the root (the ``result`` wrapper of a non-object body
    does not count); deeper objects are advertised as their type alone. ``descriptions`` keeps
    titles and descriptions. ``selected`` is the operation's configured field selection.
    """
    source: Mapping[str, Any] = schema
    if selected:
        trie, _ = parse_fields(selected, wrapped=wrapped)
        source = project_schema(schema, trie)
    advertiser = _Advertiser(source, depth + (1 if wrapped else 0), descriptions)
    out = advertiser.node(dict(source), 0, frozenset())
    if not isinstance(out, dict):
        out = {}
    out["type"] = "object"
    return _admit_marker(out)


def project_schema(schema: Mapping[str, Any], trie: Trie) -> dict[str, Any]:
    """``schema`` with only the properties the trie names (``$defs`` references followed)."""
    defs = schema.get("$defs") if isinstance(schema.get("$defs"), dict) else {}
    assert isinstance(defs, dict)

    def walk(node: Any, sub: Trie, hops: int) -> Any:
        if not isinstance(node, dict) or hops > 64:
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
            target = defs.get(ref[len(_DEFS_PREFIX) :])
            if target is None:
                return {}
            merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            return walk(merged, sub, hops + 1)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$defs":
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {
                    name: (value[name] if child is None else walk(value[name], child, hops))
                    for name, child in sub.items()
                    if name in value
                }
            elif key in ("items", "additionalProperties", "additionalItems") and isinstance(value, dict):
                out[key] = walk(value, sub, hops) if key == "items" else value
            elif key == "prefixItems" and isinstance(value, list):
                out[key] = [walk(v, sub, hops) for v in value]
            elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
                out[key] = [walk(v, sub, hops) for v in value]
            elif key == "required":
                continue
            else:
                out[key] = value
        return out

    projected = walk(dict(schema), trie, 0)
    result = projected if isinstance(projected, dict) else {}
    if defs:
        result["$defs"] = defs  # kept whole: properties kept whole may still refer to them
    return result
