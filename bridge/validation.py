"""Argument and output validation against a tool's JSON Schemas.

Arguments are checked before ``run`` with ``jsonschema`` (the draft named by ``$schema``, else
2020-12) and failures are worded like Zod v4 (:mod:`bridge.schema_messages`), one line per bad
field. Outputs go through the same validators: hand-written tools in :func:`check_output`,
generated HTTP tools through :func:`output_issues` (``bridge.results.OutputCheck``).

Validation accepts exactly what the advertised schema accepts, and no value can make it slow:

- ``pattern`` and ``patternProperties`` (also as ``unevaluatedProperties`` sees them,
  :mod:`bridge.unevaluated`) run in linear time (:mod:`bridge.patterns`); a pattern that cannot
  be run is not enforced rather than rejecting what the schema may allow;
- ``contentEncoding: base64`` arguments are checked by a chunked decoder (:mod:`bridge.formats`);
- only a safe set of formats is asserted on arguments, none on outputs;
- ``$ref`` never leaves the schema document (no remote retrieval);
- arguments over :data:`DEFAULT_MAX_ARGUMENT_BYTES` (``--max-argument-bytes``) are refused
  before any schema work, naming the biggest argument and the limit.

Validators are compiled on a schema's first use and kept in one bounded cache shared by every
tool's input and output checks, so start-up cost does not grow with the number of tools.
"""

from __future__ import annotations

import copy
import logging
import re
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema
import referencing
import referencing.exceptions
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import extend, validator_for

from bridge.errors import InvalidArgumentsError, ToolDefinitionError, ToolError
from bridge.formats import FORMAT_CHECKER, is_base64_file
from bridge.patterns import compiled_pattern
from bridge.schema_messages import MAX_REPORTED_ISSUES, extra_keys, format_issues, resolve_local
from bridge.tools import ToolRegistry
from bridge.unevaluated import unevaluated_properties_keyword

__all__ = [
    "DEFAULT_MAX_ARGUMENT_BYTES",
    "FORMAT_CHECKER",
    "MAX_CACHED_VALIDATORS",
    "MAX_REPORTED_ISSUES",
    "ArgumentValidator",
    "ArgumentsTooLargeError",
    "argument_bytes",
    "check_output",
    "output_issues",
]

DEFAULT_MAX_ARGUMENT_BYTES = 16 * 1024 * 1024
"""All arguments of one call together, as UTF-8 JSON text (``--max-argument-bytes``; 0: no cap)."""

MAX_CACHED_VALIDATORS = 4096
"""Compiled input and output validators kept; the least recently used goes first."""

_EMPTY_REGISTRY: referencing.Registry[Any] = referencing.Registry()

logger = logging.getLogger("bridge.validation")

# --------------------------------------------------------------------------------------------
# Keywords whose jsonschema implementation would run a spec's pattern in Python's re, or that we
# assert (contentEncoding, arguments only)
# --------------------------------------------------------------------------------------------


def _pattern_keyword(validator: Validator, pattern: Any, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    if isinstance(instance, str) and isinstance(pattern, str) and compiled_pattern(pattern).rejects(instance):
        yield ValidationError(f"{instance[:100]!r} does not match {pattern!r}")


def _pattern_properties_keyword(
    validator: Any, patterns: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[Any]:
    if not isinstance(instance, dict) or not isinstance(patterns, Mapping):
        return
    for pattern, subschema in patterns.items():
        if not isinstance(pattern, str):
            continue
        compiled = compiled_pattern(pattern)
        for key, value in instance.items():
            if compiled.search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties_keyword(
    validator: Any, additional: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[Any]:
    if not isinstance(instance, dict):
        return
    extras = extra_keys(instance, schema)
    if isinstance(additional, Mapping):
        for key in extras:
            yield from validator.descend(instance[key], additional, path=key)
    elif additional is False and extras:
        yield ValidationError(f"Additional properties are not allowed ({', '.join(map(repr, extras))} unexpected)")


def _content_encoding_keyword(validator: Any, encoding: Any, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    # An annotation in JSON Schema; asserted on arguments because the runtime decodes them.
    if encoding == "base64" and isinstance(instance, str) and not is_base64_file(instance):
        yield ValidationError("is not base64 or a base64 data: URI")


_OUTPUT_KEYWORDS = {
    "pattern": _pattern_keyword,
    "patternProperties": _pattern_properties_keyword,
    "additionalProperties": _additional_properties_keyword,
}
_INPUT_KEYWORDS = {**_OUTPUT_KEYWORDS, "contentEncoding": _content_encoding_keyword}
_EXTENDED: dict[tuple[type[Validator], bool], type[Validator]] = {}


def _validator_class(schema: Mapping[str, Any], *, arguments: bool) -> type[Validator]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # unknown $schema: fall back to 2020-12
        base = validator_for(schema, default=jsonschema.Draft202012Validator)
    cls = _EXTENDED.get((base, arguments))
    if cls is None:
        keywords = dict(_INPUT_KEYWORDS if arguments else _OUTPUT_KEYWORDS)
        if base is jsonschema.Draft202012Validator:  # 2019-09's keeps its own ($recursiveRef) walk
            keywords["unevaluatedProperties"] = unevaluated_properties_keyword
        cls = _EXTENDED[base, arguments] = extend(base, keywords)  # type: ignore[no-untyped-call]
    return cls


def _compile(schema: Mapping[str, Any], *, arguments: bool, what: str) -> Validator:
    """Check ``schema`` against its metaschema and build a validator with no remote ``$ref``."""
    cls = _validator_class(schema, arguments=arguments)
    try:
        # No format assertion on the metaschema: an ECMA-262-only ``pattern`` is still a valid schema.
        cls.check_schema(dict(schema), format_checker=None)  # type: ignore[call-arg]
    except jsonschema.SchemaError as exc:
        raise ToolDefinitionError(f"{what} is not a valid JSON Schema: {exc.message}") from exc
    return cls(schema, registry=_EMPTY_REGISTRY, format_checker=FORMAT_CHECKER if arguments else None)


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


def _defaults_plan(root: Mapping[str, Any], schema: Any, seen: frozenset[int] = frozenset()) -> _Defaults | None:
    schema = resolve_local(root, schema)
    if not isinstance(schema, Mapping) or id(schema) in seen:
        return None
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return None
    seen = seen | {id(schema)}
    values: list[tuple[str, Any]] = []
    nested: list[tuple[str, _Defaults]] = []
    for key, sub in props.items():
        sub = resolve_local(root, sub)
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
# The shared cache
# --------------------------------------------------------------------------------------------

_ANNOTATIONS = frozenset({"type", "title", "description", "$schema", "$id", "$comment", "examples"})


@dataclass(frozen=True, slots=True)
class _Compiled:
    schema: Mapping[str, Any]
    validator: Validator
    defaults: _Defaults | None
    any_object: bool  # the schema is {"type": "object"} plus annotations: every object passes


class _ValidatorCache:
    """Compiled validators by schema object, for arguments and outputs alike, bounded in size.

    Keyed by identity (schemas are big, hashing them would cost more than validating); an entry
    holds its schema, so the id cannot be reused by another object while the entry lives.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[int, bool], _Compiled] = OrderedDict()

    def get(self, schema: Mapping[str, Any], *, arguments: bool, what: str) -> _Compiled:
        key = (id(schema), arguments)
        hit = self._entries.get(key)
        if hit is not None and hit.schema is schema:
            self._entries.move_to_end(key)
            return hit
        validator = _compile(schema, arguments=arguments, what=what)
        any_object = schema.get("type") == "object" and schema.keys() <= _ANNOTATIONS
        compiled = _Compiled(schema, validator, _defaults_plan(schema, schema) if arguments else None, any_object)
        self._entries[key] = compiled
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return compiled

    def holds(self, schema: Mapping[str, Any], *, arguments: bool) -> bool:
        hit = self._entries.get((id(schema), arguments))
        return hit is not None and hit.schema is schema

    def __len__(self) -> int:
        return len(self._entries)


VALIDATORS = _ValidatorCache(MAX_CACHED_VALIDATORS)
"""The one cache every input and output check goes through."""


def _run(validator: Validator, instance: Any, what: str) -> list[ValidationError]:
    try:
        return list(validator.iter_errors(instance))
    except re.error:
        # Draft 2019-09's unevaluatedProperties still matches patternProperties with Python's re:
        # a pattern Python cannot compile there is accepted rather than rejected.
        logger.warning("%s has a pattern Python cannot compile; the value was not fully checked", what)
        return []
    except referencing.exceptions.Unresolvable as exc:
        raise ToolDefinitionError(f"{what} has a $ref that does not resolve within the schema: {exc}") from exc


# --------------------------------------------------------------------------------------------
# Argument sizes
# --------------------------------------------------------------------------------------------


class ArgumentsTooLargeError(InvalidArgumentsError):
    """The arguments of a call are over the size cap; nothing was validated or sent."""


def _text_bytes(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def argument_bytes(value: Any) -> int:
    """About the UTF-8 JSON size of ``value``: exact for strings and keys, 8 a number, 2 a container."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += _text_bytes(item) + 2
        elif isinstance(item, Mapping):
            total += 2
            for key, child in item.items():
                total += _text_bytes(str(key)) + 3
                stack.append(child)
        elif isinstance(item, list | tuple):
            total += 2 + len(item)
            stack.extend(item)
        else:
            total += 8
    return total


def _check_size(tool_name: str, args: Mapping[str, Any], limit: int) -> None:
    sizes = {str(key): argument_bytes(value) for key, value in args.items()}
    total = sum(sizes.values())
    if total <= limit:
        return
    biggest = max(sizes, key=sizes.__getitem__)
    raise ArgumentsTooLargeError(
        f'Arguments of tool "{tool_name}" are too large: "{biggest[:100]}" is {sizes[biggest]} bytes and all '
        f"arguments together {total} bytes; the limit is {limit} bytes. Send less data in one call."
    )


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


class ArgumentValidator:
    """Validates tool arguments against each tool's input schema.

    A tool's validator is compiled on its first call and kept in :data:`VALIDATORS`; a replaced
    schema (a different object) is recompiled. ``schemas`` is the registry, or a mapping of tool
    name to input schema. ``max_argument_bytes`` caps one call's arguments (0 or None: no cap).
    """

    def __init__(
        self,
        schemas: ToolRegistry | Mapping[str, Mapping[str, Any]],
        *,
        max_argument_bytes: int | None = DEFAULT_MAX_ARGUMENT_BYTES,
    ) -> None:
        self._schema_of: Callable[[str], Mapping[str, Any] | None]
        if isinstance(schemas, ToolRegistry):
            registry = schemas

            def schema_of(name: str) -> Mapping[str, Any] | None:
                tool = registry.get(name)
                return None if tool is None else tool.input_schema

            self._schema_of = schema_of
        else:
            self._schema_of = schemas.get
        self.max_argument_bytes = max_argument_bytes or 0

    def _get(self, tool_name: str) -> _Compiled:
        schema = self._schema_of(tool_name)
        if schema is None:
            raise KeyError(tool_name)
        return VALIDATORS.get(schema, arguments=True, what=f'The input schema of tool "{tool_name}"')

    def validate(
        self, tool_name: str, args: Mapping[str, Any] | None, *, apply_defaults: bool = True
    ) -> dict[str, Any]:
        """Return ``args`` with schema defaults applied (the input is not modified).

        ``apply_defaults=False`` checks only: for tools whose defaults belong to someone else
        (an API's parameter default is what the API assumes when the value is absent).

        Raises:
            ArgumentsTooLargeError: the arguments are over ``max_argument_bytes``.
            InvalidArgumentsError: the arguments do not match; the message lists every bad field.
            ToolDefinitionError: the tool's input schema itself is invalid or unresolvable.
            KeyError: no tool has that name.
        """
        compiled = self._get(tool_name)
        instance: dict[str, Any] = args if isinstance(args, dict) else dict(args or {})
        if self.max_argument_bytes:
            _check_size(tool_name, instance, self.max_argument_bytes)
        if compiled.any_object:
            return instance
        errors = _run(compiled.validator, instance, f'The input schema of tool "{tool_name}"')
        if errors:
            lines = format_issues(compiled.schema, errors)
            raise InvalidArgumentsError(f'Invalid arguments for tool "{tool_name}":\n' + "\n".join(lines))
        if compiled.defaults is None or not apply_defaults:
            return instance
        return compiled.defaults.apply(instance)

    def is_compiled(self, tool_name: str) -> bool:
        """Whether the validator for ``tool_name`` has been built (for tests and diagnostics)."""
        schema = self._schema_of(tool_name)
        return schema is not None and VALIDATORS.holds(schema, arguments=True)


def output_issues(tool_name: str, schema: Mapping[str, Any], value: Any) -> list[str]:
    """The ``path: message`` lines of every mismatch of ``value`` with a tool's output schema.

    Formats are not asserted (the SDK client does not assert them either), so an upstream's
    slightly unusual date does not turn a good answer into an error.

    Raises:
        ToolDefinitionError: the output schema itself is invalid or unresolvable.
    """
    what = f'The output schema of tool "{tool_name}"'
    compiled = VALIDATORS.get(schema, arguments=False, what=what)
    errors = _run(compiled.validator, value, what)
    return format_issues(schema, errors) if errors else []


def check_output(tool_name: str, schema: Mapping[str, Any], value: Any) -> None:
    """Check a tool's return value against its output schema (see :func:`output_issues`).

    Raises:
        ToolError: the value does not match; the message names every mismatching field.
        ToolDefinitionError: the output schema itself is invalid or unresolvable.
    """
    lines = output_issues(tool_name, schema, value)
    if lines:
        raise ToolError(
            f'Tool "{tool_name}" returned a value that does not match its output schema: '
            + "; ".join(lines)
            + ". This is a fault of the tool or its upstream API, not of the arguments."
        )
