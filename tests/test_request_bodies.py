"""A request body keeps its schema whatever its media type: generator and runtime together.

Each case is an inline spec: the advertised input schema is checked, a value valid against it is
sent, and the bytes and Content-Type on the wire are checked.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from bridge.request.build import build_request
from bridge.tools.errors import InvalidArgumentsError
from generator.emit.catalogue import http_binding
from generator.load.swagger2 import convert
from generator.options import GenerateOptions
from generator.parse.api import parse_api
from generator.parse.ir import Operation

API = "http://upstream.test"
OBJECT: dict[str, Any] = {"type": "object", "properties": {"name": {"type": "string"}, "size": {"type": "integer"}}}
OPEN_OBJECT: dict[str, Any] = {"type": "object", "additionalProperties": True}
ARRAY: dict[str, Any] = {"type": "array", "items": OBJECT}
STRING: dict[str, Any] = {"type": "string"}
BINARY: dict[str, Any] = {"type": "string", "format": "binary"}
ENCODED: dict[str, Any] = {"type": "string", "contentEncoding": "base64"}
PNG = b"\x89PNG\r\n\x1a\n\x00"
PNG64 = base64.b64encode(PNG).decode()
NO_SCHEMA = object()  # the media type object has no schema


def operation(content: dict[str, Any], **extra: Any) -> Operation:
    body = {"required": True, "content": content}
    document = {
        "openapi": "3.1.0",
        "info": {"title": "bodies", "version": "1"},
        "paths": {"/things": {"post": {"operationId": "send", "requestBody": body, "responses": {"204": {}}} | extra}},
        "components": {"schemas": {"Thing": OBJECT}},
    }
    api = parse_api(document, options=GenerateOptions(), source_name="bodies.yaml")
    assert len(api.operations) == 1, [str(issue) for issue in api.issues]
    return api.operations[0]


def media(schema: Any) -> dict[str, Any]:
    return {} if schema is NO_SCHEMA else {"schema": schema}


def sent(op: Operation, args: dict[str, Any]) -> tuple[bytes, str | None]:
    Draft202012Validator(op.arguments).validate(args)  # the arguments are valid as advertised
    request = build_request(http_binding(op), args, base_url=API)
    return request.content or b"", request.content_type


# media type, schema, arguments, advertised (argument -> JSON type), wire bytes, Content-Type
JSON_CASES = [
    ("*/*", OBJECT, {"name": "a", "size": 2}, {"name": "string", "size": "integer"}, b'{"name":"a","size":2}', None),
    ("*/*", {"$ref": "#/components/schemas/Thing"}, {"name": "a"}, {"name": "string"}, b'{"name":"a"}', None),
    ("*/*", OPEN_OBJECT, {"body": {"k": [1]}}, {"body": "object"}, b'{"k":[1]}', None),
    ("*/*", ARRAY, {"body": [{"name": "a"}]}, {"body": "array"}, b'[{"name":"a"}]', None),
    ("*/*", {"type": "integer"}, {"body": 5}, {"body": "integer"}, b"5", None),
    ("*/*", {"type": "boolean"}, {"body": False}, {"body": "boolean"}, b"false", None),
    ("*/*", {}, {"body": {"any": None}}, {"body": None}, b'{"any":null}', None),
    ("*/*", {"oneOf": [OBJECT, ARRAY]}, {"body": {"name": "a"}}, {"body": None}, b'{"name":"a"}', None),
    ("application/*", OBJECT, {"name": "a"}, {"name": "string"}, b'{"name":"a"}', None),
    ("application/*+json", OBJECT, {"name": "a"}, {"name": "string"}, b'{"name":"a"}', None),
    ("text/*", OBJECT, {"name": "a"}, {"name": "string"}, b'{"name":"a"}', "text/json"),
    ("application/json; charset=utf-8", OBJECT, {"name": "a"}, {"name": "string"}, b'{"name":"a"}', "same"),
    ("text/json", OBJECT, {"name": "a"}, {"name": "string"}, b'{"name":"a"}', "same"),
    ("application/merge-patch+json", OBJECT, {"name": "a"}, {"name": "string"}, b'{"name":"a"}', "same"),
    ("application/strategic-merge-patch+json", OBJECT, {"name": "a"}, {"name": "string"}, b'{"name":"a"}', "same"),
    ("application/json-patch+json", {"type": "array"}, {"body": [{"op": "add"}]}, {"body": "array"}, None, "same"),
    ("application/vnd.api+json", OBJECT, {"name": "a"}, {"name": "string"}, b'{"name":"a"}', "same"),
    ("application/json", STRING, {"body": "x"}, {"body": "string"}, b'"x"', "same"),
]


@pytest.mark.parametrize(
    ("media_type", "schema", "args", "advertised", "wire", "content_type"),
    JSON_CASES,
    ids=[f"{c[0]}-{json.dumps(c[1])[:30]}" for c in JSON_CASES],
)
def test_a_structured_body_is_a_json_argument_under_any_media_type_that_admits_json(
    media_type: str,
    schema: dict[str, Any],
    args: dict[str, Any],
    advertised: dict[str, str | None],
    wire: bytes | None,
    content_type: str | None,
) -> None:
    op = operation({media_type: media(schema)})
    properties = op.arguments["properties"]
    assert {name: properties[name].get("type") for name in advertised} == advertised
    assert all("contentEncoding" not in properties[name] for name in advertised)
    content, sent_type = sent(op, args)
    value = args.get("body", args)
    assert json.loads(content) == value
    if wire is not None:
        assert content == wire
    expected = media_type if content_type == "same" else content_type or "application/json"
    assert sent_type == expected


# media type, schema, argument, wire bytes, Content-Type
RAW_CASES = [
    ("*/*", STRING, "héllo {not json}", "héllo {not json}".encode(), "text/plain; charset=utf-8"),
    ("*/*", BINARY, PNG64, PNG, "application/octet-stream"),
    ("*/*", BINARY, f"data:image/png;base64,{PNG64}", PNG, "image/png"),
    ("*/*", ENCODED, PNG64, PNG, "application/octet-stream"),
    ("*/*", NO_SCHEMA, PNG64, PNG, "application/octet-stream"),
    ("application/*", NO_SCHEMA, f"data:application/pdf;base64,{PNG64}", PNG, "application/pdf"),
    ("application/octet-stream", OBJECT, PNG64, PNG, "application/octet-stream"),
    ("application/octet-stream", NO_SCHEMA, PNG64, PNG, "application/octet-stream"),
    ("image/*", NO_SCHEMA, f"data:image/png;base64,{PNG64}", PNG, "image/png"),
    ("image/png", BINARY, PNG64, PNG, "image/png"),
    ("application/pdf", OPEN_OBJECT, PNG64, PNG, "application/pdf"),
    ("text/plain", STRING, "line\nline", b"line\nline", "text/plain; charset=utf-8"),
    ("text/plain", OBJECT, "raw", b"raw", "text/plain; charset=utf-8"),
    ("text/csv", STRING, "a,b", b"a,b", "text/csv; charset=utf-8"),
    ("application/xml", OBJECT, "<a/>", b"<a/>", "application/xml"),
    ("application/yaml", OBJECT, "a: 1", b"a: 1", "application/yaml"),
]


@pytest.mark.parametrize(
    ("media_type", "schema", "value", "wire", "content_type"),
    RAW_CASES,
    ids=[f"{c[0]}-{'none' if c[1] is NO_SCHEMA else json.dumps(c[1])[:30]}" for c in RAW_CASES],
)
def test_binary_bodies_are_decoded_base64_and_text_bodies_are_sent_as_text(
    media_type: str, schema: Any, value: str, wire: bytes, content_type: str
) -> None:
    op = operation({media_type: media(schema)})
    advertised = op.arguments["properties"]["body"]
    assert advertised["type"] == "string"
    binary = wire != value.encode()
    assert ("contentEncoding" in advertised) is binary
    assert sent(op, {"body": value}) == (wire, content_type)


def test_a_wildcard_binary_body_refuses_a_data_uri_of_another_type() -> None:
    op = operation({"image/*": {}})
    with pytest.raises(InvalidArgumentsError):
        build_request(http_binding(op), {"body": f"data:text/plain;base64,{PNG64}"}, base_url=API)


# declared content (in order), the media type chosen
CHOICES = [
    ({"application/octet-stream": {}, "*/*": {"schema": OBJECT}}, "*/*"),
    ({"text/plain": {"schema": STRING}, "application/json": {"schema": OBJECT}}, "application/json"),
    ({"application/json-patch+json": {"schema": ARRAY}, "application/merge-patch+json": {"schema": OBJECT}}, "merge"),
    (
        {
            "application/json-patch+json": {"schema": OBJECT},
            "application/merge-patch+json": {"schema": OBJECT},
            "application/strategic-merge-patch+json": {"schema": OBJECT},
            "application/apply-patch+yaml": {"schema": OBJECT},
        },
        "application/merge-patch+json",
    ),
    ({"*/*": {}, "application/octet-stream": {}}, "application/octet-stream"),
    ({"multipart/form-data": {"schema": OBJECT}, "application/x-www-form-urlencoded": {"schema": OBJECT}}, "form"),
    ({"application/xml": {"schema": OBJECT}, "*/*": {"schema": OBJECT}}, "*/*"),
    ({"application/vnd.a+json": {"schema": OBJECT}, "application/json": {"schema": OBJECT}}, "application/json"),
]


@pytest.mark.parametrize(("content", "chosen"), CHOICES)
def test_the_body_media_type_is_chosen_json_first_whatever_the_declared_order(
    content: dict[str, Any], chosen: str
) -> None:
    chosen = {"merge": "application/merge-patch+json", "form": "application/x-www-form-urlencoded"}.get(chosen, chosen)
    for order in (content, dict(reversed(content.items()))):
        op = operation(order)
        assert op.body is not None and op.body.media_type == chosen
        assert set(op.body.other_media_types) == set(content) - {chosen}


def swagger2_operation(parameters: list[dict[str, Any]], consumes: list[str]) -> Operation:
    document = {
        "swagger": "2.0",
        "info": {"title": "two", "version": "1"},
        "paths": {"/things": {"post": {"consumes": consumes, "parameters": parameters, "responses": {"204": {}}}}},
        "definitions": {"Thing": OBJECT},
    }
    converted, issues = convert(document)
    assert issues == []
    api = parse_api(converted, options=GenerateOptions(), source_name="two.yaml")
    assert len(api.operations) == 1, [str(issue) for issue in api.issues]
    return api.operations[0]


def test_a_swagger2_body_consumed_as_any_type_is_json() -> None:
    op = swagger2_operation([{"name": "body", "in": "body", "schema": {"$ref": "#/definitions/Thing"}}], ["*/*"])
    assert op.arguments["properties"]["name"] == {"type": "string"}
    assert sent(op, {"name": "a"}) == (b'{"name":"a"}', "application/json")


@pytest.mark.parametrize(
    ("collection_format", "wire"),
    [
        (None, b"ids=1,2"),
        ("csv", b"ids=1,2"),
        ("multi", b"ids=1&ids=2"),
        ("ssv", b"ids=1%202"),
        ("pipes", b"ids=1%7C2"),
    ],
)
def test_swagger2_form_arrays_follow_their_collection_format(collection_format: str | None, wire: bytes) -> None:
    param: dict[str, Any] = {"name": "ids", "in": "formData", "type": "array", "items": {"type": "integer"}}
    if collection_format:
        param["collectionFormat"] = collection_format
    op = swagger2_operation([param], ["application/x-www-form-urlencoded"])
    assert sent(op, {"ids": [1, 2]}) == (wire, "application/x-www-form-urlencoded")
