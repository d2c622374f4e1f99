"""Argument and output validation against a tool's JSON Schemas.

Arguments are checked before ``run`` with ``jsonschema`` (the draft named by ``$schema``, else
2020-12). Failures are reported the way the reference tool semantics word them (Zod v4's English
locale), one line per bad field, so the model can fix its call::

    Invalid arguments for tool "search_issues":
    limit: Too big: expected number to be <=50

Validation accepts exactly what the advertised schema accepts: only a safe set of formats is
asserted (unknown formats pass), a ``pattern`` Python cannot compile is not enforced, and ``$ref``
never leaves the schema document (no remote retrieval). Validators are compiled on a tool's first
call and cached, so start-up cost does not grow with the number of tools.
"""

from __future__ import annotations

import ast
import copy
import datetime
import ipaddress
import json
import logging
import math
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import jsonschema
import referencing
import referencing.exceptions
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import extend, validator_for

from bridge.errors import InvalidArgumentsError, ToolDefinitionError, ToolError
from bridge.tools import ToolRegistry

__all__ = ["FORMAT_CHECKER", "MAX_REPORTED_ISSUES", "ArgumentValidator", "check_output"]

MAX_REPORTED_ISSUES = 100
"""Bad fields listed in one message; the rest are counted ("... and 3 more")."""

_EMPTY_REGISTRY: referencing.Registry[Any] = referencing.Registry()

logger = logging.getLogger("bridge.validation")

# --------------------------------------------------------------------------------------------
# Formats: asserted only where the check is unambiguous, cheap and stdlib-only. Everything else
# (uri, hostname, regex, duration, ...) is an annotation and passes, as in JSON Schema 2020-12.
# --------------------------------------------------------------------------------------------

FORMAT_CHECKER = jsonschema.FormatChecker(formats=())
"""The format checker used for arguments: date, date-time, time, email, ipv4, ipv6, uuid."""

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2})(?::?(\d{2}))?)?", re.ASCII)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def _is_date(value: str) -> bool:
    m = _DATE.fullmatch(value)
    if m is None:
        return False
    try:
        datetime.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return False
    return True


def _is_time(value: str, *, zone_required: bool) -> bool:
    m = _TIME.fullmatch(value)
    if m is None:
        return False
    if zone_required and not value.endswith(("Z", "z")) and m[4] is None:
        return False
    hour, minute, second = int(m[1]), int(m[2]), int(m[3])
    if m[4] is not None and (int(m[4]) > 23 or (m[5] is not None and int(m[5]) > 59)):
        return False
    return hour <= 23 and minute <= 59 and second <= 60  # 60: leap second


@FORMAT_CHECKER.checks("date")
def _check_date(value: object) -> bool:
    return not isinstance(value, str) or _is_date(value)


@FORMAT_CHECKER.checks("date-time")
def _check_date_time(value: object) -> bool:
    # RFC 3339, accepting "t" and " " as separator and +hhmm offsets like common clients (Ajv).
    if not isinstance(value, str):
        return True
    return len(value) > 11 and value[10] in "Tt " and _is_date(value[:10]) and _is_time(value[11:], zone_required=True)


@FORMAT_CHECKER.checks("time")
def _check_time(value: object) -> bool:
    return not isinstance(value, str) or _is_time(value, zone_required=False)


@FORMAT_CHECKER.checks("email")
@FORMAT_CHECKER.checks("idn-email")
def _check_email(value: object) -> bool:
    if not isinstance(value, str):
        return True
    local, at, domain = value.rpartition("@")
    return bool(local and at and domain) and not any(c.isspace() for c in domain)


@FORMAT_CHECKER.checks("ipv4")
def _check_ipv4(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        return False
    return True


@FORMAT_CHECKER.checks("ipv6")
def _check_ipv6(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if "%" in value:  # zone ids are not part of the format
        return False
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


@FORMAT_CHECKER.checks("uuid")
def _check_uuid(value: object) -> bool:
    return not isinstance(value, str) or _UUID.fullmatch(value) is not None


# --------------------------------------------------------------------------------------------
# Compilation
# --------------------------------------------------------------------------------------------

_PATTERNS: dict[str, re.Pattern[str] | None] = {}


def _compiled_pattern(pattern: str) -> re.Pattern[str] | None:
    try:
        return _PATTERNS[pattern]
    except KeyError:
        pass
    try:
        compiled: re.Pattern[str] | None = re.compile(pattern)
    except (re.error, OverflowError):
        compiled = None  # ECMA-262 syntax Python lacks (e.g. \p{L}): not enforced rather than rejected
    _PATTERNS[pattern] = compiled
    return compiled


def _pattern_keyword(validator: Validator, pattern: Any, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    if not isinstance(instance, str) or not isinstance(pattern, str):
        return
    compiled = _compiled_pattern(pattern)
    if compiled is not None and compiled.search(instance) is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties_keyword(
    validator: Any, patterns: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[Any]:
    if not isinstance(instance, dict) or not isinstance(patterns, Mapping):
        return
    for pattern, subschema in patterns.items():
        compiled = _compiled_pattern(pattern)
        if compiled is None:
            continue
        for key, value in instance.items():
            if compiled.search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties_keyword(
    validator: Any, additional: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[Any]:
    if not isinstance(instance, dict):
        return
    extras = _extra_keys(instance, schema)
    if isinstance(additional, Mapping):
        for key in extras:
            yield from validator.descend(instance[key], additional, path=key)
    elif additional is False and extras:
        yield ValidationError(f"Additional properties are not allowed ({', '.join(map(repr, extras))} unexpected)")


_KEYWORDS = {
    "pattern": _pattern_keyword,
    "patternProperties": _pattern_properties_keyword,
    "additionalProperties": _additional_properties_keyword,
}
_EXTENDED: dict[type[Validator], type[Validator]] = {}


def _validator_class(schema: Mapping[str, Any]) -> type[Validator]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # unknown $schema: fall back to 2020-12
        base = validator_for(schema, default=jsonschema.Draft202012Validator)
    cls = _EXTENDED.get(base)
    if cls is None:
        cls = _EXTENDED[base] = extend(base, _KEYWORDS)  # type: ignore[no-untyped-call]
    return cls


def _compile(schema: Mapping[str, Any], *, formats: bool, what: str) -> Validator:
    """Check ``schema`` against its metaschema and build a validator with no remote ``$ref``."""
    cls = _validator_class(schema)
    try:
        # No format assertion on the metaschema: an ECMA-262-only ``pattern`` is still a valid schema.
        cls.check_schema(dict(schema), format_checker=None)  # type: ignore[call-arg]
    except jsonschema.SchemaError as exc:
        raise ToolDefinitionError(f"{what} is not a valid JSON Schema: {exc.message}") from exc
    return cls(schema, registry=_EMPTY_REGISTRY, format_checker=FORMAT_CHECKER if formats else None)


# --------------------------------------------------------------------------------------------
# Defaults
# --------------------------------------------------------------------------------------------

_IMMUTABLE = (str, int, float, bool, type(None))


@dataclass(frozen=True, slots=True)
class _Defaults:
    """Property defaults of one object schema, and plans for nested object properties."""

    values: tuple[tuple[str, Any], ...]
    nested: tuple[tuple[str, _Defaults], ...]

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


def _resolve_local(root: Mapping[str, Any], schema: Any, depth: int = 0) -> Any:
    """Follow a chain of same-document ``$ref`` ("#/...") pointers; anything else is returned as is."""
    while isinstance(schema, Mapping) and isinstance(ref := schema.get("$ref"), str) and ref.startswith("#"):
        if depth > 32:
            return None
        target: Any = root
        for raw in ref[1:].split("/")[1:] if ref != "#" else []:
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(target, Mapping) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                return None
        schema, depth = target, depth + 1
    return schema


def _defaults_plan(root: Mapping[str, Any], schema: Any, seen: frozenset[int] = frozenset()) -> _Defaults | None:
    schema = _resolve_local(root, schema)
    if not isinstance(schema, Mapping) or id(schema) in seen:
        return None
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return None
    seen = seen | {id(schema)}
    values: list[tuple[str, Any]] = []
    nested: list[tuple[str, _Defaults]] = []
    for key, sub in props.items():
        sub = _resolve_local(root, sub)
        if not isinstance(sub, Mapping):
            continue
        if "default" in sub:
            values.append((key, sub["default"]))
        elif (plan := _defaults_plan(root, sub, seen)) is not None:
            nested.append((key, plan))
    if not values and not nested:
        return None
    return _Defaults(tuple(values), tuple(nested))


# --------------------------------------------------------------------------------------------
# Messages (Zod v4 English wording)
# --------------------------------------------------------------------------------------------

PathPart = str | int


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
    prop_schema = _resolve_local(root, prop_schema)
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
        node = _resolve_local(root, node)
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


def _extra_keys(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    props = schema.get("properties") or {}
    patterns = [p for p in (schema.get("patternProperties") or {}) if isinstance(p, str)]
    extras = []
    for key in instance:
        if key in props:
            continue
        if any((c := _compiled_pattern(p)) is None or c.search(key) for p in patterns):
            continue
        extras.append(key)
    return extras


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
        for name in val:
            if isinstance(name, str) and name not in inst:
                yield (*path, name), _missing_message(root, _property_schema(root, schema, path, name))
        return
    if kw in ("dependentRequired", "dependencies") and isinstance(inst, Mapping) and isinstance(val, Mapping):
        for trigger, deps in val.items():
            if trigger in inst and isinstance(deps, list):
                for name in deps:
                    if isinstance(name, str) and name not in inst:
                        yield (*path, name), _missing_message(root, _property_schema(root, schema, path, name))
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
    if kw == "maxLength":
        return f"Too big: expected string to have <={val} characters"
    if kw == "minLength":
        return f"Too small: expected string to have >={val} characters"
    if kw == "maxItems":
        return f"Too big: expected array to have <={val} items"
    if kw == "minItems":
        return f"Too small: expected array to have >={val} items"
    if kw == "maxProperties":
        return f"Too big: expected object to have <={val} properties"
    if kw == "minProperties":
        return f"Too small: expected object to have >={val} properties"
    if kw == "enum" and isinstance(val, list):
        return _enum_message(val)
    if kw == "const":
        return f"Invalid input: expected {_primitive(val)}"
    if kw == "pattern":
        return f"Invalid string: must match pattern /{val}/"
    if kw == "multipleOf":
        return f"Invalid number: must be a multiple of {_js_number(val)}"
    if kw == "additionalProperties" and isinstance(inst, Mapping):
        extras = _extra_keys(inst, schema)
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
    if kw == "format":
        return "Invalid " + _FORMAT_NOUNS.get(str(val), str(val))
    if kw == "uniqueItems":
        return "Invalid array: items must be unique"
    if kw == "contains":
        return "Invalid array: no item matches the expected schema"
    return "Invalid input"


_FORMAT_NOUNS = {
    "date-time": "ISO datetime",
    "date": "ISO date",
    "time": "ISO time",
    "email": "email address",
    "idn-email": "email address",
    "ipv4": "IPv4 address",
    "ipv6": "IPv6 address",
    "uuid": "UUID",
}


def _sort_key(issue: Issue) -> tuple[tuple[int, int, str], ...]:
    return tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in issue[0])


def _format_issues(root: Mapping[str, Any], errors: Iterable[ValidationError]) -> list[str]:
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


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Compiled:
    schema: Mapping[str, Any]
    validator: Validator
    defaults: _Defaults | None
    any_object: bool  # the schema is {"type": "object"} plus annotations: every object passes


_ANNOTATIONS = frozenset({"type", "title", "description", "$schema", "$id", "$comment", "examples"})


def _run(validator: Validator, instance: Any, what: str) -> list[ValidationError]:
    try:
        return list(validator.iter_errors(instance))
    except re.error:
        # A regex Python cannot compile in a keyword we do not override (e.g. unevaluatedProperties
        # over patternProperties): accept rather than reject what the schema may allow.
        logger.warning("%s has a pattern Python cannot compile; the value was not fully checked", what)
        return []
    except referencing.exceptions.Unresolvable as exc:
        raise ToolDefinitionError(f"{what} has a $ref that does not resolve within the schema: {exc}") from exc


class ArgumentValidator:
    """Validates tool arguments against each tool's input schema.

    A tool's validator is compiled on its first call and cached; a replaced schema (a different
    object) is recompiled. ``schemas`` is the registry, or a mapping of tool name to input schema.
    """

    def __init__(self, schemas: ToolRegistry | Mapping[str, Mapping[str, Any]]) -> None:
        self._schema_of: Callable[[str], Mapping[str, Any] | None]
        if isinstance(schemas, ToolRegistry):
            registry = schemas

            def schema_of(name: str) -> Mapping[str, Any] | None:
                tool = registry.get(name)
                return None if tool is None else tool.input_schema

            self._schema_of = schema_of
        else:
            self._schema_of = schemas.get
        self._compiled: dict[str, _Compiled] = {}

    def _get(self, tool_name: str) -> _Compiled:
        schema = self._schema_of(tool_name)
        if schema is None:
            raise KeyError(tool_name)
        compiled = self._compiled.get(tool_name)
        if compiled is None or compiled.schema is not schema:
            validator = _compile(schema, formats=True, what=f'The input schema of tool "{tool_name}"')
            any_object = schema.get("type") == "object" and schema.keys() <= _ANNOTATIONS
            compiled = _Compiled(schema, validator, _defaults_plan(schema, schema), any_object)
            self._compiled[tool_name] = compiled
        return compiled

    def validate(
        self, tool_name: str, args: Mapping[str, Any] | None, *, apply_defaults: bool = True
    ) -> dict[str, Any]:
        """Return ``args`` with schema defaults applied (the input is not modified).

        ``apply_defaults=False`` checks only: for tools whose defaults belong to someone else
        (an API's parameter default is what the API assumes when the value is absent).

        Raises:
            InvalidArgumentsError: the arguments do not match; the message lists every bad field.
            ToolDefinitionError: the tool's input schema itself is invalid or unresolvable.
            KeyError: no tool has that name.
        """
        compiled = self._get(tool_name)
        instance: dict[str, Any] = args if isinstance(args, dict) else dict(args or {})
        if compiled.any_object:
            return instance
        errors = _run(compiled.validator, instance, f'The input schema of tool "{tool_name}"')
        if errors:
            lines = _format_issues(compiled.schema, errors)
            raise InvalidArgumentsError(f'Invalid arguments for tool "{tool_name}":\n' + "\n".join(lines))
        if compiled.defaults is None or not apply_defaults:
            return instance
        return compiled.defaults.apply(instance)

    def is_compiled(self, tool_name: str) -> bool:
        """Whether the validator for ``tool_name`` has been built (for tests and diagnostics)."""
        return tool_name in self._compiled


_OUTPUT_CACHE_SIZE = 4096
_output_validators: dict[int, tuple[Mapping[str, Any], Validator]] = {}


def check_output(tool_name: str, schema: Mapping[str, Any], value: Any) -> None:
    """Check a tool's return value against its output schema.

    Formats are not asserted (the SDK client does not assert them either), so an upstream's
    slightly unusual date does not turn a good answer into an error.

    Raises:
        ToolError: the value does not match; the message names every mismatching field.
        ToolDefinitionError: the output schema itself is invalid or unresolvable.
    """
    entry = _output_validators.get(id(schema))
    if entry is None or entry[0] is not schema:
        if len(_output_validators) >= _OUTPUT_CACHE_SIZE:
            _output_validators.clear()
        validator = _compile(schema, formats=False, what=f'The output schema of tool "{tool_name}"')
        entry = _output_validators[id(schema)] = (schema, validator)
    errors = _run(entry[1], value, f'The output schema of tool "{tool_name}"')
    if errors:
        lines = _format_issues(schema, errors)
        raise ToolError(
            f'Tool "{tool_name}" returned a value that does not match its output schema: '
            + "; ".join(lines)
            + ". This is a fault of the tool or its upstream API, not of the arguments."
        )
