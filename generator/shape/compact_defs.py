"""``$defs`` of one tool schema: repeated sub-schemas moved there, single-use ones inlined back.

Part of compaction (:mod:`generator.shape.compact`). Every step is linear in the schema as stored:
sub-schemas shared by identity (the converter and the compactor share them between the tools of
an API) are visited once per memo, never once per path through them, and the per-node facts
(digest, size, census of repeated sub-schemas) are kept for the whole API.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from json.encoder import encode_basestring as _encode_text
from json.encoder import encode_basestring_ascii as _encode_ascii
from typing import Any

from generator.parse.schemas.keywords import LIST_KEYWORDS, MAP_KEYWORDS, ONE_KEYWORDS

JsonSchema = dict[str, Any]

DEFS = "$defs"
DEFS_PREFIX = "#/$defs/"
# Subschema keywords, as the converter knows them; $defs are handled on their own here.
_MAP_KEYWORDS = MAP_KEYWORDS - {"$defs", "definitions"}
_ONE_KEYWORDS = ONE_KEYWORDS
_LIST_KEYWORDS = LIST_KEYWORDS
_ANNOTATION_KEYS = frozenset({"title", "description", "default", "examples", "deprecated"})


def _children(node: Any) -> Iterator[Any]:
    """Direct sub-schemas of a schema (not through the root ``$defs``)."""
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key == DEFS:
            continue
        if key in _MAP_KEYWORDS and isinstance(value, dict):
            yield from value.values()
        elif key in _LIST_KEYWORDS and isinstance(value, list):
            yield from value
        elif key in _ONE_KEYWORDS:
            yield value


def _rebuild(node: Any, change: Callable[[Any], Any | None], memo: dict[int, Any]) -> Any:
    """A copy of ``node`` where each sub-schema ``s`` becomes ``change(s)`` (when not None), else is
    rebuilt the same way. Nodes that need no change are returned as they are (shared)."""
    if not isinstance(node, dict):
        return node
    hit = memo.get(id(node))
    if hit is not None:
        return hit[1]
    out: dict[str, Any] = {}
    changed = False

    def sub(value: Any) -> Any:
        nonlocal changed
        new = change(value)
        if new is None:
            new = _rebuild(value, change, memo)
        if new is not value:
            changed = True
        return new

    for key, value in node.items():
        if key == DEFS:
            out[key] = value
        elif key in _MAP_KEYWORDS and isinstance(value, dict):
            out[key] = {name: sub(item) for name, item in value.items()}
        elif key in _LIST_KEYWORDS and isinstance(value, list):
            out[key] = [sub(item) for item in value]
        elif key in _ONE_KEYWORDS:
            out[key] = sub(value)
        else:
            out[key] = value
    result = out if changed else node
    memo[id(node)] = (node, result)
    return result


def _def_name(ref: Any) -> str | None:
    if isinstance(ref, str) and ref.startswith(DEFS_PREFIX):
        return ref[len(DEFS_PREFIX) :]
    return None


def _refs(node: Any, seen: set[int] | None = None) -> Iterator[str]:
    """Every ``$defs`` name referenced from ``node``, once per position (a tree walk)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if not isinstance(current, dict):
            continue
        name = _def_name(current.get("$ref"))
        if name is not None:
            yield name
        stack.extend(_children(current))


def _merge_ref(ref_node: Mapping[str, Any], body: Any) -> Any:
    """The body of a definition in place of ``{"$ref": ..., <siblings>}``."""
    siblings = {k: v for k, v in ref_node.items() if k != "$ref"}
    if not siblings:
        return body
    if not isinstance(body, dict):
        return {"allOf": [body], **siblings}
    if siblings.keys() <= _ANNOTATION_KEYS:
        return {**body, **siblings}
    return {"allOf": [body], **siblings}


def inline_single_use(schema: JsonSchema) -> JsonSchema:
    """Drop unreachable definitions and inline the ones used from exactly one place.

    One pass, linear in the schema: inlining a definition moves its references to its one use
    site, so neither the use counts nor the reachable set change while inlining, and the
    single-use definitions form a forest under their use sites (a cycle of them would be
    unreachable). Each is expanded once, memoised, where its reference was.
    """
    defs: dict[str, Any] = dict(schema.get(DEFS) or {})
    if not defs:
        return schema
    body = {k: v for k, v in schema.items() if k != DEFS}
    refs_of = {name: list(_refs(value)) for name, value in defs.items()}
    body_refs = list(_refs(body))
    reachable: set[str] = set()
    pending = [n for n in body_refs if n in defs]
    while pending:
        name = pending.pop()
        if name in reachable:
            continue
        reachable.add(name)
        pending.extend(n for n in refs_of[name] if n in defs and n not in reachable)
    uses: Counter[str] = Counter(body_refs)
    for name in reachable:
        uses.update(refs_of[name])
    single = {n for n in reachable if uses[n] == 1 and n not in refs_of[n]}
    kept = {name: value for name, value in defs.items() if name in reachable and name not in single}
    if single:
        memo: dict[int, Any] = {}
        expanded: dict[str, Any] = {}

        def expand(name: str) -> Any:
            done = expanded.get(name)
            if done is None:
                done = expanded[name] = at_root(defs[name])
            return done

        def change(node: Any) -> Any | None:
            if isinstance(node, dict):
                name = _def_name(node.get("$ref"))
                if name is not None and name in single:
                    return _merge_ref(_rebuild(node, change, memo), expand(name))
            return None

        def at_root(node: Any) -> Any:
            new = change(node)
            return _rebuild(node, change, memo) if new is None else new

        body = at_root(body)
        kept = {name: at_root(value) for name, value in kept.items()}
    if kept:
        return {**body, DEFS: dict(sorted(kept.items()))}
    return body


class Fingerprints:
    """Canonical digest and serialized size of each sub-schema (memo by identity)."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[Any, str, int]] = {}
        self._censuses: dict[int, _Census] = {}

    def census(self, min_chars: int, titles: Mapping[int, str]) -> _Census:
        """The census of sub-schemas for these settings, kept as long as this memo."""
        found = self._censuses.get(min_chars)
        if found is None or found.titles is not titles:
            found = self._censuses[min_chars] = _Census(self, min_chars, titles)
        return found

    def __call__(self, node: Any) -> tuple[str, int]:
        if not isinstance(node, dict):
            text = json.dumps(node, sort_keys=True, ensure_ascii=False)
            return text, len(text)
        hit = self._memo.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1], hit[2]
        parts: list[str] = []
        size = 2
        for key in sorted(node):
            value = node[key]
            if key in _MAP_KEYWORDS and isinstance(value, dict):
                inner = [(name, self(item)) for name, item in sorted(value.items())]
                text = "{" + ",".join(_key(n) + ":" + d for n, (d, _) in inner) + "}"
                length = 2 + sum(len(_text(n)) + 2 + s for n, (_, s) in inner)
            elif key in _LIST_KEYWORDS and isinstance(value, list):
                inner_list = [self(item) for item in value]
                text = "[" + ",".join(d for d, _ in inner_list) + "]"
                length = 2 + sum(s + 1 for _, s in inner_list)
            elif key in _ONE_KEYWORDS or key == DEFS:
                text, length = self(value) if key != DEFS else (json.dumps(value, sort_keys=True), 0)
            else:
                text = _text(value)
                length = len(text)
            parts.append(_key(key) + ":" + text)
            size += len(key) + 3 + length
        digest = hashlib.sha1("{".join(parts).encode("utf-8")).hexdigest()
        self._memo[id(node)] = (node, digest, size)
        return digest, size


def _text(value: Any) -> str:
    """``json.dumps(value, sort_keys=True, ensure_ascii=False)``; a string (most leaves) straight through
    the encoder's own C function, without building an encoder per call."""
    return _encode_text(value) if type(value) is str else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _key(key: Any) -> str:
    """``json.dumps(key)`` (ASCII), the same way."""
    return _encode_ascii(key) if type(key) is str else json.dumps(key)


Census = dict[str, tuple[int, str]]
_NO_CENSUS: Census = {}


class _Census:
    """Sub-schemas of at least ``min_chars`` below a node: digest -> (uses, capped at 2; the name
    hint of its first use in a depth-first walk). Memoised per node and hint, so a sub-schema
    shared by many places (or many tools) is counted once, never once per path through it."""

    def __init__(self, prints: Fingerprints, min_chars: int, titles: Mapping[int, str]) -> None:
        self.prints = prints
        self.min_chars = min_chars
        self.titles = titles
        self._memo: dict[tuple[int, str], tuple[Any, Census]] = {}

    def __call__(self, node: Any, hint: str) -> Census:
        if not isinstance(node, dict):
            return _NO_CENSUS
        hit = self._memo.get((id(node), hint))
        if hit is not None and hit[0] is node:
            return hit[1]
        out: Census = {}
        children: list[tuple[Any, str]] = []
        for key, value in node.items():
            if key == DEFS:
                continue
            if key in _MAP_KEYWORDS and isinstance(value, dict):
                items = [(item, str(prop)) for prop, item in value.items()]
            elif key in _LIST_KEYWORDS and isinstance(value, list):
                items = [(item, hint) for item in value]
            elif key in _ONE_KEYWORDS:
                items = [(value, f"{hint}_item" if key == "items" else hint)]
            else:
                continue
            for item, item_hint in items:
                if not isinstance(item, dict):
                    continue
                digest, size = self.prints(item)
                if size >= self.min_chars:
                    _add(out, digest, 1, self.titles.get(id(item)) or item_hint)
                children.append((item, item_hint))
        # The order of a stack walk: a node's children are seen first, then the last child's subtree.
        for item, item_hint in reversed(children):
            for digest, (n, found) in self(item, item_hint).items():
                _add(out, digest, n, found)
        result = out or _NO_CENSUS
        self._memo[(id(node), hint)] = (node, result)
        return result


def _add(census: Census, digest: str, uses: int, hint: str) -> None:
    known = census.get(digest)
    census[digest] = (1 if uses == 1 else 2, hint) if known is None else (2, known[1])


_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def share_defs(
    schema: JsonSchema,
    *,
    min_chars: int,
    titles: Mapping[int, str] | None = None,
    prints: Fingerprints | None = None,
) -> JsonSchema:
    """Move sub-schemas repeated in ``schema`` (each at least ``min_chars`` of JSON) to ``$defs``.

    Names come from the sub-schema's original title, else the property it was first found under.
    Definitions that end up used once are inlined back.
    """
    if min_chars <= 0:
        return inline_single_use(schema)
    titles = titles if titles is not None else {}
    defs: dict[str, Any] = dict(schema.get(DEFS) or {})
    body = {k: v for k, v in schema.items() if k != DEFS}
    # One memo for a whole API: compacted sub-schemas are shared between its tools.
    prints = prints if prints is not None else Fingerprints()
    census = prints.census(min_chars, titles)
    counts: dict[str, int] = {}
    hints: dict[str, str] = {}
    for root, hint in [(body, "schema"), *((value, name) for name, value in defs.items())]:
        for digest, (n, found) in census(root, hint).items():
            counts[digest] = counts.get(digest, 0) + n
            hints.setdefault(digest, found)
    chosen = {digest for digest, n in counts.items() if n >= 2}
    if not chosen:
        return inline_single_use(schema)
    names: dict[str, str] = {}
    taken = set(defs)
    pending: list[tuple[str, Any]] = []

    def name_for(digest: str, node: Any) -> str:
        name = names.get(digest)
        if name is None:
            base = _UNSAFE_NAME.sub("_", hints.get(digest, "schema")).strip("_.") or "schema"
            name, number = base, 2
            while name in taken:
                name, number = f"{base}_{number}", number + 1
            taken.add(name)
            names[digest] = name
            pending.append((name, node))
        return name

    memo: dict[int, Any] = {}

    def change(node: Any) -> Any | None:
        if not isinstance(node, dict):
            return None
        digest, size = prints(node)
        if size >= min_chars and digest in chosen:
            return {"$ref": DEFS_PREFIX + name_for(digest, node)}
        return None

    body = _rebuild(body, change, memo)
    defs = {name: _rebuild(value, change, memo) for name, value in defs.items()}
    while pending:
        name, node = pending.pop()
        defs[name] = _rebuild(node, change, memo)
    return inline_single_use({**body, DEFS: defs})


# -------------------------------------------------------------------------------- constraints


CONSTRAINT_KEYWORDS = (
    "type",
    "enum",
    "const",
    "format",
    "pattern",
    "default",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
)


def count_constraints(schema: Any, *, max_nodes: int = 2_000_000) -> Counter[str]:
    """Constraints of ``schema`` counted on its expansion: each ``$defs`` reference is followed,
    except into a definition already open on the current path (a cycle).

    ``required`` counts required names, ``enum`` counts values, ``additionalProperties: false``
    counts as ``closed``; the other keywords count occurrences. Two schemas that accept the same
    instances through the same constraints give the same counts whether or not they share
    ``$defs``.
    """
    root = schema if isinstance(schema, dict) else {}
    defs = root.get(DEFS) if isinstance(root.get(DEFS), dict) else {}
    assert isinstance(defs, dict)
    counts: Counter[str] = Counter()
    stack: list[tuple[Any, frozenset[str]]] = [(root, frozenset())]
    visited = 0
    while stack:
        node, path = stack.pop()
        if not isinstance(node, dict):
            continue
        visited += 1
        if visited > max_nodes:
            raise ValueError("schema expansion too large to count")
        name = _def_name(node.get("$ref"))
        if name is not None and name in defs and name not in path:
            stack.append((defs[name], path | {name}))
        for key in CONSTRAINT_KEYWORDS:
            if key not in node:
                continue
            value = node[key]
            if key == "enum" and isinstance(value, list):
                counts["enum"] += len(value)
            else:
                counts[key] += 1
        required = node.get("required")
        if isinstance(required, list):
            counts["required"] += len(set(required))
        if node.get("additionalProperties") is False:
            counts["closed"] += 1
        stack.extend((child, path) for child in _children(node))
    return counts
