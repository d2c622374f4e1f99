"""How a tool's JSON Schema becomes a validator that no value can make slow, and how it is run.

The draft is the one ``$schema`` names, else 2020-12. jsonschema's ``pattern``,
``patternProperties`` and ``additionalProperties`` are replaced by linear-time ones
(:mod:`bridge.contract.expressions.patterns`), and 2020-12's ``unevaluatedProperties`` by
:mod:`bridge.tools.unevaluated`'s;
a pattern that cannot be run is not enforced rather than rejecting what the schema may allow.
Arguments also assert ``contentEncoding: base64`` (a chunked decoder, :mod:`bridge.contract.formats`) and
the safe formats; outputs assert no format. ``$ref`` never leaves the schema document.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema
import referencing
import referencing.exceptions
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import extend, validator_for

from bridge.contract.expressions.patterns import compiled_pattern
from bridge.contract.formats import FORMAT_CHECKER, is_base64_file
from bridge.tools.errors import ToolDefinitionError
from bridge.tools.schema_messages import extra_keys
from bridge.tools.unevaluated import unevaluated_properties_keyword

__all__ = ["compile_validator", "is_draft_2020_12", "run_validator"]

_EMPTY_REGISTRY: referencing.Registry[Any] = referencing.Registry()

# Validation's logger, shared with bridge.contract.expressions.patterns: one name to follow for "not fully checked".
logger = logging.getLogger("bridge.validation")


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


def compile_validator(schema: Mapping[str, Any], *, arguments: bool, what: str) -> Validator:
    """Check ``schema`` against its metaschema and build a validator with no remote ``$ref``."""
    cls = _validator_class(schema, arguments=arguments)
    try:
        # No format assertion on the metaschema: an ECMA-262-only ``pattern`` is still a valid schema.
        cls.check_schema(dict(schema), format_checker=None)  # type: ignore[call-arg]
    except jsonschema.SchemaError as exc:
        raise ToolDefinitionError(f"{what} is not a valid JSON Schema: {exc.message}") from exc
    return cls(schema, registry=_EMPTY_REGISTRY, format_checker=FORMAT_CHECKER if arguments else None)


def is_draft_2020_12(validator: Validator) -> bool:
    """``validator`` judges by draft 2020-12 (its own ``$schema``, or none, or an unknown one)."""
    return isinstance(validator, jsonschema.Draft202012Validator) or any(
        base is jsonschema.Draft202012Validator and cls is type(validator) for (base, _), cls in _EXTENDED.items()
    )


def run_validator(validator: Validator, instance: Any, what: str) -> list[ValidationError]:
    try:
        return list(validator.iter_errors(instance))
    except re.error:
        # Draft 2019-09's unevaluatedProperties still matches patternProperties with Python's re:
        # a pattern Python cannot compile there is accepted rather than rejected.
        logger.warning("%s has a pattern Python cannot compile; the value was not fully checked", what)
        return []
    except referencing.exceptions.Unresolvable as exc:
        raise ToolDefinitionError(f"{what} has a $ref that does not resolve within the schema: {exc}") from exc
