"""Real specs' quirks, made harmless (issue 18): defaults that break their own schema, responses
mislabelled as gzip, properties required only through ``dependentRequired``, nameless parameters."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import mcp_types
import pytest
import yaml
from mcp import Client

from bridge.calls.runtime import HttpRuntime
from bridge.serving.assemble import build_bridge_server, build_registry
from bridge.serving.package import load_catalogue
from generator.generate import generate
from generator.options import GenerateOptions
from tests.bridge.fake_upstream import FakeUpstream
from tests.security.fault_server import Fault, FaultServer


def _package(tmp_path: Path, body: str, version: str = "3.0.3") -> tuple[Path, dict[str, Any], list[str]]:
    text = (
        f"openapi: {version}\ninfo: {{title: Quirks, version: '1'}}\nservers: [{{url: 'http://upstream.test'}}]\n"
        + body
    )
    document = yaml.safe_load(text)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(document), encoding="utf-8")
    result = generate(str(spec), tmp_path / "pkg", GenerateOptions())
    return tmp_path / "pkg", document, [str(issue) for issue in result.issues]


def _text(result: mcp_types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))


# ------------------------------------------------------------ 6. defaults that break their schema


COMPLETIONS = """
components:
  schemas:
    CreateCompletionRequest:
      type: object
      required: [model]
      properties:
        model: {type: string}
        max_tokens: {type: integer, nullable: true, default: inf}
        temperature: {type: number, default: 1, minimum: 0, maximum: 2}
        stop: {type: string, nullable: true, default: null}
        since: {type: string, format: date, default: ''}
        mode: {type: string, enum: [fast, slow], default: medium}
        n: {type: integer, minimum: 1, default: 0}
paths:
  /completions:
    post:
      operationId: createCompletion
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: '#/components/schemas/CreateCompletionRequest'}}}
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
"""


@pytest.mark.anyio
async def test_a_default_that_breaks_its_schema_is_neither_advertised_nor_applied(tmp_path: Path) -> None:
    package, document, issues = _package(tmp_path, COMPLETIONS)
    catalogue = load_catalogue(package)
    (entry,) = catalogue.tools
    props = entry.input_schema["properties"]
    assert "default" not in props["max_tokens"] and "default" not in props["since"]
    assert "default" not in props["mode"] and "default" not in props["n"]
    assert props["temperature"]["default"] == 1 and props["stop"]["default"] is None  # good ones stay
    assert sum("/default: " in issue for issue in issues) == 4  # the warnings stay
    fake = FakeUpstream(document)
    fake.reply(200, json_body={"id": "c1"})
    runtime = HttpRuntime.create(catalogue, environ={}, transport=fake.transport())
    async with runtime:
        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, package))
        async with Client(server) as client:
            listed = (await client.list_tools()).tools
            result = await client.call_tool("createCompletion", {"model": "m"})
    assert "default" not in listed[0].input_schema["properties"]["max_tokens"]
    assert not result.is_error and json.loads(fake.requests[0].body) == {"model": "m"}


def test_examples_that_break_their_schema_are_left_out(tmp_path: Path) -> None:
    body = COMPLETIONS.replace("format: date, default: ''", "format: date, examples: ['', '2024-01-31']")
    body = body.replace("minimum: 1, default: 0", "minimum: 1, examples: [0, 2]").replace(", nullable: true", "")
    package, _, _ = _package(tmp_path, body, "3.1.0")
    props = load_catalogue(package).tools[0].input_schema["properties"]
    assert props["since"]["examples"] == ["2024-01-31"] and props["n"]["examples"] == [2]


# ------------------------------------------------------------ 7. messages one can act on


RAW = """
paths:
  /raw:
    get:
      operationId: raw
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
"""


@pytest.mark.anyio
async def test_a_body_mislabelled_as_gzip_names_the_cause_and_is_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    package, _, _ = _package(tmp_path, RAW)
    catalogue = load_catalogue(package)
    fault = Fault.ok(b'{"plain": "json, not gzip"}', headers=(("Content-Encoding", "gzip"),))
    with caplog.at_level(logging.WARNING):
        async with FaultServer(fault) as server:
            runtime = HttpRuntime.create(catalogue, base_url=server.url, environ={})
            async with runtime:
                mcp_server = build_bridge_server(catalogue, build_registry(catalogue, runtime, package))
                async with Client(mcp_server) as client:
                    first = await client.call_tool("raw", {})
                    second = await client.call_tool("raw", {})
    for result in (first, second):
        assert result.is_error and "Content-Encoding: gzip, but the body is not gzip data" in _text(result)
    logged = [r for r in caplog.records if "could not be decoded" in r.getMessage()]
    assert len(logged) == 1 and "GET /raw" in logged[0].getMessage()


MESSAGES = """
paths:
  /Messages:
    post:
      operationId: createMessage
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              required: [To, Body]
              properties:
                To: {type: string}
                Body: {type: string}
                MediaUrl: {type: string}
      responses: {"201": {description: ok, content: {application/json: {schema: {type: object}}}}}
"""


@pytest.mark.anyio
async def test_a_property_required_only_with_another_says_so(tmp_path: Path) -> None:
    package, document, _ = _package(tmp_path, MESSAGES)
    catalogue = load_catalogue(package)
    fake = FakeUpstream(document)
    runtime = HttpRuntime.create(catalogue, environ={}, transport=fake.transport())
    async with runtime:
        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, package))
        async with Client(server) as client:
            result = await client.call_tool("createMessage", {"Body": "hello"})
    assert result.is_error and "To: To is required when Body is given" in _text(result), _text(result)
    assert fake.requests == []


NOTES = """
paths:
  /v1/pages/{id}:
    get:
      operationId: getPage
      parameters:
        - {in: header, name: Notion-Version, schema: {type: string}}
        - {in: header, name: '', schema: {type: string}}
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
"""


@pytest.mark.anyio
async def test_a_nameless_parameter_costs_only_itself_not_the_operation(tmp_path: Path) -> None:
    package, _, issues = _package(tmp_path, NOTES)
    catalogue = load_catalogue(package)
    (entry,) = catalogue.tools
    assert set(entry.input_schema["properties"]) - {"fields"} == {"id", "Notion-Version"}
    assert any("GET /v1/pages/{id}: parameters [1] (in: header) has no name" in issue for issue in issues), issues
    fake = FakeUpstream()
    fake.reply(200, json_body={"object": "page"})
    runtime = HttpRuntime.create(catalogue, environ={}, transport=fake.transport())
    async with runtime:
        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, package))
        async with Client(server) as client:
            result = await client.call_tool("getPage", {"id": "p1", "Notion-Version": "2022-06-28"})
    assert not result.is_error and fake.requests[0].raw_path == "/v1/pages/p1"
    assert fake.requests[0].header("notion-version") == "2022-06-28"
