"""Parameters the operator binds (``bind:`` in ``--config``): out of the input schema, filled by the
bridge at call time, environment values treated as secrets (SECURITY.md P11, P26).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types
import pytest
import yaml
from click.testing import CliRunner
from mcp import Client

from bridge.calls.runtime import HttpRuntime
from bridge.cli import cli
from bridge.contract.catalogue import BoundValue
from bridge.request.build import build_request
from bridge.serving.assemble import build_bridge_server, build_registry
from bridge.serving.package import load_catalogue
from bridge.tools.errors import CredentialsError
from generator.emit.catalogue import http_binding
from generator.generate import generate
from generator.issues import Level
from generator.load.spec import load_spec
from generator.options import GenerateOptions
from generator.parse.api import parse_api
from tests.bridge.fake_upstream import FakeUpstream, make_reply
from tests.golden import spec_path

UPSTREAM = "http://upstream.test"
SECRET = "xoxb-CANARY-5f2a9c"
SPEC = spec_path("parameter_names")
CHAT_BIND = {"token": "env:SLACK_TOKEN", "api-version": "2024-01-01"}


def _parse(spec: str, bindings: dict[str, Any] | None = None, overrides: dict[str, Any] | None = None) -> Any:
    document = yaml.safe_load("openapi: 3.0.3\ninfo: {title: T, version: '1'}\n" + spec)
    options = GenerateOptions(bindings=bindings or {}, overrides=overrides or {})
    return parse_api(document, options=options, source_name="test.yaml")


ONE_OF_EACH = """
components:
  securitySchemes:
    key: {type: apiKey, in: query, name: api_key}
paths:
  /accounts/{account}/items:
    get:
      operationId: list
      parameters:
        - {name: account, in: path, required: true, schema: {type: string}}
        - {name: api-version, in: query, required: true, schema: {type: string}}
        - {name: Token, in: header, required: true, schema: {type: string}}
        - {name: sid, in: cookie, schema: {type: string}}
        - {name: api_key, in: query, schema: {type: string}}
        - {name: q, in: query, schema: {type: string}}
      responses: {"200": {description: ok}}
"""


@pytest.mark.parametrize(
    ("key", "spec", "location", "wire", "bound"),
    [
        ("account", "acme", "path", "account", BoundValue(value="acme")),
        ("api-version", "2024-01-01", "query", "api-version", BoundValue(value="2024-01-01")),
        ("api-version", 7, "query", "api-version", BoundValue(value="7")),
        ("api-version", True, "query", "api-version", BoundValue(value="true")),
        ("token", "env:CHAT_TOKEN", "header", "Token", BoundValue(env="CHAT_TOKEN")),  # header names in any case
        ("sid", "env:SID", "cookie", "sid", BoundValue(env="SID")),
        ("api_key", "env:KEY", "query", "api_key", BoundValue(env="KEY")),  # a slot no scheme of the op fills
    ],
)
def test_a_bound_parameter_of_any_location_leaves_the_input_schema(
    key: str, spec: Any, location: str, wire: str, bound: BoundValue
) -> None:
    (op,) = _parse(ONE_OF_EACH, {key: spec}).operations
    param = next(p for p in http_binding(op).params if p.wire == wire and p.location == location)
    assert param.bound == bound and param.arg == ""
    arg_names = {p.arg for p in http_binding(op).params if p.bound is None}
    assert set(op.arguments["properties"]) == arg_names and wire not in op.arguments["properties"]
    assert set(op.arguments.get("required", [])) <= arg_names


def test_an_operations_own_bind_replaces_the_global_one_for_that_operation() -> None:
    (op,) = _parse(ONE_OF_EACH, {"api-version": "1"}, {"list": {"bind": {"api-version": "env:V"}}}).operations
    (param,) = [p for p in http_binding(op).params if p.wire == "api-version"]
    assert param.bound == BoundValue(env="V")


@pytest.mark.parametrize(
    ("bindings", "overrides", "where"),
    [
        ({"nope": "x"}, {}, "config: bind"),
        ({}, {"list": {"bind": {"nope": "x"}}}, "GET /accounts/{account}/items"),
        ({"q": "env:not a name"}, {}, "config: bind"),
        ({"q": ["a", "b"]}, {}, "config: bind"),
        ({}, {"list": {"bind": {"q": {"a": 1}}}}, "GET /accounts/{account}/items"),
    ],
)
def test_a_bind_that_names_nothing_or_cannot_be_used_is_a_warning(
    bindings: dict[str, Any], overrides: dict[str, Any], where: str
) -> None:
    api = _parse(ONE_OF_EACH, bindings, overrides)
    # (The unbound `Token` header is left out, with the one credentials warning.)
    assert [(i.level, i.where) for i in api.issues if i.where != "credentials"] == [(Level.WARNING, where)]
    (op,) = api.operations
    assert "q" in op.arguments["properties"]  # nothing was bound


def test_headers_no_argument_may_set_cannot_be_bound_either() -> None:
    spec = ONE_OF_EACH.replace("{name: q, in: query", "{name: Host, in: header")
    api = _parse(spec, {}, {"list": {"bind": {"Host": "evil.example"}}})
    (op,) = api.operations
    assert all(p.wire != "Host" for p in http_binding(op).params)
    assert [i.where for i in api.issues if i.where != "credentials"] == ["GET /accounts/{account}/items"]


def test_build_request_takes_bound_values_from_the_binding_and_the_environment_never_the_arguments() -> None:
    (op,) = _parse(ONE_OF_EACH, {"account": "acme", "api-version": "2024", "token": "env:T", "sid": "env:S"}).operations
    args = {"account": "evil", "api-version": "0", "Token": "evil", "": "evil", "q": "x"}
    request = build_request(http_binding(op), args, base_url=UPSTREAM, bound={"T": SECRET, "S": "s1"})
    assert request.path == "/accounts/acme/items"
    assert request.query == (("api-version", "2024"), ("q", "x"))
    assert ("Token", SECRET) in request.headers and request.cookies == (("sid", "s1"),)
    with pytest.raises(CredentialsError) as missing:
        build_request(http_binding(op), args, base_url=UPSTREAM, bound={"T": SECRET})
    assert "S" in str(missing.value) and SECRET not in str(missing.value)


# ---------------------------------------------------------------------------------- end to end


@asynccontextmanager
async def served(
    tmp_path: Path, environ: dict[str, str], bind: dict[str, Any]
) -> AsyncIterator[tuple[Client, FakeUpstream, Path]]:
    package = tmp_path / "pkg"
    generate(str(SPEC), package, GenerateOptions(bindings=bind))
    document = dict(load_spec(str(SPEC)).document)
    document["servers"] = [{"url": UPSTREAM}]
    fake = FakeUpstream(document)
    catalogue = load_catalogue(package)  # what `serve PACKAGE` reads
    runtime = HttpRuntime.create(catalogue, base_url=UPSTREAM, environ=environ, transport=fake.transport())
    async with runtime:
        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, package))
        async with Client(server) as client:
            yield client, fake, package


def _text(result: mcp_types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))


@pytest.mark.anyio
async def test_a_bound_secret_reaches_the_upstream_and_is_redacted_from_everything_the_model_sees(
    tmp_path: Path,
) -> None:
    async with served(tmp_path, {"SLACK_TOKEN": SECRET}, CHAT_BIND) as (client, fake, _):
        fake.handler(lambda r: make_reply(400, json_body={"error": "bad", "echo": r.header("token")}))
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        refused = await client.call_tool("chat_postMessage", {"channel": "C1", "token": "model-chosen"})
        result = await client.call_tool("chat_postMessage", {"channel": "C1"})
    schema = tools["chat_postMessage"].input_schema
    assert set(schema["properties"]) == {"channel"} and schema["required"] == ["channel"]
    assert refused.is_error and len(fake.requests) == 1  # an unknown argument: nothing sent
    (sent,) = fake.requests
    assert sent.header("token") == SECRET and sent.query_pairs == [("api-version", "2024-01-01"), ("channel", "C1")]
    assert result.is_error and SECRET not in _text(result) + json.dumps(result.model_dump(mode="json"))
    assert fake.violations == []


@pytest.mark.anyio
async def test_an_unset_bound_variable_fails_the_call_like_a_missing_credential(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="bridge.http_tools"):
        async with served(tmp_path, {}, CHAT_BIND) as (client, fake, _):
            result = await client.call_tool("chat_postMessage", {"channel": "C1"})
    assert result.is_error and "SLACK_TOKEN" in _text(result) and fake.requests == []
    assert any("SLACK_TOKEN" in record.getMessage() for record in caplog.records)


def test_the_cli_config_binds_parameters_and_the_package_records_and_documents_them(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump({"bind": CHAT_BIND, "operations": {"listItems": {"bind": {"limit": 10}}}}), encoding="utf-8"
    )
    out = tmp_path / "pkg"
    result = CliRunner().invoke(cli, ["generate", str(SPEC), "-o", str(out), "--config", str(config)])
    assert result.exit_code == 0, result.output
    tools = {entry.name: entry for entry in load_catalogue(out).tools}
    chat = {p.wire: p.bound for p in tools["chat_postMessage"].binding.params}
    assert chat == {
        "token": BoundValue(env="SLACK_TOKEN"),
        "api-version": BoundValue(value="2024-01-01"),
        "channel": None,
    }
    assert [p.bound for p in tools["listItems"].binding.params if p.wire == "limit"] == [BoundValue(value="10")]
    assert "`SLACK_TOKEN`" in (out / "README.md").read_text(encoding="utf-8")
