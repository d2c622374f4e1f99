"""Tool schemas as one JSON Schema document, identical object shapes hoisted into shared ``$defs``.

Tool schemas are self-contained, so a component used by many operations (GitHub's ``simple-user``
appears in hundreds of responses) is inlined many times. Handed over as is, datamodel-code-generator
would parse every copy and emit numbered duplicate classes (``Owner``, ``Owner1``, ...), which is
also what makes it slow on big APIs. So identical object schemas are hoisted into one shared
``$defs`` entry first; the library then sees each distinct shape once (generator/stubs.py).
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
    """Replace object schemas seen more than once by refs into one shared ``$defs`` table."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.defs: dict[str, Any] = {}
        self._names: dict[str, str] = {}
        self._digests: dict[int, str] = {}
        self.reserved: set[str] = set()

    def _digest(self, node: dict[str, Any]) -> str:
        key = id(node)
        digest = self._digests.get(key)
        if digest is None:
            canonical = json.dumps(node, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            # A shape with a $ref points into its own tool's $defs: it stays inside that tool.
            digest = "" if '"$ref":' in canonical else hashlib.sha256(canonical.encode()).hexdigest()
            self._digests[key] = digest
        return digest

    def count(self, node: Any) -> None:
        if isinstance(node, dict):
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
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                out[key] = {prop: self.hoist(schema, prop) for prop, schema in value.items()}
            else:
                out[key] = self.hoist(value, hint)
        digest = self._digest(node) if _is_shareable(node) else ""
        if root or self.counts.get(digest, 0) < 2:
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
                roots.append((base + suffix, schema))
                hoister.count(schema)
    hoister.reserved = {name for name, _ in roots}
    defs: dict[str, Any] = {}
    for name, schema in roots:
        defs[name] = _lift_local_defs(hoister.hoist(schema, name, root=True), name, defs)
    defs.update(hoister.defs)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}


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
