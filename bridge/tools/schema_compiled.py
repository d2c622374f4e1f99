"""A compiled quick yes for arguments and outputs: jsonschema-rs, built only where it judges as jsonschema does.

jsonschema's walk costs 6 to 30 µs for a tool's two or three arguments (a validator object per
subschema it descends into) and about 15 µs for a 23 KB GitHub answer even through
:mod:`bridge.tools.schema_fast`; the same schema compiled by ``jsonschema_rs`` (already a
dependency: it runs the spec's patterns, :mod:`bridge.contract.expressions.patterns`) answers in a
fraction of a microsecond for the arguments and about 2 µs for that answer.

Like :mod:`bridge.tools.schema_fast`, it only ever says "valid" or "not sure": a value it does not
accept goes through the full jsonschema validator, which finds the errors (every bad field named,
as before) or none. So it must be sound: whatever it accepts, the bridge's validator
(:mod:`bridge.tools.schema_validators`) accepts. Hence it is built only where the two judge alike,
and a schema it cannot be built for keeps the full walk alone:

- the bridge's validator judges by draft 2020-12 (the default when ``$schema`` names none);
- patterns run on the Rust ``regex`` crate's linear engine, the one :func:`compiled_pattern`
  picks for a pattern that compiles as written; a pattern that needs anything else (a respelling,
  the budgeted backtracking engine) fails the build, and the schema gets no quick yes;
- arguments assert the bridge's own format functions (``FORMAT_CHECKER``'s, handed over) and its
  base64 decoder for ``contentEncoding`` (a custom keyword); a format jsonschema-rs knows and the
  bridge does not assert (``uri``) only makes it stricter. Outputs assert no format, as before;
- no ``$ref`` leaves the document (a retriever that refuses: the build fails);
- keywords where the two could differ are left to jsonschema: ``multipleOf`` (float division),
  the ``unevaluated*`` keywords, dynamic and recursive references, ``$id`` and ``$anchor``; so are
  numbers in the schema from 2**53 on, where a float and an int compare differently;
- values: arguments are first checked to be exactly the types the JSON parser makes (a tuple is
  an array to jsonschema-rs, not to jsonschema); outputs only when the caller vouches for that
  (a parsed and trimmed upstream answer). Anything jsonschema-rs cannot read (a lone surrogate,
  a NaN) is "not sure".

``tests/bridge/tools/test_schema_compiled.py`` compares the quick yes with the full validator on
generated schemas and values.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any

from bridge.contract.formats import FORMAT_CHECKER, is_base64_file

__all__ = ["compiled_check"]

Check = Callable[[Any], bool]

# Keywords where jsonschema-rs could accept what jsonschema rejects (or resolves differently).
_LEFT_OUT = frozenset(
    {
        "multipleOf",
        "unevaluatedProperties",
        "unevaluatedItems",
        "$dynamicRef",
        "$dynamicAnchor",
        "$recursiveRef",
        "$recursiveAnchor",
        "$id",
        "$anchor",
    }
)
_EXACT = 2**53  # integers a float holds exactly
_MAX_DEPTH = 64  # deeper arguments or schemas: the full walk (which handles any depth) decides


class _Unsupported(Exception):
    """The schema holds something the quick yes does not judge as jsonschema does."""


def compiled_check(schema: Mapping[str, Any], *, arguments: bool) -> Check | None:
    """The quick yes for ``schema`` (call only for a 2020-12 bridge validator), or None when it
    cannot be built as the module docstring says."""
    try:
        _inspect(schema, 0)
    except (_Unsupported, RecursionError):
        return None
    engine = _engine()
    options: dict[str, Any] = {
        "retriever": _refuse,
        "pattern_options": engine.RegexOptions(),
        "validate_formats": arguments,
    }
    if arguments:
        options["formats"] = _formats()
        options["keywords"] = {"contentEncoding": _ContentEncoding}
    try:
        validator = engine.Draft202012Validator(dict(schema), **options)
    except Exception:  # any refusal of the build (a pattern, a $ref, the schema) means "no quick yes"
        return None
    is_valid = validator.is_valid

    def check(value: Any) -> bool:
        if arguments and not _json_data(value, 0):
            return False
        try:
            return bool(is_valid(value))
        except Exception:  # a value it cannot read (a lone surrogate): not sure
            return False

    return check


@functools.cache
def _engine() -> Any:
    # Imported on first use: a few MB of RSS a server whose tools are never called does not pay.
    import jsonschema_rs

    return jsonschema_rs


def _refuse(uri: str) -> Any:
    raise ValueError(f"$ref {uri!r} leaves the schema document")


@functools.cache
def _formats() -> dict[str, Callable[[Any], bool]]:
    """The bridge's argument formats, as jsonschema-rs takes them (the same functions)."""
    return {name: functools.partial(_format, func) for name, (func, _) in FORMAT_CHECKER.checkers.items()}


def _format(func: Callable[[Any], Any], value: Any) -> bool:
    # jsonschema's FormatChecker: a false result or a raised exception both make the value invalid.
    try:
        return bool(func(value))
    except Exception:
        return False


class _ContentEncoding:
    """``contentEncoding: base64`` asserted on arguments with the bridge's decoder (schema_validators's keyword)."""

    def __init__(self, parent_schema: Mapping[str, Any], value: Any, schema_path: list[str | int]) -> None:
        self.base64 = value == "base64"

    def validate(self, instance: Any) -> None:
        if self.base64 and isinstance(instance, str) and not is_base64_file(instance):
            raise ValueError("is not base64 or a base64 data: URI")


def _inspect(node: Any, depth: int) -> None:
    """Raise :class:`_Unsupported` where the schema holds a left-out keyword or an inexact number.

    Every key of every mapping is looked at, property names included: a property named
    ``multipleOf`` costs the quick yes, never soundness.
    """
    if depth > _MAX_DEPTH:
        raise _Unsupported
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in _LEFT_OUT:
                raise _Unsupported
            _inspect(value, depth + 1)
    elif isinstance(node, list | tuple):
        for value in node:
            _inspect(value, depth + 1)
    elif isinstance(node, int | float) and not isinstance(node, bool) and not -_EXACT < node < _EXACT:
        # Below 2**53 a bound converts to a float exactly, and any integer value jsonschema-rs
        # rounds to a float lands past it: each comparison comes out as Python's does.
        raise _Unsupported


def _json_data(value: Any, depth: int) -> bool:
    """``value`` is exactly what the JSON parser makes (and every float finite)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if depth > _MAX_DEPTH:
        return False
    if kind is dict:
        return all(type(k) is str and _json_data(v, depth + 1) for k, v in value.items())
    if kind is list:
        return all(_json_data(v, depth + 1) for v in value)
    return False
