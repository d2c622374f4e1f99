"""``unevaluatedProperties`` whose ``patternProperties`` keys are matched by the linear engine.

jsonschema's own implementation finds the evaluated keys with ``re.search`` on every
``patternProperties`` pattern it meets: a spec pattern, in Python's backtracking ``re``, on keys
the model chose. This is the same walk (jsonschema 4.23-4.26, ``find_evaluated_property_keys_by_schema``)
with :mod:`bridge.contract.expressions.patterns` doing the matching; a pattern that cannot be run counts as matching
(it admits, as everywhere else). Following a ``$ref`` needs jsonschema's private resolver:
:mod:`bridge.tools.jsonschema_seams`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from jsonschema.exceptions import ValidationError

from bridge.contract.expressions.patterns import compiled_pattern
from bridge.tools.jsonschema_seams import follow_ref

__all__ = ["unevaluated_properties_keyword"]


def _valid(errors: Iterator[Any]) -> bool:
    return next(errors, None) is None


def _evaluated(validator: Any, instance: Mapping[str, Any], schema: Any) -> set[str]:
    """Keys of ``instance`` that some successfully applied subschema of ``schema`` evaluates."""
    if not isinstance(schema, Mapping):
        return set()
    keys: set[str] = set()
    for keyword in ("$ref", "$dynamicRef"):
        ref = schema.get(keyword)
        if isinstance(ref, str):
            child, contents = follow_ref(validator, ref)
            keys |= _evaluated(child, instance, contents)
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        keys |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        if (sub := schema.get(keyword)) is not None:
            keys |= {key for key, value in instance.items() if _valid(validator.descend(value, sub))}
    patterns = schema.get("patternProperties")
    if isinstance(patterns, Mapping):
        compiled = [compiled_pattern(p) for p in patterns if isinstance(p, str)]
        keys |= {key for key in instance if any(p.accepts(key) for p in compiled)}
    dependent = schema.get("dependentSchemas")
    if isinstance(dependent, Mapping):
        for key, sub in dependent.items():
            if key in instance:
                keys |= _evaluated(validator, instance, sub)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for sub in schema.get(keyword) or ():
            if _valid(validator.descend(instance, sub)):
                keys |= _evaluated(validator, instance, sub)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys |= _evaluated(validator, instance, schema["if"])
            if "then" in schema:
                keys |= _evaluated(validator, instance, schema["then"])
        elif "else" in schema:
            keys |= _evaluated(validator, instance, schema["else"])
    return keys


def unevaluated_properties_keyword(
    validator: Any, unevaluated: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[Any]:
    if not isinstance(instance, dict):
        return
    evaluated = _evaluated(validator, instance, schema)
    bad = [
        key
        for key in instance
        if key not in evaluated and not _valid(validator.descend(instance[key], unevaluated, path=key, schema_path=key))
    ]
    if not bad:
        return
    listed = ", ".join(repr(k) for k in sorted(bad, key=str))
    verb = "was" if len(bad) == 1 else "were"
    if unevaluated is False:
        yield ValidationError(f"Unevaluated properties are not allowed ({listed} {verb} unexpected)")
    else:
        yield ValidationError(
            f"Unevaluated properties are not valid under the given schema ({listed} {verb} unevaluated and invalid)"
        )
