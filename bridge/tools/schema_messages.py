"""Validation errors worded the way the reference tool semantics word them (Zod v4's English locale).

One line per bad field, so the model can fix its call::

    Invalid arguments for tool "search_issues":
    limit: Too big: expected number to be <=50
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal
from typing import Any

from jsonschema.exceptions import ValidationError

from bridge.contract.expressions import json_pointer
from bridge.contract.expressions.patterns import compiled_pattern
from bridge.contract.formats import FORMAT_NOUNS

__all__ = ["MAX_REPORTED_ISSUES", "extra_keys", "format_issues", "resolve_local"]

MAX_REPORTED_ISSUES = 100
"""Bad fields listed in one message; the rest are counted ("... and 3 more")."""


def resolve_local(root: Mapping[str, Any], schema: Any, depth: int = 0) -> Any:
    """Follow a chain of same-document ``$ref`` ("#/...") pointers; anything else is returned as is."""
    while isinstance(schema, Mapping) and isinstance(ref := schema.get("$ref"), str) and ref.startswith("#"):
        if depth > 32:
            return None
        try:
            target = json_pointer.resolve(root, ref)
        except json_pointer.PointerError:
            return None
        schema, depth = target, depth + 1
    return schema


PathPart = str | int

# keyword -> the parts of its message ("Too big: expected string to have <=5 characters").
_COUNT_LIMITS = {
    "maxLength": ("Too big", "string", "<=", "characters"),
    "minLength": ("Too small", "string", ">=", "characters"),
    "maxItems": ("Too big", "array", "<=", "items"),
    "minItems": ("Too small", "array", ">=", "items"),
    "maxProperties": ("Too big", "object", "<=", "properties"),
    "minProperties": ("Too small", "object", ">=", "properties"),
}


def _js_number(value: Any) -> str:
    """Format a number the way JavaScript's ``String(n)`` does (1.0 -> "1", 1e-05 -> "0.00001")."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        if 1e-7 <= abs(value) < 1e21:
            return format(Decimal(text), "f")
        mantissa, exponent = text.split("e")
        return f"{mantissa}e{'+' if int(exponent) > 0 else '-'}{abs(int(exponent))}"
    return text


def _primitive(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return _js_number(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _received(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _zod_type(json_type: Any) -> str | None:
    """The Zod name of a JSON Schema ``type``, or None for a union Zod reports as "Invalid input"."""
    if isinstance(json_type, list):
        non_null = [t for t in json_type if t != "null"]
        if len(non_null) != 1:
            return None
        json_type = non_null[0]
    if not isinstance(json_type, str):
        return None
    return "number" if json_type == "integer" else json_type


def _single_branch(schema: Any) -> tuple[int, Any] | None:
    """For ``anyOf``/``oneOf`` of one schema plus ``{"type": "null"}`` (nullable), that schema."""
    if not isinstance(schema, list):
        return None
    branches = [
        (i, s) for i, s in enumerate(schema) if not (isinstance(s, Mapping) and s.get("type") == "null" and len(s) == 1)
    ]
    return branches[0] if len(branches) == 1 else None


def _missing_message(root: Mapping[str, Any], prop_schema: Any) -> str:
    """Zod's message for a required property that is absent."""
    prop_schema = resolve_local(root, prop_schema)
    if isinstance(prop_schema, Mapping):
        for key in ("anyOf", "oneOf"):
            if (branch := _single_branch(prop_schema.get(key))) is not None:
                return _missing_message(root, branch[1])
        if isinstance(prop_schema.get("enum"), list) and prop_schema["enum"]:
            return _enum_message(prop_schema["enum"])
        if "const" in prop_schema:
            return f"Invalid input: expected {_primitive(prop_schema['const'])}"
        if "type" in prop_schema:
            expected = _zod_type(prop_schema["type"])
            if expected is None:
                return "Invalid input"
            return f"Invalid input: expected {expected}, received undefined"
        if "anyOf" in prop_schema or "oneOf" in prop_schema:
            return "Invalid input"
    return "Invalid input: expected value, received undefined"


def _property_schema(root: Mapping[str, Any], schema: Any, path: tuple[PathPart, ...], name: str) -> Any:
    """The schema of property ``name``: from the failing subschema, else found from the root by path.

    A ``required`` inside ``then``/``allOf`` has no ``properties`` of its own; the property is then
    usually declared on the object schema the instance path leads to.
    """
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if isinstance(props, Mapping) and name in props:
        return props[name]
    node: Any = root
    for part in (*path, name):
        node = resolve_local(root, node)
        if not isinstance(node, Mapping):
            return None
        if isinstance(part, int):
            items = node.get("items")
            prefix = node.get("prefixItems")
            if isinstance(prefix, list) and part < len(prefix):
                node = prefix[part]
            else:
                node = items
        else:
            sub_props = node.get("properties")
            node = sub_props.get(part) if isinstance(sub_props, Mapping) else None
    return node


def _enum_message(values: list[Any]) -> str:
    if len(values) == 1:
        return f"Invalid input: expected {_primitive(values[0])}"
    return "Invalid option: expected one of " + "|".join(_primitive(v) for v in values)


def extra_keys(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """The keys of ``instance`` that neither ``properties`` nor ``patternProperties`` of ``schema`` cover."""
    props = schema.get("properties") or {}
    patterns = [compiled_pattern(p) for p in (schema.get("patternProperties") or {}) if isinstance(p, str)]
    return [key for key in instance if key not in props and not any(p.accepts(key) for p in patterns)]


_UNEVALUATED = re.compile(r"Unevaluated properties are not allowed \((.*) (?:was|were) unexpected\)", re.DOTALL)


def _unrecognized(keys: list[str]) -> str:
    return f"Unrecognized key{'s' if len(keys) > 1 else ''}: " + ", ".join(_primitive(k) for k in keys)


Issue = tuple[tuple[PathPart, ...], str]


def _issues(root: Mapping[str, Any], err: ValidationError) -> Iterator[Issue]:
    """Zod-worded issues for one jsonschema error (a ``required`` error may name several fields)."""
    path = tuple(err.absolute_path)
    kw, val, inst, schema = err.validator, err.validator_value, err.instance, err.schema
    if "propertyNames" in err.relative_schema_path and isinstance(inst, str):
        yield path, f"Invalid key {_primitive(inst)}"
        return
    if kw == "required" and isinstance(inst, Mapping) and isinstance(val, list):
        condition = _condition(root, err)
        for name in val:
            if isinstance(name, str) and name not in inst:
                if condition is not None:
                    yield (*path, name), f"{name} is required when {condition}"
                else:
                    yield (*path, name), _missing_message(root, _property_schema(root, schema, path, name))
        return
    if kw in ("dependentRequired", "dependencies") and isinstance(inst, Mapping) and isinstance(val, Mapping):
        for trigger, deps in val.items():
            if trigger in inst and isinstance(deps, list):
                for name in deps:
                    if isinstance(name, str) and name not in inst:
                        yield (*path, name), f"{name} is required when {trigger} is given"
        return
    if kw in ("anyOf", "oneOf") and inst is not None:
        branch = _single_branch(val)
        if branch is not None:
            index = branch[0]
            sub_errors = [e for e in err.context or () if e.relative_schema_path and e.relative_schema_path[0] == index]
            if sub_errors:
                for sub in sub_errors:
                    yield from _issues(root, sub)
                return
    yield path, _message(str(kw), val, inst, schema, err)


def _condition(root: Mapping[str, Any], err: ValidationError) -> str | None:
    """``X is given`` (or ``X is "v"``) when a failing ``required`` sits in a ``then`` whose ``if``
    says when it applies; None for a plain ``required``."""
    schema_path = list(err.absolute_schema_path)
    if "then" not in schema_path:
        return None
    cut = len(schema_path) - 1 - schema_path[::-1].index("then")
    node: Any = root
    for part in schema_path[:cut]:
        node = resolve_local(root, node)
        if isinstance(node, Mapping):
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return None
    node = resolve_local(root, node)
    test = node.get("if") if isinstance(node, Mapping) else None
    if not isinstance(test, Mapping):
        return None
    given = [str(n) for n in test.get("required") or () if isinstance(n, str)]
    values = [
        f"{name} is {_primitive(sub['const'])}"
        for name, sub in (test.get("properties") or {}).items()
        if isinstance(sub, Mapping) and "const" in sub
    ]
    parts = values + [f"{name} is given" for name in given if not any(v.startswith(f"{name} is ") for v in values)]
    return " and ".join(parts) if parts else None


def _message(kw: str, val: Any, inst: Any, schema: Any, err: ValidationError) -> str:
    schema = schema if isinstance(schema, Mapping) else {}
    if kw == "type":
        expected = _zod_type(val)
        types = val if isinstance(val, list) else [val]
        if expected == "number" and "number" not in types and isinstance(inst, float):
            return "Invalid input: expected int, received number"
        if expected is None:
            return "Invalid input"
        return f"Invalid input: expected {expected}, received {_received(inst)}"
    if kw in ("maximum", "exclusiveMaximum"):
        exclusive = kw == "exclusiveMaximum" or schema.get("exclusiveMaximum") is True
        limit = schema.get("maximum") if isinstance(val, bool) else val
        return f"Too big: expected number to be {'<' if exclusive else '<='}{_js_number(limit)}"
    if kw in ("minimum", "exclusiveMinimum"):
        exclusive = kw == "exclusiveMinimum" or schema.get("exclusiveMinimum") is True
        limit = schema.get("minimum") if isinstance(val, bool) else val
        return f"Too small: expected number to be {'>' if exclusive else '>='}{_js_number(limit)}"
    if kw in _COUNT_LIMITS:
        verdict, kind, relation, unit = _COUNT_LIMITS[kw]
        return f"{verdict}: expected {kind} to have {relation}{val} {unit}"
    if kw == "enum" and isinstance(val, list):
        return _enum_message(val)
    if kw == "const":
        return f"Invalid input: expected {_primitive(val)}"
    if kw == "pattern":
        return f"Invalid string: must match pattern /{val}/"
    if kw == "multipleOf":
        return f"Invalid number: must be a multiple of {_js_number(val)}"
    if kw == "additionalProperties" and isinstance(inst, Mapping):
        extras = extra_keys(inst, schema)
        if extras:
            return _unrecognized(extras)
    if kw == "unevaluatedProperties" and (m := _UNEVALUATED.fullmatch(err.message)):
        try:
            keys = ast.literal_eval(f"({m[1]},)")
        except (ValueError, SyntaxError):
            keys = None
        if isinstance(keys, tuple) and keys:
            return _unrecognized([str(k) for k in keys])
        return "Unrecognized keys"
    if kw == "contentEncoding":
        return f"Invalid {val}-encoded string"
    if kw == "format":
        return "Invalid " + FORMAT_NOUNS.get(str(val), str(val))
    if kw == "uniqueItems":
        return "Invalid array: items must be unique"
    if kw == "contains":
        return "Invalid array: no item matches the expected schema"
    return "Invalid input"


def _sort_key(issue: Issue) -> tuple[tuple[int, int, str], ...]:
    return tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in issue[0])


def format_issues(root: Mapping[str, Any], errors: Iterable[ValidationError]) -> list[str]:
    """Render jsonschema errors as sorted, de-duplicated ``path: message`` lines (Zod v4 wording)."""
    seen: set[Issue] = set()
    issues: list[Issue] = []
    for err in errors:
        for issue in _issues(root, err):
            if issue not in seen:
                seen.add(issue)
                issues.append(issue)
    issues.sort(key=_sort_key)
    lines = [f"{'.'.join(map(str, p))}: {msg}" if p else msg for p, msg in issues[:MAX_REPORTED_ISSUES]]
    if len(issues) > MAX_REPORTED_ISSUES:
        lines.append(f"... and {len(issues) - MAX_REPORTED_ISSUES} more")
    return lines
