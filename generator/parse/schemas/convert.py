"""OpenAPI 3.0/3.1 schema objects → self-contained JSON Schema (2020-12) for tool schemas.

Local ``$ref``s are inlined. A schema that takes part in a reference cycle (found once per
document with Tarjan's algorithm) is never inlined: every use becomes ``{"$ref": "#/$defs/Name"}``
and the tool schema's root ``$defs`` carries its body. Because that choice depends only on the
reference graph, never on where the walk started, each converted component is cached per
(pointer, direction) and the same dict objects are shared by every tool that uses them. Nothing
here mutates a converted schema after it is built; callers must copy before changing one.

3.0 dialect is translated on the way (:mod:`generator.parse.schemas.dialect`): ``nullable`` becomes a
``null`` type (or an ``anyOf``), boolean ``exclusiveMinimum``/``exclusiveMaximum`` become numeric
bounds, and OpenAPI-only or vendor keywords are dropped. Only known JSON Schema keywords are kept
(:mod:`generator.parse.schemas.keywords`), so no raw ``$ref`` can slip through an unknown keyword.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from bridge.contract.expressions import json_pointer as jsonpointer
from generator.parse.schemas.bad_defaults import without_bad_examples
from generator.parse.schemas.dialect import fix_exclusive_bounds, make_nullable, merge_siblings
from generator.parse.schemas.keywords import COPY_KEYWORDS, LIST_KEYWORDS, MAP_KEYWORDS, ONE_KEYWORDS, Schema, refs_in

Direction = Literal["request", "response"]
REQUEST: Direction = "request"
RESPONSE: Direction = "response"
DEFS_PREFIX = "#/$defs/"
COMPONENT_SCHEMAS = "#/components/schemas/"

_MAX_REF_HOPS = 32
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


class SchemaError(ValueError):
    """A schema that cannot be converted (unresolvable ``$ref``, wrong shape)."""


@dataclass(frozen=True, slots=True)
class Converted:
    """A converted schema and the recursive schemas (by pointer) it refers to through ``$defs``."""

    schema: Schema
    needs: frozenset[str] = frozenset()


_EMPTY: frozenset[str] = frozenset()


class SchemaConverter:
    """Converts the schemas of one document; holds the per-document caches."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self._document = document
        self._inline: dict[tuple[str, Direction], Converted] = {}
        self._bodies: dict[tuple[str, Direction], Converted] = {}
        self._edges: dict[str, tuple[str, ...]] = {}
        self._scc_done: set[str] = set()
        self._recursive: set[str] = set()
        self._def_names: dict[str, str] = {}
        self._def_pointers: dict[str, str] = {}

    # Public API -------------------------------------------------------------------------------

    def convert(self, schema: Any, direction: Direction) -> Converted:
        """Convert one schema; raises SchemaError."""
        return self._convert(schema, direction)

    def convert_root(self, schema: Any, direction: Direction) -> Converted:
        """Like ``convert``, but a root that is only a ``$defs`` reference is replaced by its body.

        Tool schemas need their properties at the root (``type: object``), not behind a ``$ref``.
        """
        converted = self._convert(schema, direction)
        for _ in range(_MAX_REF_HOPS):
            target = self._def_target(converted.schema)
            if target is None:
                return converted
            pointer, extra = target
            body = self._body(pointer, direction)
            merged = merge_siblings(body.schema, extra)
            converted = Converted(merged, converted.needs | body.needs)
        return converted

    def with_defs(self, schema: dict[str, Any], needs: Iterable[str], direction: Direction) -> dict[str, Any]:
        """Return ``schema`` (copied) with the ``$defs`` its references need, or unchanged if none."""
        defs = self.defs(needs, direction)
        if not defs:
            return schema
        own = schema.get("$defs")
        merged = {**own, **defs} if isinstance(own, dict) else defs
        return {**schema, "$defs": merged}

    def defs(self, needs: Iterable[str], direction: Direction) -> dict[str, Schema]:
        """The ``$defs`` entries for ``needs`` and everything they refer to, sorted by name."""
        pending = sorted(set(needs))
        seen = set(pending)
        out: dict[str, Schema] = {}
        while pending:
            ref = pending.pop()
            body = self._body(ref, direction)
            out[self._def_name(ref)] = body.schema
            for other in sorted(body.needs - seen):
                seen.add(other)
                pending.append(other)
        return dict(sorted(out.items()))

    def is_object(self, schema: Schema, direction: Direction, depth: int = 0) -> bool:
        """True if every instance the schema accepts is clearly a JSON object."""
        if not isinstance(schema, dict) or depth > _MAX_REF_HOPS:
            return False
        target = self._def_target(schema)
        if target is not None:
            return self.is_object(self._body(target[0], direction).schema, direction, depth + 1)
        kind = schema.get("type")
        if kind is not None:
            return bool(kind == "object" or kind == ["object"])
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and any(self.is_object(s, direction, depth + 1) for s in all_of):
            return True
        for key in ("anyOf", "oneOf"):
            members = schema.get(key)
            if isinstance(members, list):
                return bool(members) and all(self.is_object(s, direction, depth + 1) for s in members)
        return "properties" in schema or "additionalProperties" in schema

    # Conversion -------------------------------------------------------------------------------

    def _convert(self, node: Any, direction: Direction) -> Converted:
        if isinstance(node, bool):
            return Converted(node)
        if not isinstance(node, dict):
            raise SchemaError(f"a schema must be an object or a boolean, not {type(node).__name__}")
        if "$ref" in node:
            return self._convert_ref_node(node, direction)
        return self._convert_plain(node, direction)

    def _convert_plain(self, node: Mapping[str, Any], direction: Direction) -> Converted:
        out: dict[str, Any] = {}
        needs: set[str] = set()
        for key, value in node.items():
            if key in COPY_KEYWORDS:
                out[key] = value
            elif key == "properties":
                out[key] = self._properties(value, direction, needs)
            elif key in MAP_KEYWORDS:
                out[key] = self._map(key, value, direction, needs)
            elif key == "items" and isinstance(value, list):
                # Draft-4 tuple form; 2020-12 spells it prefixItems.
                out["prefixItems"] = self._list(key, value, direction, needs)
            elif key in ONE_KEYWORDS:
                out[key] = self._sub(value, direction, needs)
            elif key in LIST_KEYWORDS:
                out[key] = self._list(key, value, direction, needs)
        fix_exclusive_bounds(out)
        if out.get("type") == "file":  # Swagger 2.0 leftover
            out["type"] = "string"
            out["format"] = "binary"
        self._filter_required(node, out, direction)
        result: Schema = make_nullable(out) if node.get("nullable") is True else out
        if isinstance(result, dict):
            without_bad_examples(result)
        return Converted(result, frozenset(needs) if needs else _EMPTY)

    def _sub(self, value: Any, direction: Direction, needs: set[str]) -> Schema:
        converted = self._convert(value, direction)
        needs.update(converted.needs)
        return converted.schema

    def _list(self, key: str, value: Any, direction: Direction, needs: set[str]) -> list[Schema]:
        if not isinstance(value, list):
            raise SchemaError(f"{key} must be a list")
        return [self._sub(item, direction, needs) for item in value]

    def _map(self, key: str, value: Any, direction: Direction, needs: set[str]) -> dict[str, Schema]:
        if not isinstance(value, dict):
            raise SchemaError(f"{key} must be an object")
        return {name: self._sub(item, direction, needs) for name, item in value.items()}

    def _properties(self, value: Any, direction: Direction, needs: set[str]) -> dict[str, Schema]:
        """Convert properties, leaving out the ones that do not travel in this direction."""
        if not isinstance(value, dict):
            raise SchemaError("properties must be an object")
        flag = _hidden_flag(direction)
        return {
            name: self._sub(item, direction, needs) for name, item in value.items() if not self._flagged(item, flag)
        }

    def _filter_required(self, node: Mapping[str, Any], out: dict[str, Any], direction: Direction) -> None:
        required = out.get("required")
        if not isinstance(required, list):
            out.pop("required", None)
            return
        hidden = self._flagged_names(node, _hidden_flag(direction), 0)
        if hidden:
            kept = [name for name in required if name not in hidden]
            if kept:
                out["required"] = kept
            else:
                del out["required"]

    def _flagged(self, node: Any, flag: str, hops: int = 0) -> bool:
        """Whether a raw schema is marked ``readOnly``/``writeOnly``, following ``$ref``s."""
        if not isinstance(node, dict) or hops > _MAX_REF_HOPS:
            return False
        if node.get(flag) is True:
            return True
        ref = node.get("$ref")
        if isinstance(ref, str):
            try:
                return self._flagged(self._target(ref), flag, hops + 1)
            except SchemaError:
                return False
        return False

    def _flagged_names(self, node: Any, flag: str, hops: int) -> set[str]:
        """Names of flagged properties of a raw object schema, including those from allOf members.

        ``required`` often sits next to an ``allOf`` that brings the properties in.
        """
        if not isinstance(node, dict) or hops > _MAX_REF_HOPS:
            return set()
        ref = node.get("$ref")
        if isinstance(ref, str):
            try:
                return self._flagged_names(self._target(ref), flag, hops + 1)
            except SchemaError:
                return set()
        names: set[str] = set()
        properties = node.get("properties")
        if isinstance(properties, dict):
            names.update(name for name, item in properties.items() if self._flagged(item, flag))
        members = node.get("allOf")
        if isinstance(members, list):
            for member in members:
                names |= self._flagged_names(member, flag, hops + 1)
        return names

    def _convert_ref_node(self, node: Mapping[str, Any], direction: Direction) -> Converted:
        ref = node["$ref"]
        if not isinstance(ref, str):
            raise SchemaError("$ref must be a string")
        target = self._ref(ref, direction)
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        if not siblings:
            return target
        nullable = siblings.pop("nullable", None) is True
        extra = self._convert_plain(siblings, direction)
        extra_schema = extra.schema if isinstance(extra.schema, dict) else {}
        merged = merge_siblings(target.schema, extra_schema)
        if nullable:
            merged = make_nullable(merged)
        return Converted(merged, target.needs | extra.needs)

    def _ref(self, ref: str, direction: Direction) -> Converted:
        self._target(ref)  # fail early on a dangling ref
        if self._is_recursive(ref):
            return Converted({"$ref": DEFS_PREFIX + self._def_name(ref)}, frozenset({ref}))
        key = (ref, direction)
        cached = self._inline.get(key)
        if cached is None:
            cached = self._convert(self._target(ref), direction)
            self._inline[key] = cached
        return cached

    def _body(self, ref: str, direction: Direction) -> Converted:
        """The converted target of a recursive reference: the content of its ``$defs`` entry."""
        key = (ref, direction)
        cached = self._bodies.get(key)
        if cached is None:
            cached = self._convert(self._target(ref), direction)
            self._bodies[key] = cached
        return cached

    def _target(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise SchemaError(f"$ref {ref!r} cannot be loaded (it is not a local reference)")
        try:
            return jsonpointer.resolve(self._document, ref)
        except jsonpointer.PointerError as exc:
            raise SchemaError(f"$ref {ref!r} does not resolve") from exc

    def _def_target(self, schema: Schema) -> tuple[str, dict[str, Any]] | None:
        """For ``{"$ref": "#/$defs/X", <annotations>}``: X's pointer and the annotations."""
        if not isinstance(schema, dict):
            return None
        ref = schema.get("$ref")
        if not isinstance(ref, str) or not ref.startswith(DEFS_PREFIX):
            return None
        pointer = self._def_pointers.get(ref[len(DEFS_PREFIX) :])
        if pointer is None:
            return None
        extra = {key: value for key, value in schema.items() if key != "$ref"}
        return pointer, extra

    # Reference graph --------------------------------------------------------------------------

    def _def_name(self, ref: str) -> str:
        name = self._def_names.get(ref)
        if name is None:
            base = _def_base_name(ref)
            name, number = base, 2
            while name in self._def_pointers:
                name, number = f"{base}_{number}", number + 1
            self._def_names[ref] = name
            self._def_pointers[name] = ref
        return name

    def _edges_of(self, ref: str) -> tuple[str, ...]:
        edges = self._edges.get(ref)
        if edges is None:
            try:
                target = self._target(ref)
            except SchemaError:
                target = None
            edges = tuple(dict.fromkeys(refs_in(target)))
            self._edges[ref] = edges
        return edges

    def _is_recursive(self, ref: str) -> bool:
        if ref not in self._scc_done:
            self._tarjan(ref)
        return ref in self._recursive

    def _tarjan(self, start: str) -> None:
        """Iterative Tarjan from ``start``; marks the members of every cyclic component found.

        Nodes finished by an earlier run are skipped, so the whole document is visited once.
        """
        index: dict[str, int] = {start: 0}
        low: dict[str, int] = {start: 0}
        stack = [start]
        on_stack = {start}
        work: list[tuple[str, Iterator[str]]] = [(start, iter(self._edges_of(start)))]
        while work:
            node, edges = work[-1]
            for child in edges:
                if child in self._scc_done:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(self._edges_of(child))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    self._close_component(node, stack, on_stack)

    def _close_component(self, root: str, stack: list[str], on_stack: set[str]) -> None:
        component: list[str] = []
        while True:
            member = stack.pop()
            on_stack.discard(member)
            component.append(member)
            if member == root:
                break
        self._scc_done.update(component)
        if len(component) > 1 or root in self._edges_of(root):
            self._recursive.update(component)


def _hidden_flag(direction: Direction) -> str:
    """Request schemas hide readOnly properties; response schemas hide writeOnly ones."""
    return "readOnly" if direction == REQUEST else "writeOnly"


def _def_base_name(ref: str) -> str:
    rest = ref[len(COMPONENT_SCHEMAS) :] if ref.startswith(COMPONENT_SCHEMAS) else ref
    tokens = jsonpointer.split(rest if rest.startswith("#") else "#/" + rest)
    name = _UNSAFE_NAME.sub("_", ".".join(tokens)).strip("_.")
    return name or "schema"
