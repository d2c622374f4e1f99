"""Where a result's items are and what carries its next page, read from the result's JSON schema.

Part of the contract (no other bridge module, no generator): the generator writes it into stubs
(generator/emit/stubs.py), search reads it to tell a listing from an item lookup (bridge/modes/search.py),
and code mode's search answer shows it (bridge/modes/codemode.py). A listing is a result that is an
array, or an object with exactly one array of objects among its properties (an envelope:
``{"data": [...], "has_more": true}``, ``{"ok": true, "channels": [...]}``, GitHub's
``{"total_count": 3, "items": [...]}``). Its next page is carried by the properties whose names
say so (``next_page``, ``has_more``, ``next_cursor``, ``links``...); the arguments that ask for a
page are ``bridge.contract.result_shape.page_args``' business, since they are an operation's, not a result's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bridge.contract.result_shape import MARKER_KEY
from bridge.contract.trim_fields import WRAP_KEY

__all__ = ["Listing", "body", "field_names", "listing", "next_page_fields", "paging_note", "resolve", "shape_line"]

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
_IDENTITY = frozenset({"id", "gid", "uuid", "_id", "guid", "uid"})
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
    every = schema.get("allOf")
    parts = [schema, *(p for p in every if isinstance(p, Mapping))] if isinstance(every, list) else [schema]
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
    if len(data) != 1 or any(name.lower() in _IDENTITY for name in properties):
        return None  # an object with its own id is a resource holding a list (an owner's pets), not a page
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
    given = top.get("required")
    required = {r for r in given if isinstance(r, str)} if isinstance(given, list) else set()
    return [n for n in names if n in required] + [n for n in names if n not in required]


# Fields a program seldom reads: links to other resources, ids for other protocols.
_NOISE = re.compile(r"(?:^|_)(?:url|uri|href|links?|node_id|etag|gravatar_id)$|_url$|_urls$", re.IGNORECASE)
SHAPE_FIELDS = 10


def body(output_schema: Any, *, wrapped: bool) -> Any:
    """The response data's schema inside a tool's output schema: the ``result`` member when the tool
    wraps its answer, else the schema without the trimming marker."""
    if not isinstance(output_schema, Mapping):
        return None
    root = output_schema
    properties = _properties(resolve(output_schema, root), root)
    if wrapped:
        inner = resolve(properties.get(WRAP_KEY), root)
        return {**inner, "$defs": root["$defs"]} if inner and "$defs" in root else (inner or None)
    return {**output_schema, "properties": {k: v for k, v in properties.items() if k != MARKER_KEY}}


def _fields_line(schema: Mapping[str, Any], root: Mapping[str, Any], expand: str | None = None) -> str:
    names = field_names(schema, root)
    if not names:
        return "object"
    names = [n for n in names if not _NOISE.search(n)] + [n for n in names if _NOISE.search(n)]
    shown = names[:SHAPE_FIELDS]
    if expand is not None and expand not in shown:
        shown = [expand, *shown[: SHAPE_FIELDS - 1]]
    parts = []
    for name in shown:
        if name == expand:
            item = _item(resolve(_properties(schema, root)[name], root), root)
            parts.append(f"{name}: list[{_fields_line(item, root) if item else 'object'}]")
        else:
            parts.append(name)
    more = len(names) - len(shown)
    return "{" + ", ".join(parts) + (f", +{more} more" if more > 0 else "") + "}"


def shape_line(schema: Any) -> str | None:
    """The result's shape in one line, for a model about to write a program: the field names a program
    reads (links last, at most ``SHAPE_FIELDS`` a level), a listing's items spelt out
    (``list[{id, name, ...}]``, ``{data: list[{...}], has_more}``). None when nothing is known."""
    root = schema if isinstance(schema, Mapping) else {}
    top = resolve(schema, root)
    if not top:
        return None
    found = listing(top if top is schema else {**top, **({"$defs": root["$defs"]} if "$defs" in root else {})})
    if found is not None and not found.items:
        return f"list[{_fields_line(found.item, root) if found.item else 'object'}]"
    if found is not None:
        return _fields_line(top, root, expand=found.items)
    kind = top.get("type")
    if kind == "object" or "properties" in top or "allOf" in top:
        return _fields_line(top, root)
    return kind if isinstance(kind, str) else None


def paging_note(page_args: Sequence[str], schema: Any) -> str | None:
    """How to page: the arguments that ask for a page and the result fields that carry the next one
    (``"arguments limit, offset; next page: next_page"``); None when the operation does not page."""
    found = listing(schema) if schema is not None else None
    fields = found.next_page if found is not None else ()
    if not page_args and not fields:
        return None
    parts = []
    if page_args:
        parts.append("arguments " + ", ".join(page_args))
    if fields:
        parts.append("next page: " + ", ".join(fields))
    return "; ".join(parts)
