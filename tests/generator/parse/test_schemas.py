from __future__ import annotations

from typing import Any

import pytest
import yaml

from generator.parse.schemas.convert import REQUEST, RESPONSE, SchemaConverter, SchemaError
from generator.parse.schemas.keywords import unresolved_refs


def _doc(schemas: dict[str, Any]) -> dict[str, Any]:
    return {"openapi": "3.0.3", "components": {"schemas": schemas}}


def convert(schema: Any, schemas: dict[str, Any] | None = None, direction: Any = REQUEST) -> Any:
    return SchemaConverter(_doc(schemas or {})).convert(schema, direction).schema


def test_nullable_becomes_a_type_union() -> None:
    assert convert({"type": "string", "nullable": True}) == {"type": ["string", "null"]}


def test_nullable_enum_also_accepts_null() -> None:
    converted = convert({"type": "string", "enum": ["a", "b"], "nullable": True})
    assert converted == {"type": ["string", "null"], "enum": ["a", "b", None]}


def test_nullable_without_type_becomes_any_of_with_null() -> None:
    converted = convert({"allOf": [{"$ref": "#/components/schemas/A"}], "nullable": True}, {"A": {"type": "object"}})
    assert converted == {"anyOf": [{"allOf": [{"type": "object"}]}, {"type": "null"}]}


def test_nullable_next_to_a_ref_applies_to_the_target() -> None:
    converted = convert({"$ref": "#/components/schemas/A", "nullable": True}, {"A": {"type": "integer"}})
    assert converted == {"type": ["integer", "null"]}


def test_boolean_exclusive_bounds_become_numeric() -> None:
    converted = convert({"type": "number", "minimum": 1, "exclusiveMinimum": True, "maximum": 9})
    assert converted == {"type": "number", "exclusiveMinimum": 1, "maximum": 9}
    assert convert({"type": "number", "maximum": 9, "exclusiveMaximum": False}) == {"type": "number", "maximum": 9}


def test_openapi_only_and_vendor_keywords_are_dropped() -> None:
    schema = {
        "type": "object",
        "description": "A pet",
        "discriminator": {"propertyName": "kind"},
        "xml": {"name": "pet"},
        "externalDocs": {"url": "https://example.com"},
        "example": {"kind": "cat"},
        "x-internal": True,
        "properties": {"kind": {"type": "string", "enum": ["cat"], "default": "cat", "format": "slug"}},
    }
    assert convert(schema) == {
        "type": "object",
        "description": "A pet",
        "properties": {"kind": {"type": "string", "enum": ["cat"], "default": "cat", "format": "slug"}},
    }


def test_json_schema_2020_keywords_survive() -> None:
    schema = yaml.safe_load(
        """
        type: object
        properties:
          anything: true
          nothing: false
          kind: {const: card}
          maybe: {type: [string, "null"]}
          pair:
            type: array
            prefixItems: [{type: string}, {type: integer}]
            items: false
        unevaluatedProperties: false
        $defs:
          Local: {type: string, minLength: 1}
        """
    )
    assert convert(schema) == schema


def test_tuple_items_become_prefix_items() -> None:
    assert convert({"type": "array", "items": [{"type": "string"}]}) == {
        "type": "array",
        "prefixItems": [{"type": "string"}],
    }


def test_request_schemas_drop_read_only_properties_and_their_required_entries() -> None:
    schemas = {
        "Pet": {
            "type": "object",
            "required": ["id", "name"],
            "properties": {"id": {"$ref": "#/components/schemas/Id"}, "name": {"type": "string"}},
        },
        "Id": {"type": "integer", "readOnly": True},
    }
    request = convert({"$ref": "#/components/schemas/Pet"}, schemas, REQUEST)
    assert request == {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}
    response = convert({"$ref": "#/components/schemas/Pet"}, schemas, RESPONSE)
    assert set(response["properties"]) == {"id", "name"}


def test_required_next_to_all_of_loses_read_only_names_too() -> None:
    schemas = {"Base": {"type": "object", "properties": {"id": {"type": "integer", "readOnly": True}}}}
    schema = {"allOf": [{"$ref": "#/components/schemas/Base"}], "required": ["id", "x"]}
    assert convert(schema, schemas, REQUEST)["required"] == ["x"]


def test_response_schemas_drop_write_only_properties() -> None:
    schema = {
        "type": "object",
        "required": ["password", "user"],
        "properties": {"password": {"type": "string", "writeOnly": True}, "user": {"type": "string"}},
    }
    assert convert(schema, direction=RESPONSE) == {
        "type": "object",
        "required": ["user"],
        "properties": {"user": {"type": "string"}},
    }


def test_circular_schema_becomes_a_defs_reference_and_is_self_contained() -> None:
    schemas = {
        "Node": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
            },
        }
    }
    converter = SchemaConverter(_doc(schemas))
    root = converter.convert_root({"$ref": "#/components/schemas/Node"}, RESPONSE)
    assert isinstance(root.schema, dict)
    assert root.schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    full = converter.with_defs(root.schema, root.needs, RESPONSE)
    assert set(full["$defs"]) == {"Node"}
    assert unresolved_refs(full) == []
    assert unresolved_refs(root.schema) == ["#/$defs/Node"]


def test_mutually_recursive_schemas_are_all_kept_in_defs() -> None:
    schemas = {
        "A": {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}}},
        "B": {
            "type": "object",
            "properties": {"a": {"$ref": "#/components/schemas/A"}, "leaf": {"$ref": "#/components/schemas/Leaf"}},
        },
        "Leaf": {"type": "string"},
    }
    converter = SchemaConverter(_doc(schemas))
    converted = converter.convert({"type": "array", "items": {"$ref": "#/components/schemas/A"}}, REQUEST)
    assert isinstance(converted.schema, dict)
    full = converter.with_defs(converted.schema, converted.needs, REQUEST)
    assert set(full["$defs"]) == {"A", "B"}
    assert full["$defs"]["B"]["properties"]["leaf"] == {"type": "string"}  # not recursive: inlined
    assert unresolved_refs(full) == []


def test_shared_components_are_converted_once_and_shared() -> None:
    converter = SchemaConverter(_doc({"User": {"type": "object", "properties": {"login": {"type": "string"}}}}))
    first = converter.convert({"$ref": "#/components/schemas/User"}, RESPONSE).schema
    second = converter.convert({"$ref": "#/components/schemas/User"}, RESPONSE).schema
    assert first is second


def test_description_next_to_a_ref_is_kept_without_changing_the_shared_target() -> None:
    converter = SchemaConverter(_doc({"Id": {"type": "integer"}}))
    described = converter.convert({"$ref": "#/components/schemas/Id", "description": "Pet id"}, REQUEST).schema
    assert described == {"type": "integer", "description": "Pet id"}
    assert converter.convert({"$ref": "#/components/schemas/Id"}, REQUEST).schema == {"type": "integer"}


def test_dangling_ref_is_a_schema_error() -> None:
    with pytest.raises(SchemaError, match="does not resolve"):
        convert({"$ref": "#/components/schemas/Missing"})
    with pytest.raises(SchemaError, match="not a local reference"):
        convert({"$ref": "other.yaml#/Pet"})


def test_unresolved_refs_reports_dangling_refs_but_ignores_data() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/Gone"}, "b": {"enum": [{"$ref": "not a schema"}]}},
        "default": {"$ref": "data"},
    }
    assert unresolved_refs(schema) == ["#/$defs/Gone"]


def test_is_object_recognises_composed_objects() -> None:
    converter = SchemaConverter(_doc({}))
    assert converter.is_object({"type": "object"}, RESPONSE)
    assert converter.is_object({"allOf": [{"type": "object"}, {"description": "x"}]}, RESPONSE)
    assert converter.is_object({"oneOf": [{"properties": {}}, {"type": "object"}]}, RESPONSE)
    assert not converter.is_object({"anyOf": [{"type": "object"}, {"type": "string"}]}, RESPONSE)
    assert not converter.is_object({"type": ["object", "null"]}, RESPONSE)
    assert not converter.is_object(True, RESPONSE)
