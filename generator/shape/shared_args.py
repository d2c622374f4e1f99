"""Argument descriptions said once for the whole API instead of in every tool.

An argument described identically in at least ``min_tools`` tools, and so in (nearly) every tool
that has it, loses that description; the catalogue's ``shared_arguments`` carries it, and the
server says it once in its instructions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from bridge.contract.catalogue import JsonSchema

SHARED_ARGUMENT_SHARE = 0.8


def shared_arguments(input_schemas: Sequence[Mapping[str, Any]], min_tools: int) -> dict[str, str]:
    """Argument name -> the description shared by ``input_schemas`` (one per tool)."""
    if min_tools <= 0:
        return {}
    counts: Counter[tuple[str, str]] = Counter()
    uses: Counter[str] = Counter()
    for schema in input_schemas:
        properties = schema.get("properties") or {}
        uses.update(list(properties))
        for name, prop in properties.items():
            if isinstance(prop, dict) and isinstance(prop.get("description"), str):
                counts[(name, prop["description"])] += 1
    # Only a description that is the argument's meaning in (nearly) every tool that has it: then
    # at most one description per name qualifies.
    shared = {
        (name, text) for (name, text), n in counts.items() if n >= min_tools and n >= SHARED_ARGUMENT_SHARE * uses[name]
    }
    return dict(sorted(shared))


def without_shared(schema: JsonSchema, glossary: Mapping[str, str]) -> JsonSchema:
    """``schema`` without the argument descriptions ``glossary`` says once for every tool."""
    properties = schema.get("properties") or {}
    changed = {
        name: {k: v for k, v in prop.items() if k != "description"}
        for name, prop in properties.items()
        if isinstance(prop, dict) and name in glossary and prop.get("description") == glossary[name]
    }
    if not changed:
        return schema
    return {**schema, "properties": {**properties, **changed}}
