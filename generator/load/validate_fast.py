"""Faster answers to two slow steps of openapi-spec-validator's semantic pass, each the library's own answer.

1. The meta-schema check of each schema (``SchemaValidator._validate_schema_meta``): jsonschema-rs
   answers "valid?" against the same meta-schema, with the library's own format checks (Python's
   ``re`` for ``format: regex``, each distinct value checked once). Only a schema it rejects goes
   through the library's pure-Python check, so every message stays the library's. It is sound
   because jsonschema-rs is at least as strict on these meta-schemas: where the engines differ
   (``$`` before a final newline in ``$anchor``; ``format: uri`` on ``xml.namespace``, which the
   library does not check) it rejects more, which only costs a fallback. Documents are JSON data,
   as the structural pass (also jsonschema-rs) already assumes. One difference is left: a schema
   nested so deep (over ~120 levels in 3.1) that the library's recursive check overflows Python's
   stack used to stop validation with a RecursionError; jsonschema-rs checks it.
2. The path walk (``SchemaAccessor.get_resolved``): the library resolves every path from its longest
   cached prefix, and each step costs an ``isinstance`` against a runtime Protocol (slow on Python
   3.11: about 1 s on GitHub's spec); here a path whose parent was resolved takes one step from it.

Both steps need the libraries' private names: :mod:`generator.load.openapi_seams` holds them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import jsonschema_rs
from jsonschema import FormatChecker
from jsonschema_path import SchemaPath
from jsonschema_path.accessors import SchemaAccessor
from jsonschema_path.paths import SPEC_SEPARATOR
from openapi_schema_validator.validators import check_openapi_schema
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

from generator.load.openapi_seams import (
    OPENAPI_SPECIFICATIONS,
    accessor_registry,
    library_schema_meta,
    registry_of,
    resolve_node,
    schema_checker,
)

_META: dict[tuple[type[Any], FormatChecker], jsonschema_rs.Validator | None] = {}


def fast_schema_meta(keyword: type[Any]) -> Callable[..., OpenAPIValidationError | None]:
    """``keyword._validate_schema_meta``, answered by jsonschema-rs when it finds the schema valid."""

    def validate_schema_meta(self: Any, schema: SchemaPath, schema_value: Any) -> OpenAPIValidationError | None:
        fast = _fast_checker(self, schema, schema_value)
        if fast is not None:
            try:
                if fast.is_valid(schema_value):
                    return None
            except (ValueError, TypeError):  # not JSON data (e.g. a non-string key): the library decides
                pass
        result: OpenAPIValidationError | None = library_schema_meta(keyword, self, schema, schema_value)
        return result

    return validate_schema_meta


def _fast_checker(keyword: Any, schema: SchemaPath, schema_value: Any) -> jsonschema_rs.Validator | None:
    """The jsonschema-rs twin of the checker the library would call, or None when there is none."""
    try:
        checker = schema_checker(keyword, schema, schema_value)
    except ValueError:  # an unknown dialect: the library reports it
        return None
    # The library's checkers are ``cls.check_schema`` or a partial of it naming the format checker.
    format_checker: Any = None
    if isinstance(checker, partial) and not checker.args and set(checker.keywords) == {"format_checker"}:
        format_checker, checker = checker.keywords["format_checker"], checker.func
    # Only the library's own check_openapi_schema is known to mean "cls.META_SCHEMA with its registry".
    if getattr(checker, "__func__", None) is not check_openapi_schema:
        return None
    cls: Any = checker.__self__
    format_checker = cls.FORMAT_CHECKER if format_checker is None else format_checker
    if not isinstance(format_checker, FormatChecker):
        return None
    key = (cls, format_checker)
    if key not in _META:
        _META[key] = _build(cls.META_SCHEMA, format_checker)
    return _META[key]


def _build(meta_schema: Any, format_checker: FormatChecker) -> jsonschema_rs.Validator | None:
    try:
        return jsonschema_rs.validator_for(
            meta_schema,
            validate_formats=True,
            formats={name: _memoized(format_checker, name) for name in format_checker.checkers},
            registry=_meta_registry(),
            offline=True,
        )
    except (ValueError, jsonschema_rs.ReferencingError):  # a meta-schema it cannot load: always the library's check
        return None


def _memoized(format_checker: FormatChecker, name: str) -> Callable[[str], bool]:
    answers: dict[str, bool] = {}

    def conforms(value: str) -> bool:
        answer = answers.get(value)
        if answer is None:
            answer = answers[value] = format_checker.conforms(value, name)
        return answer

    return conforms


_REGISTRY: list[jsonschema_rs.Registry] = []


def _meta_registry() -> jsonschema_rs.Registry:
    """The library's meta-schemas (draft 3 aside, which jsonschema-rs lacks and no OpenAPI dialect uses)."""
    if not _REGISTRY:
        resources = [(uri, OPENAPI_SPECIFICATIONS.contents(uri)) for uri in OPENAPI_SPECIFICATIONS]
        _REGISTRY.append(jsonschema_rs.Registry([(uri, value) for uri, value in resources if "draft-03" not in uri]))
    return _REGISTRY[0]


class StepAccessor(SchemaAccessor):
    """A ``SchemaAccessor`` that resolves a path in one step from its already resolved parent."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._resolved: dict[tuple[Any, ...], Any] = {}

    def contains(self, parts: Sequence[Any], key: Any) -> bool:
        # The walk asks "keyword in schema" about 400k times on GitHub's spec: answer from the memo.
        resolved = self._resolved.get(parts) if type(parts) is tuple else None
        if resolved is not None and type(resolved.contents) is dict:
            return key in resolved.contents
        return bool(super().contains(parts, key))

    def get_resolved(self, parts: Sequence[Any]) -> Any:
        key = parts if type(parts) is tuple else tuple(parts)
        resolved = self._resolved.get(key)
        if resolved is None:
            resolved = self._step(key)
            if resolved is None:
                registry = accessor_registry(self)
                resolved = super().get_resolved(parts)
                if accessor_registry(self) is not registry:
                    self._resolved.clear()  # the library dropped its caches too
            self._resolved[key] = resolved
        return resolved

    def _step(self, key: tuple[Any, ...]) -> Any:
        """What the library's resolution loop does for the last part, or None to leave it to the library."""
        parent = self._resolved.get(key[:-1]) if key else None
        if parent is None or type(parent.contents) not in (dict, list):
            return None
        try:
            node = parent.contents[key[-1]]
        except (KeyError, IndexError, TypeError):
            return None  # the library raises its own KeyError
        resolved = resolve_node(node, parent.resolver)
        # A lookup that grew the registry makes the library reset its caches: let it.
        return resolved if registry_of(resolved.resolver) is registry_of(parent.resolver) else None


def step_schema_path(document: Any, handlers: Any) -> SchemaPath:
    """The document as the ``SchemaPath`` the library builds, with the one-step accessor."""
    accessor = StepAccessor.from_schema(document, handlers=handlers)
    return SchemaPath(accessor, separator=SPEC_SEPARATOR)
