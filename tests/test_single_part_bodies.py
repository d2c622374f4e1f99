"""Request bodies real specs declare in shapes no call could satisfy (issue 31): a multipart body that
is one binary string (Jira's addAttachment) is sent as one file part."""

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
