"""openapi-schema-validator's and jsonschema-path's private names, as generator.load.openapi_seams uses them.

The fast path's answers staying the library's is pinned by tests/generator/load/test_validate_fast.py.
"""

from __future__ import annotations

import inspect

from jsonschema_path import SchemaPath
from jsonschema_path.nodes import SchemaNode
from openapi_spec_validator.validation.keywords import SchemaValidator

from generator.load import openapi_seams


def test_the_meta_schema_registry_holds_the_openapi_dialects() -> None:
    uris = list(openapi_seams.OPENAPI_SPECIFICATIONS)
    assert any("oas/3.1/dialect" in uri for uri in uris) and any("draft/2020-12" in uri for uri in uris)


def test_the_schema_validator_methods_exist_with_the_signatures_used() -> None:
    meta = getattr(SchemaValidator, openapi_seams.SCHEMA_META)
    assert list(inspect.signature(meta).parameters) == ["self", "schema", "schema_value"]
    assert list(inspect.signature(SchemaValidator._get_schema_checker).parameters) == ["self", "schema", "schema_value"]
    assert list(inspect.signature(SchemaNode._resolve_node).parameters)[:2] == ["node", "resolver"]


def test_an_accessors_registry_and_a_resolved_nodes_registry_are_reachable() -> None:
    path = SchemaPath.from_dict({"a": {"$ref": "#/b"}, "b": {"type": "string"}})
    registry = openapi_seams.accessor_registry(path.accessor)
    assert registry is not None
    with (path / "a").resolve() as resolved:
        assert openapi_seams.registry_of(resolved.resolver) is not None
