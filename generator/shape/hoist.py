"""Tool schemas as one JSON Schema document, identical object shapes hoisted into shared ``$defs``.

Tool schemas are self-contained, so a component used by many operations (GitHub's ``simple-user``
appears in hundreds of responses) is inlined many times. Typed as is, every copy would become a
numbered duplicate class (``Owner``, ``Owner1``, ...). So identical object schemas are hoisted into
one shared ``$defs`` entry first, and the stubs type each distinct shape once
(generator/emit/typed_dicts.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

_WORD = re.compile(r"[A-Za-z0-9]+")


def class_name(text: str, fallback: str = "Model") -> str:
    words = _WORD.findall(text)
    name = "".join(w[:1].upper() + w[1:] for w in words)
    if not name:
        return fallback
    return name if name[0].isalpha() else fallback + name


def _is_shareable(node: dict[str, Any]) -> bool:
    return node.get("type") == "object" and isinstance(node.get("properties"), dict) and bool(node["properties"])


class _Hoister:
    """Replace object schemas seen more than once by refs into one shared ``$defs`` table.

    Tool schemas arrive as DAGs (a tool's acyclic ``$defs`` substituted by the same object at
    every use, :func:`_resolve_local_defs`), so every walk is memoised by object identity and a
    shape's digest is a Merkle hash (nested shapes by their own digest): linear in the DAG, where
    hashing the expanded text grew with every level of reuse (a 400-operation e-signature API's
    tabs inside recipients inside envelopes).
    """

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.defs: dict[str, Any] = {}
        self._names: dict[str, str] = {}
        self._canonical: dict[int, tuple[str, bool]] = {}
        self._seen: set[int] = set()
        self._keep: list[Any] = []  # keeps the walked nodes alive, so their ids stay theirs
        self.reserved: set[str] = set()

    def _digest(self, node: dict[str, Any]) -> str:
        """The shape's digest; "" when it holds a ``$ref`` (into its own tool's recursive defs:
        it stays inside that tool)."""
        text, has_ref = self._canon(node)
        return "" if has_ref else text

    def _canon(self, node: Any) -> tuple[str, bool]:
        """(canonical text, holds a $ref) of a dict; a shareable one's text is its digest."""
        key = id(node)
        found = self._canonical.get(key)
        if found is not None:
            return found
        self._keep.append(node)
        refs: list[bool] = []
        shallow = self._shallow(node, refs)
        text = json.dumps(shallow, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        if _is_shareable(node):
            text = "#" + hashlib.sha256(text.encode()).hexdigest()
        result = text, any(refs)
        self._canonical[key] = result
        return result

    def _shallow(self, value: Any, refs: list[bool]) -> Any:
        """``value`` with each nested shareable shape replaced by its digest (one json.dumps, in C,
        does the rest)."""
        if isinstance(value, dict):
            if "$ref" in value:
                refs.append(True)
            out: dict[str, Any] = {}
            for name, sub in value.items():
                if isinstance(sub, dict) and _is_shareable(sub):
                    text, has_ref = self._canon(sub)
                    if has_ref:
                        refs.append(True)
                    out[name] = text
                else:
                    out[name] = self._shallow(sub, refs)
            return out
        if isinstance(value, list):
            return [self._shallow(item, refs) for item in value]
        return value

    def count(self, node: Any) -> None:
        if isinstance(node, dict):
            if id(node) not in self._seen:  # a shared object: its insides are counted once
                self._seen.add(id(node))
                self._keep.append(node)
                for value in node.values():
                    self.count(value)
            if _is_shareable(node) and (digest := self._digest(node)):
                self.counts[digest] = self.counts.get(digest, 0) + 1
        elif isinstance(node, list):
            for value in node:
                self.count(value)

    def hoist(self, node: Any, hint: str, *, root: bool = False) -> Any:
        if isinstance(node, list):
            return [self.hoist(v, hint) for v in node]
        if not isinstance(node, dict):
            return node
        digest = self._digest(node) if _is_shareable(node) else ""
        hoisted = not root and self.counts.get(digest, 0) >= 2
        if hoisted and digest in self._names:
            return {"$ref": f"#/$defs/{self._names[digest]}"}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                out[key] = {prop: self.hoist(schema, prop) for prop, schema in value.items()}
            else:
                out[key] = self.hoist(value, hint)
        if not hoisted:
            return out
        if digest not in self._names:
            base = class_name(str(node.get("title") or hint), "Shared")
            name, n = base, 2
            while name in self.defs or name in self.reserved:
                name, n = f"{base}{n}", n + 1
            self._names[digest] = name
            self.defs[name] = out
        return {"$ref": f"#/$defs/{self._names[digest]}"}


def hoisted_document(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """One JSON Schema whose ``$defs`` hold ``<Tool>Input``/``<Tool>Output`` plus the shared shapes."""
    hoister = _Hoister()
    roots: list[tuple[str, dict[str, Any]]] = []
    for tool in tools:
        base = class_name(tool["name"], "Tool")
        for suffix, key in (("Input", "inputSchema"), ("Output", "outputSchema")):
            schema = tool.get(key)
            if schema is not None:
                schema = _resolve_local_defs(schema)
                roots.append((base + suffix, schema))
                hoister.count(schema)
    hoister.reserved = {name for name, _ in roots}
    defs: dict[str, Any] = {}
    for name, schema in roots:
        defs[name] = _lift_local_defs(hoister.hoist(schema, name, root=True), name, defs)
    defs.update(hoister.defs)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}


_LOCAL = "#/$defs/"


def _resolve_local_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each ``$ref`` to one of its own acyclic ``$defs`` replaced by that def's
    (resolved) object, the same object at every use; recursive defs stay refs in ``$defs``.

    Compaction moves a tool's repeated shapes into its ``$defs``; left as refs they made every
    shape around them unshareable, so a big API's stubs repeated each shape once per tool (35
    ``ViewTab`` classes, and took the stub generator of the time a minute and 1.9 GB).
    """
    local = schema.get("$defs")
    if not isinstance(local, dict) or not local:
        return schema
    has_ref: dict[int, bool] = {}
    edges = {name: _refs(body) for name, body in local.items()}
    cyclic = {name for name in local if _reaches(name, name, edges)}
    resolved: dict[str, Any] = {}

    def resolve(node: Any) -> Any:
        if isinstance(node, list):
            return [resolve(v) for v in node]
        if not isinstance(node, dict):
            return node
        if not _holds_ref(node, has_ref):
            return node  # nothing to resolve: the same object (tools share it, so does the hoister)
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_LOCAL) and ref[len(_LOCAL) :] in local:
            name = ref[len(_LOCAL) :]
            if name not in cyclic:
                if name not in resolved:
                    resolved[name] = resolve(local[name])
                siblings = {k: resolve(v) for k, v in node.items() if k != "$ref"}
                target = resolved[name]
                if not siblings:
                    return target
                if isinstance(target, dict) and not set(siblings) & set(target):
                    return {**target, **siblings}
                return {**siblings, "allOf": [target]}
        return {k: resolve(v) for k, v in node.items() if k != "$defs"}

    out: dict[str, Any] = resolve(schema)
    if cyclic:
        out["$defs"] = {name: resolve(local[name]) for name in local if name in cyclic}
    return out


def _holds_ref(node: Any, memo: dict[int, bool]) -> bool:
    """Whether ``node`` holds a ``$ref`` anywhere (memoised by identity; the nodes outlive the memo)."""
    if isinstance(node, list):
        return any(_holds_ref(item, memo) for item in node)
    if not isinstance(node, dict):
        return False
    key = id(node)
    found = memo.get(key)
    if found is None:
        found = "$ref" in node or any(_holds_ref(value, memo) for value in node.values())
        memo[key] = found
    return found


def _refs(node: Any) -> set[str]:
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str) and ref.startswith(_LOCAL):
                found.add(ref[len(_LOCAL) :])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _reaches(start: str, goal: str, edges: dict[str, set[str]]) -> bool:
    seen: set[str] = set()
    stack = list(edges.get(start, ()))
    while stack:
        name = stack.pop()
        if name == goal:
            return True
        if name not in seen:
            seen.add(name)
            stack.extend(edges.get(name, ()))
    return False


def _lift_local_defs(schema: dict[str, Any], owner: str, defs: dict[str, Any]) -> dict[str, Any]:
    # A tool schema's own $defs (recursive shapes) move up beside it, renamed per tool.
    local = schema.pop("$defs", None)
    if not local:
        return schema
    renames = {name: f"{owner}{class_name(name)}" for name in local}

    def rewrite(node: Any) -> Any:
        if isinstance(node, list):
            return [rewrite(v) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in renames:
            return {**node, "$ref": f"#/$defs/{renames[ref[8:]]}"}
        return {k: rewrite(v) for k, v in node.items()}

    for name, sub in local.items():
        defs[renames[name]] = rewrite(sub)
    result: dict[str, Any] = rewrite(schema)
    return result
