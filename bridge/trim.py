"""Smaller tool results that never lie, and the output schema they always satisfy.

At run time (:func:`trim_result`), a JSON result goes through, in order:

1. the operation's configured field selection (``x-mcp-output`` or config), then the call's
   ``fields`` argument: comma-separated dotted paths such as ``items.name,total_count`` (arrays
   are crossed transparently; no expressions). Only keys of the parsed response are looked up;
   nothing else can be named or read;
2. members that are null or empty (``""``, ``[]``, ``{}``) are dropped from objects (never from
   arrays, where positions matter);
3. strings longer than ``max_string`` are cut (ending with "…"), arrays longer than ``max_items``
   keep their first items;
4. while the compact JSON is over ``max_bytes``, the largest array is cut (or the largest string),
   then the largest members are left out (an object larger than the whole budget loses its own
   largest members rather than all of them), until it fits. Sizes are computed once, bottom-up,
   and every cut is decided from them (:mod:`bridge.trim_budget`): time is about linear in the
   body, and the result's size is known exactly without encoding it again.

Every cut is listed in the root's ``_truncated`` array of strings, with what was cut, how much,
and how to get more (the tool's paging arguments, the ``fields`` argument); the notes are bounded
(:mod:`bridge.trim_notes`) and counted in the budget, so the compact UTF-8 JSON of a trimmed
result, notes included, is never longer than ``max_bytes``. An upstream member named
``_truncated`` at the root gives way to the notes (and is listed as left out). The default
budget, 24 KB, keeps one result well under the 64 KB line limit of stdio clients even though the
result travels twice (``structuredContent`` and its JSON text copy).

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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bridge.trim_budget import Fitter
from bridge.trim_notes import MARKER_KEY, MAX_MARKERS, Notes
from bridge.trim_walk import ELLIPSIS, MIN_STRING, measure, no_cyclic_gc

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ITEMS",
    "DEFAULT_MAX_STRING",
    "DEFAULT_OUTPUT_DEPTH",
    "ELLIPSIS",
    "MARKER_KEY",
    "MAX_MARKERS",
    "MIN_STRING",
    "OFF_LOOP_BYTES",
    "PAGE_ARG_NAMES",
    "TrimSettings",
    "Trimmed",
    "advertised_schema",
    "page_args",
    "parse_fields",
    "project",
    "project_schema",
    "split_fields",
    "trim_result",
]

WRAP_KEY = "result"
DEFAULT_MAX_BYTES = 24 * 1024
DEFAULT_MAX_ITEMS = 100
DEFAULT_MAX_STRING = 4000
DEFAULT_OUTPUT_DEPTH = 1
MIN_BYTES = 1024
OFF_LOOP_BYTES = 32 * 1024
"""Bodies longer than this are turned into results in a worker thread: parsing, redacting and
trimming take about 1.5 ms per 32 KiB (bench/TRIM.md), and a 1 MiB body tens of ms, too long to
hold the event loop; below it, the thread hop would cost more than it saves."""
MAX_FIELDS = 100
MAX_FIELD_DEPTH = 16
MAX_SEGMENT_CHARS = 200
_MARKER_RESERVE = 600
_NAME_CHARS = 40

# Both explained once, in the server's instructions (INSTRUCTIONS), not in every tool.
MARKER_SCHEMA: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
FIELDS_SCHEMA: dict[str, Any] = {"type": "string"}  # comma-separated dotted paths
FIELDS_ARG_NAMES = ("fields", "_fields", "result_fields", "fields_")
INSTRUCTIONS = (
    "Results leave out null and empty fields. A long result is cut to fit one answer; its "
    f"`{MARKER_KEY}` list says what was cut and how to get more."
)
FIELDS_INSTRUCTIONS = (
    "Tools with a `fields` argument return only those comma-separated dotted paths of their result "
    '(e.g. "items.name,total_count"; lists are crossed).'
)

# Argument names that page through a list, lower-cased with "-" and "_" removed.
PAGE_ARG_NAMES = frozenset(
    {
        "page",
        "perpage",
        "pagesize",
        "pagenumber",
        "pagetoken",
        "pagecursor",
        "nextpagetoken",
        "nexttoken",
        "limit",
        "offset",
        "cursor",
        "after",
        "before",
        "startingafter",
        "endingbefore",
        "maxresults",
        "skip",
        "take",
        "top",
        "since",
        "marker",
        "continuationtoken",
        "startindex",
        "count",
        "size",
    }
)


@dataclass(frozen=True, slots=True)
class TrimSettings:
    """How much of a result the model gets; ``None`` or 0 turns a limit off."""

    max_bytes: int | None = DEFAULT_MAX_BYTES
    max_items: int | None = DEFAULT_MAX_ITEMS
    max_string: int | None = DEFAULT_MAX_STRING
    drop_empty: bool = True

    def merged(self, overrides: Mapping[str, Any] | None) -> TrimSettings:
        """These settings with a tool's own limits (``max_bytes``/``max_items``/``max_string``)."""
        if not overrides:
            return self
        changes = {k: v for k, v in overrides.items() if k in ("max_bytes", "max_items", "max_string") and v}
        return replace(self, **changes) if changes else self

    def normalised(self) -> TrimSettings:
        """Limits below the floors that keep results valid raised to those floors."""
        return replace(
            self,
            max_bytes=max(self.max_bytes, MIN_BYTES) if self.max_bytes else None,
            max_items=max(self.max_items, 1) if self.max_items else None,
            max_string=max(self.max_string, MIN_STRING) if self.max_string else None,
        )


@dataclass(slots=True)
class Trimmed:
    value: Any
    notes: list[str] = field(default_factory=list)

    @property
    def cut(self) -> bool:
        return bool(self.notes)


def split_fields(value: Any) -> list[str] | None:
    """The ``fields`` argument as a list of paths: a comma-separated string (or a list)."""
    if isinstance(value, str):
        return [part for part in (p.strip() for p in value.split(",")) if part] or [value]
    if isinstance(value, list):
        return [str(item) for item in value]
    return None


def page_args(arg_names: Sequence[str]) -> tuple[str, ...]:
    """The arguments among ``arg_names`` that page through results (``per_page``, ``cursor``...)."""
    return tuple(name for name in arg_names if re.sub(r"[-_$]", "", name.lower()) in PAGE_ARG_NAMES)


# ------------------------------------------------------------------------------------ fields

Trie = dict[str, "Trie | None"]  # None: keep the whole value below this key


def parse_fields(fields: Sequence[str] | None, *, wrapped: bool = False) -> tuple[Trie, list[str]]:
    """A trie of dotted paths, and the entries that are not paths (reported, never used).

    In a wrapped result (``{"result": [...]}``) paths are relative to the items unless they
    start with ``result``.
    """
    trie: Trie = {}
    rejected: list[str] = []
    for raw in list(fields or ())[:MAX_FIELDS]:
        text = raw.strip() if isinstance(raw, str) else ""
        segments = text.split(".") if text else []
        if (
            not segments
            or len(segments) > MAX_FIELD_DEPTH
            or any(not s or len(s) > MAX_SEGMENT_CHARS for s in segments)
        ):
            rejected.append(str(raw)[:80])
            continue
        if wrapped and segments[0] != WRAP_KEY:
            segments = [WRAP_KEY, *segments]
        node: Trie = trie
        for position, segment in enumerate(segments):
            last = position == len(segments) - 1
            if segment in node and node[segment] is None:
                break  # a shorter path already keeps everything below
            if last:
                node[segment] = None
            else:
                child = node.get(segment)
                if child is None:
                    child = node[segment] = {}
                node = child
    return trie, rejected


_DROP = object()


def _project(value: Any, trie: Trie, in_array: bool) -> Any:
    if isinstance(value, list):
        return [_project(item, trie, True) for item in value]
    if isinstance(value, dict):
        out = {}
        for key, sub in trie.items():
            if key not in value:
                continue
            if sub is None:
                out[key] = value[key]
            else:
                kept = _project(value[key], sub, False)
                if kept is not _DROP and not _matched_nothing(kept):
                    out[key] = kept
        return out
    return value if in_array else _DROP


def _matched_nothing(projected: Any) -> bool:
    """A container that the projection emptied (a path below it named nothing that exists)."""
    if isinstance(projected, dict):
        return not projected
    if isinstance(projected, list):
        return all(isinstance(item, dict | list) and _matched_nothing(item) for item in projected)
    return False


def project(value: Mapping[str, Any], trie: Trie) -> dict[str, Any]:
    """The members of ``value`` the trie names (plain key lookups on the parsed JSON only)."""
    result = _project(dict(value), trie, False)
    return result if isinstance(result, dict) else {}


# ------------------------------------------------------------------------------------ trimming


def _is_empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def trim_result(
    value: Mapping[str, Any],
    settings: TrimSettings,
    *,
    wrapped: bool = False,
    paging: Sequence[str] = (),
    fields_arg: str | None = None,
    selected: Sequence[str] = (),
    fields: Sequence[str] | None = None,
) -> Trimmed:
    """Steps 1-4 of the module docstring for one JSON object; the notes say what was cut.

    ``selected`` is the operation's configured field selection, ``fields`` the call's. The
    returned object carries the notes under ``_truncated`` when anything was cut, and its
    compact UTF-8 JSON, notes included, is never longer than ``settings.max_bytes``. Time is
    about linear in the size of ``value`` (see :mod:`bridge.trim_budget`).
    """
    settings = settings.normalised()
    keep = frozenset({WRAP_KEY}) if wrapped else frozenset()
    data: dict[str, Any] = dict(value)
    extra: list[str] = []
    for paths, what in ((selected, None), (fields, fields_arg or "fields")):
        if not paths:
            continue
        trie, rejected = parse_fields(paths, wrapped=wrapped)
        if rejected and what:
            extra.append(f"{what}: not dotted paths, ignored: " + ", ".join(repr(r) for r in rejected[:5]))
        if trie or what:  # the call's fields, even all unusable, select; a config selection is never empty
            projected = project(data, trie)
            if what and not _has_content(projected, wrapped):
                names = ", ".join(name[:_NAME_CHARS] for name in _field_names(data, wrapped)[:30])
                extra.append(f"{what}: nothing matched; the result has these fields: {names}")
            data = projected
    with no_cyclic_gc():
        return _trim(data, settings, keep, extra, paging, fields_arg)


def _trim(
    data: dict[str, Any],
    settings: TrimSettings,
    keep: frozenset[str],
    extra: list[str],
    paging: Sequence[str],
    fields_arg: str | None,
) -> Trimmed:
    """Steps 2-4: caps, then the budget, then the notes in the bytes left."""
    tree = measure(
        data,
        max_items=settings.max_items,
        max_string=settings.max_string,
        drop_empty=settings.drop_empty,
        keep=keep,
        max_bytes=settings.max_bytes,
    )
    fitter = Fitter(tree, keep)
    notes = Notes(tree, fitter, max_bytes=settings.max_bytes, paging=paging, fields_arg=fields_arg, extra=extra)
    lines = notes.lines()
    budget = settings.max_bytes
    if budget and (lines or fitter.total > budget):
        fitter.leave_out(MARKER_KEY)  # the upstream's own member of that name makes room for the notes
        lines = notes.lines()
        if fitter.total + notes.cost(lines) > budget:
            fitter.fit(max(budget - max(_MARKER_RESERVE, notes.cost(lines)), MIN_BYTES // 2))
        rendered = notes.render(budget - fitter.total)
        if rendered is None:  # not even the shortest note fits: cut the content further
            fitter.fit(budget - notes.minimal_cost())
            rendered = notes.render(budget - fitter.total)
        assert rendered is not None  # the fitter can always get down to {}
        lines = rendered
    trimmed = tree.value
    if lines:
        trimmed[MARKER_KEY] = lines
    return Trimmed(trimmed, lines)


def _has_content(value: Mapping[str, Any], wrapped: bool) -> bool:
    if wrapped:
        inner = value.get(WRAP_KEY)
        if isinstance(inner, list):
            return any(not _is_empty(item) for item in inner)
        return not _is_empty(inner)
    return bool(value)


def _field_names(value: Mapping[str, Any], wrapped: bool) -> list[str]:
    if wrapped:
        inner = value.get(WRAP_KEY)
        first = inner[0] if isinstance(inner, list) and inner else inner
        return [str(k) for k in first] if isinstance(first, dict) else [WRAP_KEY]
    return [str(k) for k in value]


# ------------------------------------------------------------------------------ the schema side

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


def iter_paths(value: Any, prefix: str = "") -> Iterator[str]:
    """Dotted paths of every member in ``value`` (arrays crossed), for tests and diagnostics."""
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            yield path
            yield from iter_paths(item, path)
    elif isinstance(value, list):
        for item in value:
            yield from iter_paths(item, prefix)
