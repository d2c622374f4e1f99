"""A quick yes for output values that match a plain output schema, before jsonschema's full walk.

jsonschema spends most of an output check on its own machinery (a new validator object per
subschema it descends into: about 0.3 ms for one 23 KB GitHub repository against its 90-member
schema). Output schemas of generated tools use a few keywords only (``type``, ``properties``,
``items``, ``anyOf``, bounds), so :func:`quick_check` compiles such a schema into plain Python
tests that answer "valid" in a fraction of that.

The quick check only ever says yes or "not sure": a value it does not accept goes through the
full validator, which then finds the errors (or none) exactly as before. So it has to be sound,
never more: whatever it accepts, jsonschema accepts (``tests/bridge/tools/test_schema_fast.py`` compares
the two on generated schemas and values). Hence the narrow ground it covers:

- draft 2020-12 output validators only (no format is asserted on outputs, see
  :mod:`bridge.tools.schema_validators`); a schema with any keyword outside :data:`_KEYWORDS` and
  :data:`_ANNOTATIONS` (``$ref``, ``pattern``, ``oneOf``, ``not``, ``enum``, ...) gets no quick
  check at all;
- values of exactly the types ``json.loads`` makes (dict, list, str, int, float, bool, None):
  anything else (a subclass, a tuple, a Decimal) is "not sure";
- each keyword tested with the same operation jsonschema's own function uses (``len``, ``<``,
  ``in``), so NaN, huge integers and integral floats come out the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["quick_check"]

Check = Callable[[Any], bool]

_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "allOf",
        "anyOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
    }
)
# Keywords no draft 2020-12 output validator asserts anything with (``format``: no format checker
# on outputs); ``$defs`` can only matter through a ``$ref``, which has no quick check.
_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$comment",
        "$defs",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
    }
)
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "number": (int, float),  # bool is not a number to jsonschema, and type(True) is bool
    "integer": (int,),  # and a float with an integral value (below)
}
_MAX_DEPTH = 48  # deeper schemas keep the full walk only (no recursion limit to worry about)


class _Unsupported(Exception):
    pass


def quick_check(schema: Mapping[str, Any]) -> Check | None:
    """A test that returns True only for values ``schema`` accepts (False: not sure), or None
    when the schema uses anything the quick check does not cover. ``schema`` must be one a draft
    2020-12 validator without a format checker judges (the caller knows: it built that validator).
    """
    try:
        return _compile(schema, 0)
    except _Unsupported:
        return None


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def _compile(schema: Any, depth: int) -> Check:
    if schema is True:
        return _always
    if schema is False:  # rejects everything: "not sure" is the sound answer
        return _never
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        raise _Unsupported
    if not schema.keys() <= _KEYWORDS | _ANNOTATIONS:
        raise _Unsupported
    checks: list[Check] = []
    if "type" in schema:
        checks.append(_type_check(schema["type"]))
    if "properties" in schema or "additionalProperties" in schema:
        checks.append(_object_check(schema, depth))
    if "required" in schema:
        required = tuple(schema["required"])
        checks.append(lambda v: type(v) is not dict or all(name in v for name in required))
    if "items" in schema:
        item = _compile(schema["items"], depth + 1)
        checks.append(lambda v: type(v) is not list or all(item(x) for x in v))
    for key, test in _BOUNDS.items():
        if key in schema:
            checks.append(test(schema[key]))
    if "allOf" in schema:
        every = tuple(_compile(s, depth + 1) for s in schema["allOf"])
        checks.append(lambda v: all(c(v) for c in every))
    if "anyOf" in schema:
        # Sound because each branch's check is: a yes from one branch is a yes of jsonschema's.
        some = tuple(_compile(s, depth + 1) for s in schema["anyOf"])
        checks.append(lambda v: any(c(v) for c in some))
    if not checks:
        return _known
    if len(checks) == 1:
        only = checks[0]
        return lambda v: _known(v) and only(v)
    every_check = tuple(checks)
    return lambda v: _known(v) and all(c(v) for c in every_check)


_KNOWN_TYPES = frozenset({dict, list, str, int, float, bool, type(None)})


def _known(value: Any) -> bool:
    return type(value) in _KNOWN_TYPES


def _type_check(types: Any) -> Check:
    names = [types] if isinstance(types, str) else list(types)
    if any(name not in _TYPES for name in names):
        raise _Unsupported
    accepted = frozenset(t for name in names for t in _TYPES[name])
    if "integer" in names and float not in accepted:
        return lambda v: type(v) in accepted or (type(v) is float and v.is_integer())
    return lambda v: type(v) in accepted


def _object_check(schema: Mapping[str, Any], depth: int) -> Check:
    properties = schema.get("properties", {})
    members = {name: _compile(sub, depth + 1) for name, sub in properties.items()}
    additional = schema.get("additionalProperties", True)
    other: Check | None = None if additional is True else _compile(additional, depth + 1)

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return True
        for key, item in value.items():
            member = members.get(key)
            if member is None:
                # Not a declared member: additionalProperties judges it (patternProperties, which
                # would take part, has no quick check).
                if other is not None and not other(item):
                    return False
            elif not member(item):
                return False
        return True

    return check


def _number(value: Any) -> bool:
    return type(value) is int or type(value) is float


_BOUNDS: dict[str, Callable[[Any], Check]] = {
    "minLength": lambda n: lambda v: type(v) is not str or not len(v) < n,
    "maxLength": lambda n: lambda v: type(v) is not str or not len(v) > n,
    "minItems": lambda n: lambda v: type(v) is not list or not len(v) < n,
    "maxItems": lambda n: lambda v: type(v) is not list or not len(v) > n,
    "minimum": lambda n: lambda v: not _number(v) or not v < n,
    "maximum": lambda n: lambda v: not _number(v) or not v > n,
    "exclusiveMinimum": lambda n: lambda v: not _number(v) or not v <= n,
    "exclusiveMaximum": lambda n: lambda v: not _number(v) or not v >= n,
}
