"""Every use of openapi-schema-validator's and jsonschema-path's private names (the fast spec validation).

Checked on openapi-spec-validator 0.8.5, openapi-schema-validator 0.8.1 and jsonschema-path 0.4.6
(the versions ``openapi-spec-validator==0.8.5`` resolves to). ``tests/generator/load/test_openapi_seams.py``
fails loudly when a release changes one: each name exists with the signature used here, and the
fast path's answers stay the library's (the equivalence tests of :mod:`generator.load.validate_fast`).

1. ``openapi_schema_validator._specifications.REGISTRY``: the library's meta-schemas by URI, which
   jsonschema-rs needs to check a schema against the same meta-schema. No public export.
2. ``SchemaValidator._validate_schema_meta`` (overridden in a subclass) and its
   ``_get_schema_checker``: the meta-schema check of each schema, the slow step that
   :func:`generator.load.validate_fast.fast_schema_meta` answers first; the checker tells which
   meta-schema and format checker the library would use.
3. ``SchemaNode._resolve_node`` and ``resolver._registry`` (on jsonschema-path's accessor,
   ``_path_resolver``): one resolution step from an already resolved parent, and the registry whose
   growth tells that the library dropped its caches.

No upstream issues found. Drafts: for python-openapi/openapi-schema-validator, *"Export the
meta-schema registry (``REGISTRY``) publicly"*; for python-openapi/openapi-spec-validator,
*"Make the per-schema meta check pluggable (or faster): a public hook on ``SchemaValidator``"*;
for p1c2u/jsonschema-path, *"Resolve a child path from a resolved parent in one step (public
``SchemaNode.resolve`` and a way to tell a registry reset)"*.
"""

from __future__ import annotations

from typing import Any

from jsonschema_path.nodes import SchemaNode
from openapi_schema_validator._specifications import REGISTRY

__all__ = [
    "OPENAPI_SPECIFICATIONS",
    "SCHEMA_META",
    "accessor_registry",
    "library_schema_meta",
    "registry_of",
    "resolve_node",
    "schema_checker",
]

OPENAPI_SPECIFICATIONS = REGISTRY
"""openapi-schema-validator's meta-schemas (a ``referencing`` registry)."""

SCHEMA_META = "_validate_schema_meta"
"""The name of ``SchemaValidator``'s meta-schema check, which the located keyword overrides."""


def library_schema_meta(keyword: type[Any], validator: Any, schema: Any, schema_value: Any) -> Any:
    """The library's own meta-schema check of ``schema_value`` (an error, or None)."""
    return keyword._validate_schema_meta(validator, schema, schema_value)


def schema_checker(validator: Any, schema: Any, schema_value: Any) -> Any:
    """The checker the library would run on ``schema_value``; ValueError for an unknown dialect."""
    return validator._get_schema_checker(schema, schema_value)


def resolve_node(node: Any, resolver: Any) -> Any:
    """``node`` resolved against ``resolver``: the library's step for one part of a path."""
    return SchemaNode._resolve_node(node, resolver)


def registry_of(resolver: Any) -> Any:
    """The ``referencing`` registry behind a resolved node's resolver."""
    return resolver._registry


def accessor_registry(accessor: Any) -> Any:
    """The registry behind a jsonschema-path accessor (it grows when a lookup loads a resource)."""
    return accessor._path_resolver.resolver._registry
