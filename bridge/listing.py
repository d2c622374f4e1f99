"""Where a result's items are and what carries its next page, read from the result's JSON schema.

Part of the contract (no other bridge module, no generator): the generator writes it into stubs
(generator/stubs.py), search reads it to tell a listing from an item lookup (bridge/search.py),
and code mode's search answer shows it (bridge/codemode.py). A listing is a result that is an
array, or an object with exactly one array of objects among its properties (an envelope:
``{"data": [...], "has_more": true}``, ``{"ok": true, "channels": [...]}``, GitHub's
``{"total_count": 3, "items": [...]}``). Its next page is carried by the properties whose names
say so (``next_page``, ``has_more``, ``next_cursor``, ``links``...); the arguments that ask for a
page are ``bridge.result_shape.page_args``' business, since they are an operation's, not a result's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Listing", "field_names", "listing", "next_page_fields", "resolve"]

# Property names (lower-cased, "-", "_", "$", "@" and "." removed) that carry the next page, or the
# block that holds it, in APIs' listing envelopes.
NEXT_PAGE_NAMES = frozenset(
    {
        "next",
        "nextpage",
        "nextpageurl",
        "nextpagetoken",
        "nexttoken",
        "nextcursor",
        "nextlink",
        "odatanextlink",
        "nextoffset",
        "nexturl",
        "hasmore",
        "hasnext",
        "hasnextpage",
        "more",
        "cursor",
        "endcursor",
        "continuation",
        "continuationtoken",
        "pageinfo",
        "pagination",
        "paging",
        "links",
        "responsemetadata",
        "lastevaluatedkey",
    }
)
_SQUASH = re.compile(r"[-_$@.]")
_MAX_DEPTH = 32  # $ref chains followed before giving up (a cycle, or a pathological schema)


@dataclass(frozen=True, slots=True)
class Listing:
    """A listing result: ``items`` is the property holding the array ("" for a bare array), ``item``
    the schema of one item (``{}`` when unknown), ``next_page`` the properties that carry the next page."""

    items: str
    item: Mapping[str, Any]
    next_page: tuple[str, ...] = ()


def resolve(schema: Any, root: Mapping[str, Any]) -> Any:
    """``schema`` with local ``$ref``s (``#/$defs/...``, ``#/definitions/...``) followed; a ref that
    leads nowhere is ``{}``. ``allOf`` of one part is that part."""
    for _ in range(_MAX_DEPTH):
        if not isinstance(schema, Mapping):
            return {}
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = root
            for part in ref[2:].split("/"):
                target = target.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(target, Mapping) else None
            schema = target
            continue
        parts = schema.get("allOf")
        if isinstance(parts, list) and len(parts) == 1 and len(schema) == 1:
            schema = parts[0]
            continue
        return schema
    return {}


def _is_array(schema: Any, root: Mapping[str, Any]) -> bool:
    kind = resolve(schema, root).get("type")
    return kind == "array" or (isinstance(kind, list) and "array" in kind)


def _properties(schema: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    """The properties of an object schema, its ``allOf`` parts' included."""
    found: dict[str, Any] = {}
    parts = [schema, *(p for p in schema.get("allOf") or () if isinstance(p, Mapping))]
    for part in parts:
        part = resolve(part, root)
        properties = part.get("properties")
        if isinstance(properties, Mapping):
            found.update({str(k): v for k, v in properties.items()})
    return found


def next_page_fields(properties: Mapping[str, Any]) -> tuple[str, ...]:
    """The property names among ``properties`` that carry the next page."""
    return tuple(name for name in properties if _SQUASH.sub("", name.lower()) in NEXT_PAGE_NAMES)


def listing(schema: Any, *, skip: frozenset[str] = frozenset(), wrapped: str | None = None) -> Listing | None:
    """The listing ``schema`` describes, or None when it is not one. ``skip``: properties that are
    not the data (a result's trimming marker); ``wrapped``: the property that holds the body when
    the schema wraps it (a tool's ``{"result": [...]}``)."""
    root = schema if isinstance(schema, Mapping) else {}
    top = resolve(schema, root)
    if wrapped is not None and top:
        top = resolve(_properties(top, root).get(wrapped), root)
    if not top:
        return None
    if _is_array(top, root):
        return Listing("", _item(top, root))
    properties = {k: v for k, v in _properties(top, root).items() if k not in skip}
    arrays = [name for name, prop in properties.items() if _is_array(prop, root)]
    data = [name for name in arrays if name not in next_page_fields({name: None})]
    if len(data) != 1:
        return None
    item = _item(resolve(properties[data[0]], root), root)
    if item.get("type") not in (None, "object") and not _properties(item, root):
        return None  # an array of strings or numbers beside other fields: a detail, not a page
    return Listing(data[0], item, next_page_fields(properties))


def _item(array: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    item = resolve(array.get("items"), root)
    return item if isinstance(item, Mapping) else {}


def field_names(schema: Any, root: Mapping[str, Any] | None = None) -> list[str]:
    """The property names of an object schema (its ``allOf`` parts' too), required ones first."""
    root = root if root is not None else (schema if isinstance(schema, Mapping) else {})
    top = resolve(schema, root)
    if not top:
        return []
    names = list(_properties(top, root))
    required = {str(r) for r in top.get("required") or () if isinstance(r, str)}
    return [n for n in names if n in required] + [n for n in names if n not in required]
