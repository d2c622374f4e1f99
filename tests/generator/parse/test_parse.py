from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from bridge.contract.catalogue import EnvVar, SchemeUse, ToolAnnotationsSpec
from bridge.contract.formats import is_base64_file
from generator.emit.catalogue import http_binding
from generator.issues import Level
from generator.options import GenerateOptions
from generator.parse.api import package_name, parse_api
from generator.parse.ir import Api, Operation
from generator.parse.schemas.keywords import unresolved_refs
from generator.shape.describe import DescriptionRules, tool_description

HEADER = """
openapi: 3.0.3
info: {title: Swagger Petstore, version: 1.0.0}
"""


def parse(spec: str | dict[str, Any], **options: Any) -> Api:
    document = yaml.safe_load(HEADER + spec) if isinstance(spec, str) else spec
    return parse_api(document, options=GenerateOptions(**options), source_name="test.yaml")


def only(api: Api) -> Operation:
    assert len(api.operations) == 1, [str(i) for i in api.issues]
    return api.operations[0]


def by_label(api: Api) -> dict[str, Operation]:
    return {op.label: op for op in api.operations}


def ok(description: str = "ok") -> dict[str, Any]:
    return {"200": {"description": description}}


# Parameters -----------------------------------------------------------------------------------

PARAMS_SPEC = """
paths:
  /pets/{petId}:
    parameters:
      - {name: petId, in: path, schema: {type: integer, minimum: 1}, description: The pet}
      - {name: verbose, in: query, schema: {type: boolean}}
    get:
      operationId: getPet
      parameters:
        - {name: verbose, in: query, schema: {type: string, enum: ['yes', 'no']}}
        - {$ref: '#/components/parameters/Limit'}
        - {name: 'filter[status]', in: query, style: deepObject, explode: true, schema: {type: string}}
        - {name: X-Request-ID, in: header, schema: {type: string, format: uuid}}
        - {name: session, in: cookie, schema: {type: string}}
        - {name: where, in: query, content: {application/json: {schema: {type: object}}}}
        - {name: Accept, in: header, schema: {type: string}}
        - {name: content-type, in: header, schema: {type: string}}
        - {name: Authorization, in: header, schema: {type: string}}
      responses: {'200': {description: ok}}
components:
  parameters:
    Limit:
      {name: limit, in: query, required: true, allowReserved: true, schema: {type: integer, default: 20, maximum: 100}}
"""


def test_every_declared_parameter_becomes_an_argument() -> None:
    op = only(parse(PARAMS_SPEC))
    # 9 declared on the operation + 2 on the path item - 1 overridden - 3 ignored headers.
    assert list(op.arguments["properties"]) == [
        "petId",
        "verbose",
        "limit",
        "filter_status",
        "where",
        "X-Request-ID",
        "session",
    ]
    assert len(op.params) == len(http_binding(op).params) == 7


def test_input_schema_is_a_closed_object_with_param_details() -> None:
    op = only(parse(PARAMS_SPEC))
    schema = op.arguments
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == ["petId", "limit"]
    assert schema["properties"]["petId"] == {"type": "integer", "minimum": 1, "description": "The pet"}
    assert schema["properties"]["limit"] == {"type": "integer", "default": 20, "maximum": 100}
    assert schema["properties"]["verbose"] == {"type": "string", "enum": ["yes", "no"]}  # operation wins


def test_accept_content_type_and_authorization_headers_are_not_arguments() -> None:
    op = only(parse(PARAMS_SPEC))
    wires = {p.wire for p in http_binding(op).params}
    assert not wires & {"Accept", "content-type", "Authorization"}


def test_wire_names_stay_in_the_binding_with_serialisation_defaults() -> None:
    params = {p.wire: p for p in http_binding(only(parse(PARAMS_SPEC))).params}
    assert params["filter[status]"].arg == "filter_status"
    assert (params["filter[status]"].style, params["filter[status]"].explode) == ("deepObject", True)
    assert (params["petId"].style, params["petId"].explode, params["petId"].required) == ("simple", False, True)
    assert (params["limit"].style, params["limit"].explode, params["limit"].allow_reserved) == ("form", True, True)
    assert (params["X-Request-ID"].style, params["X-Request-ID"].explode) == ("simple", False)
    assert (params["session"].style, params["session"].explode) == ("form", True)
    assert params["where"].content_type == "application/json"


def test_path_parameters_are_always_required() -> None:
    op = only(
        parse("paths: {'/a/{id}': {get: {parameters: [{name: id, in: path, schema: {type: string}}], responses: {}}}}")
    )
    assert op.arguments["required"] == ["id"] and op.params[0].required


def test_same_name_in_path_and_query_gets_a_location_suffix() -> None:
    op = only(
        parse(
            """
paths:
  /items/{id}:
    get:
      parameters:
        - {name: id, in: query, schema: {type: string}}
        - {name: id, in: path, required: true, schema: {type: integer}}
        - {name: id, in: header, schema: {type: string}}
      responses: {}
"""
        )
    )
    assert [(p.location, p.arg) for p in http_binding(op).params] == [
        ("path", "id"),
        ("query", "id_query"),
        ("header", "id_header"),
    ]


def test_an_undeclared_path_variable_is_a_required_string_with_a_warning() -> None:
    api = parse("paths: {'/a/{id}': {get: {responses: {}}}, /b: {get: {responses: {}}}}")
    assert [op.label for op in api.operations] == ["GET /a/{id}", "GET /b"]
    assert [(i.level, i.where) for i in api.issues] == [(Level.WARNING, "GET /a/{id}")]
    assert "{id}" in api.issues[0].detail
    (param,) = api.operations[0].params
    assert (param.wire_name, param.location, param.required, param.schema) == (
        "id",
        "path",
        True,
        {"type": "string", "minLength": 1},
    )


def test_a_parameter_with_no_name_is_left_out_and_the_operation_kept() -> None:
    api = parse(
        "paths: {'/p/{id}': {parameters: [{in: path, name: id, required: true, schema: {type: string}}], "
        "get: {parameters: [{in: header, name: V, schema: {type: string}}, {in: header, name: '', schema: {}}, "
        "{in: query, schema: {}}], responses: {}}}}"
    )
    (op,) = api.operations
    assert [p.wire_name for p in op.params] == ["id", "V"]
    details = [i.detail for i in api.issues]
    assert details == [
        "parameters [1] (in: header) has no name; that parameter is left out",
        "parameters [2] (in: query) has no name; that parameter is left out",
    ]


def test_strict_turns_warnings_into_errors() -> None:
    api = parse('paths: {"/a/{id}": {get: {responses: {}}}}', strict=True)
    assert [i.level for i in api.issues] == [Level.ERROR]


def test_dangling_ref_skips_only_that_operation() -> None:
    api = parse(
        """
paths:
  /a: {get: {parameters: [{$ref: '#/components/parameters/Nope'}], responses: {}}}
  /b:
    post:
      requestBody: {content: {application/json: {schema: {$ref: '#/components/schemas/Nope'}}}}
      responses: {}
  /c: {get: {responses: {}}}
"""
    )
    assert [op.label for op in api.operations] == ["GET /c"]
    assert [i.where for i in api.issues] == ["GET /a", "POST /b"]
    assert all("does not resolve" in i.detail for i in api.issues)


def test_path_item_refs_are_followed() -> None:
    spec = """
paths:
  /shared: {$ref: '#/components/pathItems/Shared'}
components:
  pathItems:
    Shared: {get: {operationId: shared, responses: {}}}
"""
    assert only(parse(spec)).tool_name == "shared"


# Request body ---------------------------------------------------------------------------------

PET_SCHEMA = """
components:
  schemas:
    Pet:
      type: object
      required: [id, name]
      properties:
        id: {type: integer, readOnly: true}
        name: {type: string}
        tag: {type: string, nullable: true}
"""


def test_object_body_is_flattened_into_arguments() -> None:
    spec = (
        """
paths:
  /pets:
    post:
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: '#/components/schemas/Pet'}}}
      responses: {}
"""
        + PET_SCHEMA
    )
    op = only(parse(spec))
    assert op.arguments["properties"] == {"name": {"type": "string"}, "tag": {"type": ["string", "null"]}}
    assert op.arguments["required"] == ["name"]  # readOnly id is gone
    assert http_binding(op).body is not None
    assert [(f.arg, f.wire) for f in http_binding(op).body.fields] == [("name", "name"), ("tag", "tag")]
    assert http_binding(op).body.arg is None and op.body is not None and op.body.arg is None


def test_optional_body_does_not_make_its_properties_required() -> None:
    spec = (
        """
paths:
  /pets:
    post:
      requestBody: {content: {application/json: {schema: {$ref: '#/components/schemas/Pet'}}}}
      responses: {}
"""
        + PET_SCHEMA
    )
    assert only(parse(spec)).arguments["required"] == []


def test_body_colliding_with_a_parameter_stays_one_body_argument() -> None:
    spec = (
        """
paths:
  /pets/{name}:
    put:
      parameters: [{name: name, in: path, required: true, schema: {type: string}}]
      requestBody:
        required: true
        description: The new pet
        content: {application/json: {schema: {$ref: '#/components/schemas/Pet'}}}
      responses: {}
"""
        + PET_SCHEMA
    )
    op = only(parse(spec))
    assert list(op.arguments["properties"]) == ["name", "body"]
    assert op.arguments["required"] == ["name", "body"]
    assert op.arguments["properties"]["body"]["description"] == "The new pet"
    assert op.body is not None and op.body.arg == "body" and op.body.fields == ()


def test_body_argument_name_avoids_a_parameter_called_body() -> None:
    spec = """
paths:
  /x:
    post:
      parameters: [{name: body, in: query, schema: {type: string}}]
      requestBody: {content: {application/json: {schema: {type: array, items: {type: string}}}}}
      responses: {}
"""
    op = only(parse(spec))
    assert list(op.arguments["properties"]) == ["body", "request_body"]
    assert http_binding(op).body is not None and http_binding(op).body.arg == "request_body"


def test_non_object_bodies_are_one_argument() -> None:
    spec = """
paths:
  /tags:
    post:
      requestBody: {content: {application/json: {schema: {type: array, items: {type: string}}}}}
      responses: {}
  /note: {post: {requestBody: {content: {text/plain: {schema: {type: string}}}}, responses: {}}}
  /blob: {put: {requestBody: {required: true, content: {application/octet-stream: {}}}, responses: {}}}
  /open:
    post:
      requestBody:
        content:
          application/json: {schema: {type: object, additionalProperties: true, properties: {a: {type: string}}}}
      responses: {}
"""
    ops = by_label(parse(spec))
    assert ops["POST /tags"].arguments["properties"] == {"body": {"type": "array", "items": {"type": "string"}}}
    assert ops["POST /note"].arguments["properties"] == {"body": {"type": "string"}}
    blob = ops["PUT /blob"].arguments["properties"]["body"]
    assert blob["type"] == "string" and blob["contentEncoding"] == "base64" and blob["description"]
    assert ops["PUT /blob"].arguments["required"] == ["body"]
    assert list(ops["POST /open"].arguments["properties"]) == ["body"]


def test_json_is_preferred_and_other_media_types_are_recorded() -> None:
    spec = """
paths:
  /pets:
    post:
      requestBody:
        content:
          application/xml: {schema: {type: object}}
          application/x-www-form-urlencoded: {schema: {type: object, properties: {a: {type: string}}}}
          application/vnd.api+json: {schema: {type: object, properties: {a: {type: string}}}}
      responses: {}
"""
    op = only(parse(spec))
    assert op.body is not None and op.body.media_type == "application/vnd.api+json"
    assert op.body.other_media_types == ("application/xml", "application/x-www-form-urlencoded")


def test_multipart_files_take_base64_and_object_fields_are_json() -> None:
    spec = """
paths:
  /upload:
    post:
      requestBody:
        content:
          multipart/form-data:
            schema:
              type: object
              properties:
                file: {type: string, format: binary, description: The image}
                attachments: {type: array, items: {type: string, format: binary}}
                meta: {type: object, properties: {alt: {type: string}}}
                tags: {type: array, items: {type: string}}
                settings: {type: string}
            encoding:
              settings: {contentType: application/json}
      responses: {}
"""
    op = only(parse(spec))
    properties = op.arguments["properties"]
    assert properties["file"] == {
        "type": "string",
        "contentEncoding": "base64",
        "description": "The image File content: base64 or data: URI.",
    }
    assert properties["attachments"]["items"]["type"] == "string"
    assert "format" not in properties["attachments"]["items"]
    assert http_binding(op).body is not None
    assert http_binding(op).body.file_fields == ("file", "attachments")
    assert http_binding(op).body.json_fields == ("meta", "settings")


# Responses ------------------------------------------------------------------------------------


def _response_spec(responses: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A one-operation document; ``responses`` maps each status to ``{media type: schema}``."""
    nodes: dict[str, Any] = {}
    for status, content in responses.items():
        nodes[status] = {"description": status}
        if content:
            nodes[status]["content"] = {media_type: {"schema": schema} for media_type, schema in content.items()}
    document: dict[str, Any] = yaml.safe_load(HEADER)
    document["paths"] = {"/r": {"get": {"responses": nodes}}}
    return document


JSON = "application/json"


def test_array_response_is_wrapped_in_result() -> None:
    op = only(parse(_response_spec({"200": {JSON: {"type": "array", "items": {"type": "integer"}}}})))
    assert op.result == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"type": "integer"}}},
        "required": ["result"],
    }
    assert http_binding(op).wrap_output is True


def test_mixed_any_of_response_is_wrapped() -> None:
    schema = {"anyOf": [{"type": "object"}, {"type": "string"}]}
    op = only(parse(_response_spec({"200": {JSON: schema}})))
    assert http_binding(op).wrap_output and op.result is not None
    assert op.result["properties"]["result"] == schema


def test_object_response_gets_type_object_at_the_root() -> None:
    spec = _response_spec(
        {
            "201": {"application/problem+json": {"properties": {"a": {"type": "string"}}}},
            "400": {JSON: {"type": "string"}},
        }
    )
    op = only(parse(spec))
    assert op.result == {"properties": {"a": {"type": "string"}}, "type": "object"}
    assert http_binding(op).wrap_output is False
    assert http_binding(op).accept == ("application/problem+json",)
    assert [(r.status, r.media_type) for r in op.responses] == [
        ("201", "application/problem+json"),
        ("400", "application/json"),
    ]


def test_no_output_schema_without_a_json_body() -> None:
    op = only(parse(_response_spec({"204": {}, "200": {"text/csv": {"type": "string"}}})))
    assert op.result is None and http_binding(op).accept == ("text/csv",)


def test_no_output_schema_when_another_success_response_has_no_body() -> None:
    assert only(parse(_response_spec({"200": {JSON: {"type": "object"}}, "204": {}}))).result is None


def test_lowest_success_status_with_json_gives_the_output_schema() -> None:
    spec = _response_spec({"2XX": {JSON: {"type": "string"}}, "201": {JSON: {"type": "object"}}})
    op = only(parse(spec))
    assert op.result == {"type": "object"} and not http_binding(op).wrap_output


def test_default_response_counts_only_without_2xx() -> None:
    spec = _response_spec({"default": {"*/*": {"type": "object", "properties": {"x": {"type": "integer"}}}}})
    op = only(parse(spec))
    assert op.result is not None and op.result["properties"] == {"x": {"type": "integer"}}
    assert http_binding(op).accept == ("*/*",)
    with_2xx = _response_spec({"default": {JSON: {"type": "object"}}, "202": {}})
    assert only(parse(with_2xx)).result is None


def test_write_only_properties_are_dropped_from_output() -> None:
    schema = {"type": "object", "properties": {"password": {"type": "string", "writeOnly": True}, "login": {}}}
    op = only(parse(_response_spec({"200": {JSON: schema}})))
    assert op.result is not None and list(op.result["properties"]) == ["login"]


def test_circular_schemas_give_self_contained_tool_schemas() -> None:
    spec = """
paths:
  /nodes:
    post:
      requestBody: {content: {application/json: {schema: {$ref: '#/components/schemas/Node'}}}}
      responses:
        '200':
          description: ok
          content: {application/json: {schema: {type: array, items: {$ref: '#/components/schemas/Node'}}}}
components:
  schemas:
    Node:
      type: object
      properties:
        value: {type: string}
        next: {$ref: '#/components/schemas/Node'}
"""
    op = only(parse(spec))
    assert op.arguments["properties"]["next"] == {"$ref": "#/$defs/Node"}
    assert set(op.arguments["$defs"]) == {"Node"}
    assert op.result is not None and set(op.result["$defs"]) == {"Node"}
    assert unresolved_refs(op.arguments) == [] and unresolved_refs(op.result) == []


def test_openapi_31_boolean_subschemas_and_unevaluated_properties_survive() -> None:
    document = yaml.safe_load(
        """
openapi: 3.1.0
info: {title: Train Travel, version: '1'}
paths:
  /bookings:
    post:
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                source: {$ref: '#/components/schemas/Card'}
                extra: true
              additionalProperties: false
      responses: {}
components:
  schemas:
    Card:
      type: object
      properties: {kind: {const: card}, number: {type: [string, 'null']}}
      unevaluatedProperties: false
"""
    )
    op = only(parse_api(document, options=GenerateOptions(), source_name="t"))
    assert op.arguments["properties"]["extra"] is True
    assert op.arguments["properties"]["source"]["unevaluatedProperties"] is False
    assert op.arguments["properties"]["source"]["properties"]["kind"] == {"const": "card"}


# Descriptions and annotations -----------------------------------------------------------------


def _as_converted(op: Operation, limit: int = 1024) -> str:
    return tool_description(op, DescriptionRules(limit, compact=False))


def test_description_joins_summary_and_description_and_marks_deprecation() -> None:
    spec = "paths: {/a: {get: {summary: List pets, description: '**All** pets.', deprecated: true, responses: {}}}}"
    op = only(parse(spec))
    assert _as_converted(op) == "[Deprecated] List pets\n\n**All** pets."
    assert op.summary == "List pets"


def test_description_falls_back_to_method_and_path() -> None:
    op = only(parse("paths: {/a: {delete: {responses: {}}}}"))
    assert _as_converted(op) == "DELETE /a" and op.summary is None


def test_long_descriptions_are_cut_at_a_word_boundary() -> None:
    op = only(parse("paths: {/a: {get: {description: " + "lorem " * 400 + ", responses: {}}}}"))
    text = _as_converted(op, 100)
    assert len(text) <= 100 and text.endswith("…")
    assert text.removesuffix("…").endswith("lorem")
    assert op.description is not None and op.description.startswith("lorem lorem")  # the model keeps the whole text


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("get", (True, False, True)),
        ("head", (True, False, True)),
        ("options", (True, False, True)),
        ("trace", (True, False, True)),
        ("post", (False, False, False)),
        ("put", (False, True, True)),
        ("patch", (False, True, False)),
        ("delete", (False, True, True)),
    ],
)
def test_annotations_follow_the_method(method: str, expected: tuple[bool, bool, bool]) -> None:
    op = only(parse(f"paths: {{/a: {{{method}: {{responses: {{}}}}}}}}"))
    assert op.annotations == ToolAnnotationsSpec(
        readOnlyHint=expected[0], destructiveHint=expected[1], idempotentHint=expected[2], openWorldHint=True
    )


def test_annotations_can_be_overridden_by_extension_then_options() -> None:
    spec = """
paths:
  /a:
    post:
      operationId: search
      x-mcp-annotations: {readOnlyHint: true, idempotentHint: true, openWorldHint: false}
      responses: {}
"""
    op = only(parse(spec, overrides={"search": {"annotations": {"openWorldHint": True}}}))
    assert op.annotations == ToolAnnotationsSpec(
        readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=True
    )


def test_bad_annotation_override_is_a_warning() -> None:
    api = parse("paths: {/a: {get: {x-mcp-annotations: {readOnlyHint: maybe}, responses: {}}}}")
    assert api.operations[0].annotations.readOnlyHint is True
    assert [i.level for i in api.issues] == [Level.WARNING]


# Names ----------------------------------------------------------------------------------------


def test_tool_names_come_from_sanitised_operation_ids_or_method_and_path() -> None:
    spec = """
paths:
  /repos/{owner}:
    parameters: [{name: owner, in: path, required: true, schema: {type: string}}]
    get: {operationId: repos/get, responses: {}}
    delete: {responses: {}}
"""
    assert [op.tool_name for op in parse(spec).operations] == ["repos_get", "delete_repos_owner"]


def test_explicit_names_from_extension_and_overrides() -> None:
    spec = """
paths:
  /a: {get: {operationId: a, x-mcp-name: alpha, responses: {}}}
  /b: {get: {operationId: b, responses: {}}}
"""
    api = parse(spec, overrides={"GET /b": {"name": "beta"}})
    assert [op.tool_name for op in api.operations] == ["alpha", "beta"]


def test_conflicting_explicit_names_are_an_error_naming_both_operations() -> None:
    spec = """
paths:
  /a: {get: {x-mcp-name: x, responses: {}}}
  /b: {post: {x-mcp-name: x, responses: {}}}
"""
    issues = parse(spec).issues
    assert [(i.level, i.detail) for i in issues] == [(Level.ERROR, "GET /a and POST /b both want tool name 'x'")]


def test_long_operation_ids_are_capped_with_a_hash() -> None:
    long_id = "a_really_long_operation_identifier_" * 3
    op = only(parse(f"paths: {{/a: {{get: {{operationId: {long_id}, responses: {{}}}}}}}}", max_name_length=40))
    assert len(op.tool_name) == 40 and re.fullmatch(r"a_really_long_operation_identif_[0-9a-f]{8}", op.tool_name)


# Filters --------------------------------------------------------------------------------------

FILTER_SPEC = """
paths:
  /pets:
    get: {operationId: listPets, tags: [pets], responses: {}}
    post: {operationId: createPet, tags: [pets, admin], responses: {}}
  /users:
    get: {operationId: listUsers, tags: [users], responses: {}}
    delete: {operationId: deleteUsers, tags: [users], x-mcp: {exclude: true}, responses: {}}
"""


def _kept(api: Api) -> list[str]:
    return [op.tool_name for op in api.operations]


def test_x_mcp_exclude_and_override_exclude_leave_operations_out() -> None:
    api = parse(FILTER_SPEC, overrides={"POST /pets": {"exclude": True}})
    assert _kept(api) == ["listPets", "listUsers"]
    assert api.excluded == ("POST /pets", "DELETE /users")


def test_tag_filters() -> None:
    assert _kept(parse(FILTER_SPEC, include_tags=("pets",))) == ["listPets", "createPet"]
    assert _kept(parse(FILTER_SPEC, exclude_tags=("admin",))) == ["listPets", "listUsers"]


def test_operation_globs_match_operation_id_or_method_and_path() -> None:
    assert _kept(parse(FILTER_SPEC, include_operations=("list*",))) == ["listPets", "listUsers"]
    assert _kept(parse(FILTER_SPEC, exclude_operations=("GET /pe*",))) == ["createPet", "listUsers"]


def test_read_only_keeps_only_read_only_tools_after_overrides() -> None:
    api = parse(FILTER_SPEC, read_only=True, overrides={"createPet": {"annotations": {"readOnlyHint": True}}})
    assert _kept(api) == ["listPets", "createPet", "listUsers"]


def test_filters_do_not_rename_the_remaining_tools() -> None:
    spec = """
paths:
  /a: {get: {operationId: same, responses: {}}}
  /b: {get: {operationId: same, responses: {}}}
"""
    assert _kept(parse(spec, exclude_operations=("GET /a",))) == ["same_2"]


# Security -------------------------------------------------------------------------------------

SECURITY_SPEC = """
security: [{api_key: []}]
paths:
  /pets:
    get:
      parameters:
        - {name: api_key, in: header, schema: {type: string}}
        - {name: q, in: query, schema: {type: string}}
      responses: {}
  /public:
    get:
      security: []
      parameters: [{name: api_key, in: header, schema: {type: string}}]
      responses: {}
  /either:
    get:
      security: [{bearerAuth: []}, {oauth: [read, write]}, {}]
      responses: {}
  /cc: {get: {security: [{machine: [admin]}], responses: {}}}
  /more: {get: {security: [{basic: []}, {oidc: []}, {mtls: []}], responses: {}}}
components:
  securitySchemes:
    api_key: {type: apiKey, in: header, name: API_KEY}
    bearerAuth: {type: http, scheme: bearer}
    basic: {type: http, scheme: basic, description: Basic auth}
    oauth:
      type: oauth2
      flows:
        authorizationCode: {authorizationUrl: 'https://a/a', tokenUrl: 'https://a/t', scopes: {read: r, write: w}}
    machine:
      type: oauth2
      flows: {clientCredentials: {tokenUrl: 'https://a/token', scopes: {admin: a}}}
    oidc: {type: openIdConnect, openIdConnectUrl: 'https://a/.well-known/openid-configuration'}
    mtls: {type: mutualTLS}
    unused: {type: apiKey, in: query, name: key}
"""


def test_security_schemes_get_environment_variable_names() -> None:
    api = parse(SECURITY_SPEC)
    assert api.env_prefix == "SWAGGER_PETSTORE"
    schemes = api.security_schemes
    assert list(schemes) == ["api_key", "bearerAuth", "basic", "oauth", "machine", "oidc", "mtls"]
    assert schemes["api_key"].env == (EnvVar(role="value", name="SWAGGER_PETSTORE_API_KEY"),)
    assert (schemes["api_key"].location, schemes["api_key"].param_name) == ("header", "API_KEY")
    assert schemes["bearerAuth"].env == (EnvVar(role="token", name="SWAGGER_PETSTORE_BEARER_AUTH_TOKEN"),)
    assert [e.name for e in schemes["basic"].env] == [
        "SWAGGER_PETSTORE_BASIC_USERNAME",
        "SWAGGER_PETSTORE_BASIC_PASSWORD",
    ]
    assert schemes["oauth"].env == (EnvVar(role="token", name="SWAGGER_PETSTORE_OAUTH_TOKEN"),)
    assert schemes["oauth"].scopes == ("read", "write")
    assert schemes["machine"].token_url == "https://a/token"
    # A ready token works for every OAuth2 scheme, whatever its flows.
    assert [e.role for e in schemes["machine"].env] == ["token", "client_id", "client_secret"]
    assert schemes["oidc"].supported and schemes["oidc"].env[0].role == "token"
    assert schemes["mtls"].supported and [e.name for e in schemes["mtls"].env] == [
        "SWAGGER_PETSTORE_MTLS_CERT_FILE",
        "SWAGGER_PETSTORE_MTLS_KEY_FILE",
        "SWAGGER_PETSTORE_MTLS_KEY_PASSWORD",
    ]


def test_security_requirements_become_alternatives() -> None:
    ops = by_label(parse(SECURITY_SPEC))
    assert http_binding(ops["GET /pets"]).security == ((SchemeUse(scheme="api_key"),),)
    assert http_binding(ops["GET /public"]).security == ()
    assert http_binding(ops["GET /either"]).security == (
        (SchemeUse(scheme="bearerAuth"),),
        (SchemeUse(scheme="oauth", scopes=("read", "write")),),
        (),
    )


def test_api_key_credential_parameter_is_not_an_argument() -> None:
    ops = by_label(parse(SECURITY_SPEC))
    assert list(ops["GET /pets"].arguments["properties"]) == ["q"]
    # Not even where the operation does not list the scheme: a model-chosen value in a credential
    # slot is a credential the operator never gave.
    assert list(ops["GET /public"].arguments["properties"]) == []


def test_undeclared_security_scheme_is_ignored_with_one_warning() -> None:
    spec = """
paths:
  /a: {get: {security: [{ghost: []}, {bearer: []}], responses: {}}}
  /b: {get: {security: [{ghost: []}], responses: {}}}
components:
  securitySchemes:
    bearer: {type: http, scheme: bearer}
"""
    api = parse(spec)
    ops = by_label(api)
    assert http_binding(ops["GET /a"]).security == ((SchemeUse(scheme="bearer"),),)
    assert http_binding(ops["GET /b"]).security == ()
    assert [i.level for i in api.issues] == [Level.WARNING] and "'ghost'" in api.issues[0].detail


# Document-level -------------------------------------------------------------------------------


def test_package_name_and_prefix_come_from_the_title_or_options() -> None:
    assert package_name("Swagger Petstore") == "swagger_petstore"
    assert package_name("1Password Connect!") == "api_1password_connect"
    assert package_name("") == "api"
    api = parse("paths: {}", name="pets")
    assert (api.name, api.env_prefix, api.title, api.version) == ("pets", "PETS", "Swagger Petstore", "1.0.0")


def test_servers_keep_variables_and_relative_urls() -> None:
    spec = """
servers:
  - url: 'https://{region}.example.com/v1'
    variables: {region: {default: eu, enum: [eu, us], description: Region}}
  - {url: /api}
paths: {}
"""
    servers = parse(spec).servers
    assert [s.url for s in servers] == ["https://{region}.example.com/v1", "/api"]
    assert servers[0].variables["region"].enum == ("eu", "us")


def test_operation_keeps_its_extensions_and_tags() -> None:
    op = only(parse("paths: {/a: {get: {tags: [t], x-rate-limit: 5, x-mcp-name: a, responses: {}}}}"))
    assert op.extensions == {"x-rate-limit": 5, "x-mcp-name": "a"}
    assert op.tags == ("t",)


def test_parsing_is_deterministic() -> None:
    first = parse(SECURITY_SPEC + PARAMS_SPEC.replace("paths:", "x-unused:"))
    second = parse(SECURITY_SPEC + PARAMS_SPEC.replace("paths:", "x-unused:"))
    assert first == second


def test_url_encoded_object_properties_are_sent_form_style_not_as_json() -> None:
    spec = """
paths:
  /forms:
    post:
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              properties:
                meta: {type: object, properties: {k: {type: string}}}
                raw: {type: string}
            encoding:
              raw: {contentType: application/json}
      responses: {}
"""
    op = only(parse(spec))
    assert http_binding(op).body is not None
    assert http_binding(op).body.json_fields == ("raw",)


def test_optional_body_requires_its_required_fields_once_any_field_is_given() -> None:
    spec = """
paths:
  /things:
    post:
      requestBody:
        content:
          application/json:
            schema:
              type: object
              required: [name, kind]
              properties: {name: {type: string}, kind: {type: string}, note: {type: string}}
      responses: {}
"""
    op = only(parse(spec))
    assert op.arguments["required"] == []
    assert op.arguments["dependentRequired"] == {"name": ["kind"], "kind": ["name"], "note": ["name", "kind"]}


def test_path_parameters_must_not_be_empty() -> None:
    spec = """
paths:
  /a/{s}/{l}/{o}:
    get:
      parameters:
        - {name: s, in: path, required: true, schema: {type: string}}
        - {name: l, in: path, required: true, schema: {type: array, items: {type: string}}}
        - {name: o, in: path, required: true, schema: {type: object, properties: {x: {type: string}}}}
      responses: {}
"""
    properties = only(parse(spec)).arguments["properties"]
    assert (properties["s"]["minLength"], properties["l"]["minItems"], properties["o"]["minProperties"]) == (1, 1, 1)


def test_headers_the_runtime_never_sends_are_not_arguments() -> None:
    spec = """
paths:
  /a:
    get:
      parameters:
        - {name: Host, in: header, schema: {type: string}}
        - {name: Cookie, in: header, schema: {type: string}}
        - {name: X-Forwarded-For, in: header, schema: {type: string}}
        - {name: Transfer-Encoding, in: header, schema: {type: string}}
        - {name: X-Trace, in: header, schema: {type: string}}
      responses: {}
"""
    assert list(only(parse(spec)).arguments["properties"]) == ["X-Trace"]


def test_json_is_asked_for_first_so_the_answer_can_be_structured() -> None:
    spec = """
paths:
  /a:
    get:
      responses:
        "200":
          description: ok
          content:
            application/xml: {schema: {type: object, properties: {a: {type: string}}}}
            application/json: {schema: {type: object, properties: {a: {type: string}}}}
"""
    assert http_binding(only(parse(spec))).accept == ("application/json", "application/xml")


def test_no_output_schema_when_a_success_status_has_no_body() -> None:
    spec = """
paths:
  /a:
    post:
      responses:
        "204":
          description: done
          content: {application/json: {schema: {type: object, properties: {a: {type: string}}}}}
"""
    assert only(parse(spec)).result is None


def test_required_query_arrays_must_not_be_empty() -> None:
    spec = """
paths:
  /a:
    get:
      parameters:
        - {name: status, in: query, required: true, schema: {type: array, items: {type: string}}}
        - {name: tags, in: query, schema: {type: array, items: {type: string}}}
      responses: {}
"""
    properties = only(parse(spec)).arguments["properties"]
    assert properties["status"]["minItems"] == 1 and "minItems" not in properties["tags"]


def test_body_with_a_required_member_it_does_not_describe_stays_one_argument() -> None:
    spec = """
paths:
  /a:
    post:
      requestBody:
        content:
          application/json:
            schema: {type: object, required: [kind], properties: {name: {type: string}}}
      responses: {}
"""
    op = only(parse(spec))
    assert list(op.arguments["properties"]) == ["body"]


@pytest.mark.parametrize(
    ("value", "ok"),
    [("data:image/png;base64,iVBO", True), ("data:aa;base64,iVBO", False), ("data:;name=a;base64,aGk=", True)],
)
def test_file_arguments_admit_what_the_runtime_decodes(value: str, ok: bool) -> None:
    assert is_base64_file(value) is ok
