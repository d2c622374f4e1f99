"""A workflow tool's schemas and annotations: its ``inputs`` (refs inlined, compacted), its outputs typed
from the steps' responses where the package knows them, and the most-writing step's hints."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from bridge.contract.catalogue import ToolAnnotationsSpec, ToolEntry
from bridge.contract.expressions import json_pointer as pointer
from bridge.contract.expressions.arazzo import Expression
from generator.options import GenerateOptions
from generator.shape.compact import CompactSettings, SchemaCompactor, compact_schema
from generator.workflows.document import ArazzoDocument

__all__ = ["combined_hints", "input_schema", "output_type"]

MAX_INLINED_NODES = 50_000
MAX_REF_DEPTH = 32


class SchemaError(ValueError):
    pass


def _inline(node: Any, doc: ArazzoDocument, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise SchemaError(f"the inputs schema expands to more than {MAX_INLINED_NODES:,} nodes")
    if depth > MAX_REF_DEPTH:
        raise SchemaError("the inputs schema refers to itself (recursive $ref), which a tool's schema cannot hold")
    if isinstance(node, list):
        return [_inline(item, doc, depth, budget) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        if not ref.startswith("#/"):
            raise SchemaError(
                f"$ref {ref[:100]!r}: only refs into this document (#/components/inputs/...) are followed"
            )
        try:
            target = pointer.resolve(doc.document, ref)
        except pointer.PointerError:
            raise SchemaError(f"$ref {ref[:100]!r} does not resolve in {doc.name}") from None
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        inlined = _inline(target, doc, depth + 1, budget)
        return {**inlined, **_inline(siblings, doc, depth, budget)} if isinstance(inlined, dict) else inlined
    return {key: _inline(value, doc, depth, budget) for key, value in node.items()}


def input_schema(inputs: Any, doc: ArazzoDocument, options: GenerateOptions) -> dict[str, Any]:
    """The tool's input schema: ``inputs`` with its refs inlined, an object, compacted like any tool's.

    Raises:
        SchemaError: a ref that cannot be followed, a recursive one, or a schema that is not an object.
    """
    if inputs is None:
        return {"type": "object", "properties": {}}
    schema = _inline(inputs, doc, 0, [MAX_INLINED_NODES])
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise SchemaError("the workflow's inputs must be an object schema (its properties are the tool's arguments)")
    schema = {"type": "object", **{k: v for k, v in schema.items() if k != "$schema"}}
    if not options.compact:
        return schema
    compactor = SchemaCompactor(
        CompactSettings(
            property_description_limit=options.property_description_limit,
            boilerplate_repeats=0,
            share_min_chars=options.share_min_chars,
            boilerplate=frozenset(),
        )
    )
    return compact_schema(schema, compactor)


def _through(schema: Any, tokens: list[str], root: dict[str, Any]) -> Any:
    node = schema
    for token in tokens:
        if isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
            try:
                node = pointer.resolve(root, node["$ref"])
            except pointer.PointerError:
                return None
        if not isinstance(node, dict):
            return None
        if token.isdigit() and isinstance(node.get("items"), dict):
            node = node["items"]
        elif isinstance(node.get("properties"), dict) and token in node["properties"]:
            node = node["properties"][token]
        else:
            return None
    if isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        try:
            node = pointer.resolve(root, node["$ref"])
        except pointer.PointerError:
            return None
    return node


def _standalone(schema: Any) -> dict[str, Any]:
    """``schema`` if it holds no ref into the tool it came from, else just its type (or nothing)."""
    if not isinstance(schema, dict):
        return {}
    text = repr(schema)
    if "'$ref'" not in text:
        return {k: v for k, v in copy.deepcopy(schema).items() if k != "$defs"}
    kind = schema.get("type")
    return {"type": kind} if isinstance(kind, str | list) else {}


def output_type(expression: Expression, entry: ToolEntry | None) -> dict[str, Any]:
    """What a step output ``expression`` holds, as far as the operation ``entry`` says; ``{}``: unknown."""
    if expression.root == "statusCode":
        return {"type": "integer"}
    if expression.root in ("url", "method"):
        return {"type": "string"}
    if expression.root != "response" or entry is None:
        return {}
    source = expression.parts[0]
    if source == "header":
        return {"type": "string"}
    if source != "body" or entry.output_schema is None:
        return {}
    schema: Any = entry.output_schema
    tokens = pointer.split(expression.pointer or "")
    if entry.binding.wrap_output:
        tokens = ["result", *tokens]
    return _standalone(_through(schema, tokens, entry.output_schema))


def combined_hints(entries: Iterable[ToolAnnotationsSpec]) -> ToolAnnotationsSpec:
    """The most-writing step's hints: read-only only if every step is; destructive if any step is."""
    hints = list(entries)
    read_only = all(h.readOnlyHint for h in hints)
    return ToolAnnotationsSpec(
        readOnlyHint=read_only,
        destructiveHint=not read_only and any(h.destructiveHint and not h.readOnlyHint for h in hints),
        idempotentHint=all(h.idempotentHint or h.readOnlyHint for h in hints),
        openWorldHint=any(h.openWorldHint for h in hints) or not hints,
    )
