"""Request bodies real specs declare in shapes no call could satisfy (issue 31): a multipart body that
is one binary string (Jira's addAttachment) is sent as one file part, and a oneOf whose branches
cannot be told apart (Intellifi's addItem) is taken as anyOf, with a warning."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import Client

from bridge.calls.runtime import HttpRuntime
from bridge.serving.assemble import build_bridge_server, build_registry
from bridge.serving.package import load_catalogue
from generator.generate import generate
from generator.options import GenerateOptions
from generator.parse.schemas.one_of import overlapping_branches, without_ambiguous_one_ofs
from tests.bridge.fake_upstream import FakeUpstream
from tests.test_form_bodies import parts


def _package(tmp_path: Path, body: str) -> tuple[Path, dict[str, Any], list[str]]:
    text = "openapi: 3.0.1\ninfo: {title: Bodies, version: '1'}\nservers: [{url: 'http://upstream.test'}]\n" + body
    document = yaml.safe_load(text)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(document), encoding="utf-8")
    result = generate(str(spec), tmp_path / "pkg", GenerateOptions())
    return tmp_path / "pkg", document, [str(issue) for issue in result.issues]


async def _call(package: Path, document: dict[str, Any], tool: str, args: dict[str, Any]) -> tuple[Any, FakeUpstream]:
    catalogue = load_catalogue(package)
    fake = FakeUpstream(document)
    fake.reply(200, json_body=[{"id": "10000"}])
    runtime = HttpRuntime.create(catalogue, environ={}, transport=fake.transport())
    async with runtime:
        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, package))
        async with Client(server) as client:
            result = await client.call_tool(tool, args)
    return result, fake


ATTACHMENT = """
paths:
  /rest/api/3/issue/{issueIdOrKey}/attachments:
    post:
      operationId: addAttachment
      parameters:
        - {name: issueIdOrKey, in: path, required: true, schema: {type: string}}
      requestBody:
        required: true
        content:
          multipart/form-data:
            schema: {type: string, format: binary}
ENCODING
      responses:
        '200': {description: ok, content: {application/json: {schema: {type: array, items: {type: object}}}}}
"""


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("encoding", "part", "part_type"),
    [
        ("", "file", "image/png"),  # the name such APIs read; the data: URI types the part
        ("            encoding: {attachment: {contentType: text/plain}}", "attachment", "image/png"),
    ],
)
async def test_a_multipart_body_that_is_one_binary_string_is_sent_as_one_file_part(
    tmp_path: Path, encoding: str, part: str, part_type: str
) -> None:
    package, document, _ = _package(tmp_path, ATTACHMENT.replace("ENCODING", encoding))
    (entry,) = load_catalogue(package).tools
    assert entry.input_schema["required"] == ["issueIdOrKey", part]
    data = b"\x89PNG\r\n\x1a\n some bytes \x00\xff"
    value = f"data:image/png;name=shot.png;base64,{base64.b64encode(data).decode()}"
    result, fake = await _call(package, document, "addAttachment", {"issueIdOrKey": "KEY-1", part: value})
    assert not result.is_error, result.content
    (request,) = fake.requests
    content_type = request.header("content-type") or ""
    assert content_type.startswith("multipart/form-data")
    sent = parts(request.body, content_type)
    assert list(sent) == [part]
    ((got_type, got_bytes),) = sent[part]
    assert got_bytes == data and got_type == part_type
    assert 'filename="shot.png"' in request.body.decode("latin-1")


ADD_ITEM = """
paths:
  /items:
    post:
      operationId: addItem
      requestBody:
        required: true
        content:
          application/json:
            schema:
              oneOf:
                - {$ref: '#/components/schemas/Tag'}
                - {$ref: '#/components/schemas/Location'}
                - {$ref: '#/components/schemas/Reader'}
      responses:
        '201': {description: ok, content: {application/json: {schema: {type: object}}}}
components:
  schemas:
    Tag: {type: object, properties: {id: {type: string, readOnly: true}, time_created: {type: string, readOnly: true}}}
    Location: {type: object, properties: {id: {type: string, readOnly: true}}}
    Reader: {type: object, properties: {url: {type: string, readOnly: true}, self: {type: string, readOnly: true}}}
"""


@pytest.mark.anyio
async def test_a_one_of_of_identical_branches_warns_and_its_calls_work(tmp_path: Path) -> None:
    package, document, issues = _package(tmp_path, ADD_ITEM)
    (warning,) = [issue for issue in issues if "cannot be told apart" in issue]
    assert warning.startswith("warning: POST /items: /inputSchema/properties/body/oneOf:")
    result, fake = await _call(package, document, "addItem", {"body": {"name": "pallet 7"}})
    assert not result.is_error, result.content
    (request,) = fake.requests
    assert request.json() == {"name": "pallet 7"}


OBJECT = {"type": "object"}
CLOSED_A = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": False}
CLOSED_B = {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"], "additionalProperties": False}


@pytest.mark.parametrize(
    ("branches", "overlap"),
    [
        ([{"type": "object", "properties": {}}] * 3, (0, 1)),  # identical once readOnly properties are gone
        ([{"type": "number"}, {"type": "integer"}], (0, 1)),  # every integer is a number
        ([{"type": "string"}, {}], (0, 1)),  # an empty schema accepts anything
        ([{**OBJECT, "properties": {"a": {}}}, {**OBJECT, "properties": {"b": {}}}], (0, 1)),  # open, nothing required
        ([{**OBJECT, "required": ["a"]}, {**OBJECT, "required": ["a", "b"]}], (0, 1)),  # {a, b} matches both
        ([{"$ref": "#/$defs/Same"}, {"$ref": "#/$defs/Same"}], (0, 1)),  # through $defs
        ([{"type": "string"}, {"type": "integer"}], None),
        ([{"type": "string"}, {"type": "null"}], None),
        ([CLOSED_A, CLOSED_B], None),
        ([{**OBJECT, "required": ["a"]}, {**OBJECT, "required": ["b"]}], None),
        (
            [
                {**OBJECT, "properties": {"kind": {"const": "tag"}}, "required": ["kind"]},
                {**OBJECT, "properties": {"kind": {"const": "reader"}}, "required": ["kind"]},
            ],
            None,
        ),  # a discriminator tells them apart
        ([{"enum": ["a", "b"]}, {"enum": ["c"]}], None),
        ([{"type": "integer", "minimum": 10}, {"type": "integer", "maximum": 5}], None),
    ],
)
def test_one_of_branches_that_cannot_be_told_apart_are_found(branches: list[Any], overlap: Any) -> None:
    assert overlapping_branches(branches, {"Same": {"type": "object"}}) == overlap


def test_only_ambiguous_one_ofs_change_and_shared_schemas_are_not_mutated() -> None:
    clear = {"oneOf": [{"type": "string"}, {"type": "integer"}]}
    muddled = {"oneOf": [{"type": "number"}, {"type": "integer"}]}
    schema = {"type": "object", "properties": {"clear": clear, "muddled": muddled}, "$defs": {"D": muddled}}
    warnings: list[str] = []
    out = without_ambiguous_one_ofs(schema, lambda where, detail: warnings.append(where))
    assert out["properties"]["clear"] is clear
    assert out["properties"]["muddled"] == {"anyOf": muddled["oneOf"]} == out["$defs"]["D"]
    assert "oneOf" in muddled and "anyOf" not in muddled  # the shared input is untouched
    assert sorted(warnings) == ["/$defs/D/oneOf", "/properties/muddled/oneOf"]
