"""Schema ``default`` values filled into arguments: planned once per schema, applied per call."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bridge.tools.schema_messages import resolve_local

__all__ = ["Defaults", "defaults_plan"]

_IMMUTABLE = (str, int, float, bool, type(None))


@dataclass(frozen=True, slots=True)
class Defaults:
    """Property defaults of one object schema, and plans for nested object properties."""

    values: tuple[tuple[str, Any], ...]
    nested: tuple[tuple[str, Defaults], ...]

    def apply(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Return ``obj`` with defaults filled in; copies only what it changes."""
        out: dict[str, Any] | None = None
        for key, value in self.values:
            if key not in obj:
                if out is None:
                    out = dict(obj)
                out[key] = value if isinstance(value, _IMMUTABLE) else copy.deepcopy(value)
        for key, plan in self.nested:
            child = obj.get(key)
            if isinstance(child, dict):
                filled = plan.apply(child)
                if filled is not child:
                    if out is None:
                        out = dict(obj)
                    out[key] = filled
        return obj if out is None else out


def defaults_plan(root: Mapping[str, Any], schema: Any, seen: frozenset[int] = frozenset()) -> Defaults | None:
    schema = resolve_local(root, schema)
    if not isinstance(schema, Mapping) or id(schema) in seen:
        return None
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return None
    seen = seen | {id(schema)}
    values: list[tuple[str, Any]] = []
    nested: list[tuple[str, Defaults]] = []
    for key, sub in props.items():
        sub = resolve_local(root, sub)
        if not isinstance(sub, Mapping):
            continue
        if "default" in sub:
            values.append((key, sub["default"]))
        elif (plan := defaults_plan(root, sub, seen)) is not None:
            nested.append((key, plan))
    if not values and not nested:
        return None
    return Defaults(tuple(values), tuple(nested))
