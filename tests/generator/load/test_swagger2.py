"""Swagger 2.0 -> OpenAPI 3.0.3 conversion."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from generator.issues import Issue, Level
from generator.load.reading import parse_document
from generator.load.swagger2 import convert
from generator.load.validate import find_problems

PETSTORE = Path(__file__).parent / "data" / "petstore2.yaml"


def petstore() -> dict[str, Any]:
    document = parse_document(PETSTORE.read_bytes())
    assert isinstance(document, dict)
    return document


def converted_petstore() -> dict[str, Any]:
    return convert(petstore(), source="petstore2.yaml")[0]


def minimal(**fields: Any) -> dict[str, Any]:
    return {"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {}, **fields}


def operation(document: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    found: dict[str, Any] = document["paths"][path][method]
    return found


def test_converted_petstore_is_valid_openapi_3_0() -> None:
    converted = converted_petstore()

    assert converted["openapi"] == "3.0.3"
    assert find_problems(converted) == []


def test_input_document_is_not_modified() -> None:
    original = petstore()
    before = copy.deepcopy(original)

    convert(original)

    assert original == before


def test_servers_come_from_host_base_path_and_schemes() -> None:
    assert converted_petstore()["servers"] == [
        {"url": "https://petstore.example.com/v2"},
        {"url": "http://petstore.example.com/v2"},
    ]


def test_server_defaults_to_https_without_schemes_and_is_relative_without_host() -> None:
    with_host, _ = convert(minimal(host="api.example.com", basePath="/v1"))
    without_host, _ = convert(minimal(basePath="/v1"))
    bare, _ = convert(minimal())

    assert with_host["servers"] == [{"url": "https://api.example.com/v1"}]
    assert without_host["servers"] == [{"url": "/v1"}]
    assert bare["servers"] == [{"url": "/"}]


def test_non_http_schemes_are_dropped_with_a_warning() -> None:
    converted, issues = convert(minimal(host="h", schemes=["wss", "https"]), source="s.yaml")

    assert converted["servers"] == [{"url": "https://h"}]
    assert issues == [
        Issue(Level.WARNING, "s.yaml: /schemes", "only http and https servers are kept; other schemes are dropped")
    ]


def test_every_swagger_ref_is_rewritten_to_components() -> None:
    text = json.dumps(converted_petstore())

    assert '"#/definitions/' not in text
    assert '"#/parameters/' not in text
    assert '"#/responses/' not in text
    assert operation(converted_petstore(), "/pets/{petId}", "get")["responses"]["404"] == {
        "$ref": "#/components/responses/NotFound"
    }


def test_definitions_become_component_schemas_with_nullable_and_discriminator() -> None:
    schemas = converted_petstore()["components"]["schemas"]

    assert list(schemas) == ["Pet", "Owner", "Error"]
    pet = schemas["Pet"]
    assert pet["discriminator"] == {"propertyName": "kind"}
    assert pet["properties"]["nickname"] == {"type": "string", "nullable": True}
    assert pet["properties"]["owner"] == {"allOf": [{"$ref": "#/components/schemas/Owner"}], "nullable": True}


def test_body_parameter_becomes_request_body_with_the_operation_consumes() -> None:
    body = operation(converted_petstore(), "/pets/{petId}", "put")["requestBody"]

    assert body == {
        "description": "the new pet",
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/Pet"}},
            "application/xml": {"schema": {"$ref": "#/components/schemas/Pet"}},
        },
        "required": False,
        "x-codegen-request-body-name": "pet",
    }


def test_global_body_parameter_becomes_a_request_body_component() -> None:
    converted = converted_petstore()

    assert operation(converted, "/pets", "post")["requestBody"] == {"$ref": "#/components/requestBodies/petBody"}
    assert converted["components"]["requestBodies"]["petBody"]["content"] == {
        "application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}
    }
    assert "petBody" not in converted["components"]["parameters"]


def test_form_data_with_a_file_becomes_multipart_with_binary_field() -> None:
    body = operation(converted_petstore(), "/pets/{petId}/photo", "post")["requestBody"]

    assert body == {
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "file": {"type": "string", "format": "binary", "description": "the photo"},
                        "caption": {"type": "string"},
                    },
                    "required": ["file"],
                }
            }
        },
        "required": True,
    }


def test_form_data_without_files_is_urlencoded_with_array_encoding() -> None:
    body = operation(converted_petstore(), "/pets/{petId}/rename", "post")["requestBody"]

    media = body["content"]["application/x-www-form-urlencoded"]
    assert media["schema"]["required"] == ["name"]
    assert media["encoding"] == {"nicknames": {"style": "form", "explode": True}}


def test_collection_formats_become_style_and_explode() -> None:
    params = operation(converted_petstore(), "/pets", "get")["parameters"]
    styles = {p.get("name", p.get("$ref")): (p.get("style"), p.get("explode")) for p in params}

    assert styles == {
        "#/components/parameters/limit": (None, None),
        "tags": ("form", True),  # multi
        "ids": ("form", False),  # csv is the 2.0 default, while 3.0 query defaults to explode
        "fields": ("form", False),  # tsv, with a warning
        "sort": ("pipeDelimited", False),  # pipes
    }


def test_tsv_and_misplaced_delimiters_warn() -> None:
    param = {"name": "ids", "in": "path", "required": True, "type": "array", "items": {"type": "string"}}
    document = minimal(paths={"/x/{ids}": {"get": {"parameters": [{**param, "collectionFormat": "ssv"}]}}})

    converted, issues = convert(document, source="s.yaml")

    assert converted["paths"]["/x/{ids}"]["get"]["parameters"][0]["style"] == "simple"
    assert issues == [
        Issue(
            Level.WARNING,
            "s.yaml: /paths/~1x~1{ids}/get/parameters/0",
            "collectionFormat 'ssv' is not allowed in path; sent comma-separated",
        )
    ]


def test_non_body_parameter_keywords_move_into_schema() -> None:
    limit = converted_petstore()["components"]["parameters"]["limit"]

    assert limit == {
        "name": "limit",
        "in": "query",
        "schema": {"type": "integer", "format": "int32", "default": 20, "maximum": 100, "minimum": 1},
    }


def test_path_level_parameters_stay_at_path_level() -> None:
    item = converted_petstore()["paths"]["/pets/{petId}"]

    assert [p["name"] for p in item["parameters"]] == ["petId", "X-Trace"]
    assert item["parameters"][1]["style"] == "simple"
    assert "parameters" not in item["get"]


def test_path_level_body_parameter_moves_into_each_operation() -> None:
    body = {"name": "data", "in": "body", "schema": {"type": "object"}}
    document = minimal(paths={"/x": {"parameters": [body], "put": {"responses": {}}, "post": {"responses": {}}}})

    converted, _ = convert(document)

    item = converted["paths"]["/x"]
    assert "parameters" not in item
    assert item["put"]["requestBody"]["content"] == {"application/json": {"schema": {"type": "object"}}}
    assert item["post"]["requestBody"] == item["put"]["requestBody"]


def test_response_schema_becomes_content_per_produces_and_file_is_binary() -> None:
    converted = converted_petstore()

    pet = operation(converted, "/pets/{petId}", "get")["responses"]["200"]
    photo = operation(converted, "/pets/{petId}/photo", "get")["responses"]["200"]
    listing = operation(converted, "/pets", "get")["responses"]["200"]

    assert list(pet["content"]) == ["application/json", "application/xml"]
    assert pet["content"]["application/json"]["example"] == {"id": 1, "name": "Rex"}
    assert photo["content"] == {"image/png": {"schema": {"type": "string", "format": "binary"}}}
    assert listing["headers"] == {"X-Next": {"description": "next page", "schema": {"type": "string"}}}


def test_file_response_without_binary_produces_is_octet_stream() -> None:
    document = minimal(paths={"/f": {"get": {"responses": {"200": {"description": "f", "schema": {"type": "file"}}}}}})

    converted, _ = convert(document)

    assert converted["paths"]["/f"]["get"]["responses"]["200"]["content"] == {
        "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
    }


def test_security_definitions_become_security_schemes() -> None:
    schemes = converted_petstore()["components"]["securitySchemes"]

    assert schemes["basicAuth"] == {"type": "http", "scheme": "basic"}
    assert schemes["apiKey"] == {
        "type": "apiKey",
        "name": "X-API-Key",
        "in": "header",
        "description": "key from the console",
    }
    assert {name: list(s["flows"]) for name, s in schemes.items() if s["type"] == "oauth2"} == {
        "implicitAuth": ["implicit"],
        "passwordAuth": ["password"],
        "appAuth": ["clientCredentials"],
        "codeAuth": ["authorizationCode"],
    }
    assert schemes["codeAuth"]["flows"]["authorizationCode"] == {
        "authorizationUrl": "https://auth.example.com/authorize",
        "tokenUrl": "https://auth.example.com/token",
        "scopes": {"read:pets": "read your pets"},
    }


def test_operation_fields_and_vendor_extensions_are_kept() -> None:
    converted = converted_petstore()

    listing = operation(converted, "/pets", "get")
    create = operation(converted, "/pets", "post")
    assert (listing["operationId"], listing["summary"], listing["tags"], listing["x-rate-limit"]) == (
        "listPets",
        "List pets",
        ["pets"],
        10,
    )
    assert (create["deprecated"], create["security"]) == (True, [{"basicAuth": []}])
    assert converted["paths"]["/pets"]["x-path-note"] == "listing"
    assert converted["x-api-owner"] == "pets-team"
    assert converted["security"] == [{"apiKey": []}]


def test_operations_keep_their_order_in_the_file() -> None:
    assert list(converted_petstore()["paths"]["/pets/{petId}/photo"]) == ["parameters", "post", "get"]
