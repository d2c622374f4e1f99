"""Required parameters whose one possible value the spec states: sent by the bridge, not asked of the model.

Two kinds, both read the way Azure's autorest reads them:

* a required parameter whose ``enum`` has a single value (``op: {enum: [OPEN]}``,
  ``read: {enum: ["true"]}``): autorest makes it a constant, and any other value is refused;
* a required ``api-version`` (query or header) with no enum of its own: the value its examples
  and default agree on, else the document's ``info.version`` when that is a date-style API
  version (``2016-11-01``, ``2023-05-01-preview``), which is how Azure specs state it.

The parameter is bound to that value (``Param.bound``), so it leaves the input schema, and the
generator says so once per name and value (a NOTE). The operator's ``bind:`` still wins.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from bridge.contract.catalogue import BoundValue

API_VERSION = "api-version"
_DATED_VERSION = re.compile(r"\d{4}-\d{2}-\d{2}(-[A-Za-z0-9.]+)?")
_LOCATIONS = ("path", "query", "header")


def spec_constant(node: Mapping[str, Any], info_version: str) -> tuple[BoundValue, str] | None:
    """``(value to send, why)`` when the required parameter ``node`` can only take one value."""
    if node.get("in") not in _LOCATIONS or not (node.get("required") is True or node.get("in") == "path"):
        return None
    schema = node.get("schema")
    schema = schema if isinstance(schema, Mapping) else {}
    enum = schema.get("enum")
    if isinstance(enum, list):
        if len(enum) == 1 and (text := _text(enum[0])) is not None:
            return BoundValue(value=text), "its enum has this one value"
        return None
    if str(node.get("name", "")).lower() != API_VERSION or schema.get("type", "string") != "string":
        return None
    stated = {text for value in _stated_values(node, schema) if (text := _text(value)) is not None}
    if len(stated) == 1:
        return BoundValue(value=stated.pop()), "every example and default of the spec gives this value"
    if not stated and _DATED_VERSION.fullmatch(info_version):
        return BoundValue(value=info_version), "the spec's info.version"
    return None


def _stated_values(node: Mapping[str, Any], schema: Mapping[str, Any]) -> list[Any]:
    values: list[Any] = []
    for holder in (node, schema):
        for key in ("example", "default"):
            if key in holder:
                values.append(holder[key])
        examples = holder.get("examples")
        if isinstance(examples, Mapping):
            values += [entry.get("value") for entry in examples.values() if isinstance(entry, Mapping)]
        elif isinstance(examples, list):
            values += examples
    return values


def _text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int | float):
        return str(value)
    return None
