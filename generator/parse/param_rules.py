"""Which names a tool's parameters may put on the wire (SECURITY.md P11, P15).

Two rules, both about names the model must not pick:

- A credential slot (the header, query or cookie an apiKey scheme fills) is never an argument,
  whether or not the operation lists the scheme: a model-chosen value there is a credential the
  operator never gave. A parameter the operation declares in a slot is filled from its scheme's
  credential on every call (``BoundValue.scheme``), whichever security alternative the call uses
  or none: real specs declare ``key`` and ``token`` as required parameters and list the two
  schemes as alternatives, and the API wants both.
- An object parameter serialised ``style: form, explode: true`` (the query default; cookies too)
  turns each member into a name of its own on the wire. Its members are the properties the spec
  declares, unless the spec allows free keys; either way never the name of another parameter, of
  a literal query pair of the path template, or of a credential slot. The runtime checks the
  same rule (``bridge.request.wire_names``), so schema and serialiser agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bridge.contract.catalogue import BoundValue, SecurityScheme
from bridge.contract.wire_rules import credential_name
from generator.parse.schemas.convert import REQUEST, SchemaConverter
from generator.parse.schemas.keywords import Schema

# Composition keywords under which the declared properties are not simply `properties`.
_COMPOSED = ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "dependentSchemas")


def credential_slots(schemes: Mapping[str, SecurityScheme]) -> set[tuple[str, str]]:
    """``(location, name)`` of every apiKey scheme of the document; header names lower-cased."""
    return {
        (scheme.location, slot_key(scheme.location, scheme.param_name))
        for scheme in schemes.values()
        if scheme.type == "apiKey" and scheme.location and scheme.param_name
    }


def slot_schemes(schemes: Mapping[str, SecurityScheme]) -> dict[tuple[str, str], str]:
    """``(location, name)`` of each credential slot -> the first apiKey scheme that fills it."""
    found: dict[tuple[str, str], str] = {}
    for scheme_name, scheme in schemes.items():
        if scheme.type == "apiKey" and scheme.location and scheme.param_name:
            found.setdefault((scheme.location, slot_key(scheme.location, scheme.param_name)), scheme_name)
    return found


def slot_binding(schemes: Mapping[str, SecurityScheme], location: str, name: str) -> BoundValue | None:
    """The credential that fills a declared parameter in a credential slot, or None (not a slot)."""
    scheme_name = slot_schemes(schemes).get((location, slot_key(location, name)))
    if scheme_name is None:
        return None
    var = next((v.name for v in schemes[scheme_name].env if v.role == "value"), None)
    return BoundValue(env=var, scheme=scheme_name) if var else None


def slot_names(schemes: Mapping[str, SecurityScheme], location: str) -> tuple[str, ...]:
    """The names apiKey schemes fill in ``location``, sorted."""
    return tuple(sorted({name for loc, name in credential_slots(schemes) if loc == location}))


def slot_key(location: str, name: str) -> str:
    return name.lower() if location == "header" else name


def members_become_names(location: str, style: str, explode: bool, content_type: str | None) -> bool:
    """True when an object value's members are sent as parameters of their own."""
    return location in ("query", "cookie") and style == "form" and explode and content_type is None


def restrict_members(
    converter: SchemaConverter, schema: Schema, reserved: Iterable[str], location: str = "query"
) -> tuple[Schema, tuple[str, ...], bool]:
    """``schema`` allowing only safe member names, the member names allowed, and whether any
    other name is (the spec allows free keys).

    ``reserved`` are the names no member may take (the runtime compares them case-insensitively:
    some servers read query names that way), and no member carries a credential
    (:func:`~bridge.contract.wire_rules.credential_name`; the runtime refuses those too).
    """
    taken = sorted(set(reserved))
    if schema is True:
        schema = {}
    if not isinstance(schema, dict):
        return schema, (), False
    kind = schema.get("type")
    may_be_object = kind is None or kind == "object" or (isinstance(kind, list) and "object" in kind)
    if not may_be_object and not converter.is_object(schema, REQUEST):
        return schema, (), False  # never an object: no members (the runtime refuses any)
    lowered = {name.lower() for name in taken}
    properties = schema.get("properties")
    # Untyped or composed schemas may still be objects: free keys, minus the reserved names.
    free = (
        not isinstance(properties, dict)
        or not properties
        or schema.get("additionalProperties", False) is not False
        or "patternProperties" in schema
        or any(key in schema for key in _COMPOSED)
    )
    if free:
        if not taken or "propertyNames" in schema:
            return schema, (), True
        return {**schema, "propertyNames": {"not": {"enum": taken}}}, (), True
    assert isinstance(properties, dict)
    kept = {
        name: prop
        for name, prop in properties.items()
        if str(name).lower() not in lowered and credential_name(location, str(name)) is None
    }
    out: dict[str, Any] = {**schema, "properties": kept, "additionalProperties": False}
    required = schema.get("required")
    if isinstance(required, list):
        out["required"] = [name for name in required if name in kept]
    return out, tuple(str(name) for name in kept), False
