"""Azure Swagger 2.0 specs (issue 31): every ``x-ms-paths`` operation is a tool that reaches its
path with its constant query, ``x-ms-parameterized-host`` is the server, ``api-version`` and the
one-value ``op`` are sent by the bridge, and ``--server N`` chooses another of the spec's servers."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from bridge.request.base_url import resolve_base_url
from bridge.request.build import build_request
from bridge.serving.assemble import ServeOptions, build_bridge_server, build_registry, build_runtime
from bridge.serving.package import load_catalogue
from bridge.tools.errors import ConfigurationError, InvalidArgumentsError
from generator.generate import generate
from generator.options import GenerateOptions
from tests.bridge.fake_upstream import FakeUpstream

HERE = Path(__file__).resolve().parent
DATALAKE = HERE / "datalake_filesystem.json"

# tool → (arguments, method, raw path, query pairs that must reach the upstream)
X_MS_PATH_CALLS: dict[str, tuple[dict[str, Any], str, str, list[tuple[str, str]]]] = {
    "FileSystem_GetFileStatus": ({"path": "a.txt"}, "GET", "/webhdfs/v1/a.txt", [("op", "GETFILESTATUS")]),
    "FileSystem_ListFileStatus": (
        {"path": "dir", "listSize": 5},
        "GET",
        "/webhdfs/v1/dir",
        [("op", "LISTSTATUS"), ("listSize", "5")],
    ),
    "FileSystem_Mkdirs": ({"path": "new"}, "PUT", "/webhdfs/v1/new", [("op", "MKDIRS")]),
    "FileSystem_Delete": ({"path": "old", "recursive": True}, "DELETE", "/webhdfs/v1/old", [("op", "DELETE")]),
    "FileSystem_Rename": (
        {"path": "a", "destination": "/b"},
        "PUT",
        "/webhdfs/v1/a",
        [("op", "RENAME"), ("destination", "/b")],
    ),
    "FileSystem_GetContentSummary": ({"path": "d"}, "GET", "/webhdfs/v1/d", [("op", "GETCONTENTSUMMARY")]),
    "FileSystem_ConcurrentAppend": (
        {"path": "log", "body": "aGk="},
        "POST",
        "/webhdfs/va/log",
        [("op", "CONCURRENTAPPEND")],
    ),
    "FileSystem_SetFileExpiry": (
        {"path": "f", "expiryOption": "NeverExpire"},
        "PUT",
        "/WebHdfsExt/f",
        [("op", "SETEXPIRY"), ("expiryOption", "NeverExpire")],
    ),
}


def _generate(tmp_path: Path, spec: Path | dict[str, Any]) -> tuple[Path, list[str]]:
    if isinstance(spec, dict):
        path = tmp_path / "spec.json"
        path.write_text(json.dumps(spec), encoding="utf-8")
        spec = path
    result = generate(str(spec), tmp_path / "pkg", GenerateOptions())
    return tmp_path / "pkg", [str(issue) for issue in result.issues]


def test_every_x_ms_paths_operation_becomes_a_tool(tmp_path: Path) -> None:
    package, issues = _generate(tmp_path, DATALAKE)
    tools = {tool.name: tool for tool in load_catalogue(package).tools}
    assert set(tools) == set(X_MS_PATH_CALLS)
    for tool in tools.values():  # the constants are the bridge's, never the model's
        assert "op" not in tool.input_schema["properties"]
        assert "api-version" not in tool.input_schema["properties"]
    assert any("'api-version' is sent as '2016-11-01'" in issue and issue.startswith("note:") for issue in issues)


@pytest.mark.anyio
async def test_each_x_ms_paths_operation_reaches_its_path_with_its_constant_query(tmp_path: Path) -> None:
    package, _ = _generate(tmp_path, DATALAKE)
    catalogue = load_catalogue(package)
    fake = FakeUpstream()
    options = ServeOptions(server_variables={"accountName": "myaccount"})
    runtime = build_runtime(catalogue, options, environ={}, transport=fake.transport())
    async with runtime:
        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, package))
        async with Client(server) as client:
            for name, (arguments, *_rest) in X_MS_PATH_CALLS.items():
                result = await client.call_tool(name, arguments)
                assert not result.is_error, (name, result.content)
    assert len(fake.requests) == len(X_MS_PATH_CALLS)
    for request, (name, (_, method, path, pairs)) in zip(fake.requests, X_MS_PATH_CALLS.items(), strict=True):
        assert (request.method, request.raw_path) == (method, path), name
        sent = request.query_pairs
        assert ("api-version", "2016-11-01") in sent, name
        for pair in pairs:
            assert pair in sent, (name, pair, sent)
        assert [key for key, _ in sent].count("op") == 1, name
        assert request.header("host") == "myaccount.azuredatalakestore.net", name


def test_the_parameterized_host_needs_its_account_and_says_how_to_set_it(tmp_path: Path) -> None:
    package, _ = _generate(tmp_path, DATALAKE)
    catalogue = load_catalogue(package)
    assert catalogue.servers[0].url == "https://{accountName}.{adlsFileSystemDnsSuffix}"
    with pytest.raises(ConfigurationError, match="--server-var accountName=VALUE"):
        build_runtime(catalogue, ServeOptions(), environ={})
    env = {f"{catalogue.env_prefix}_SERVER_ACCOUNTNAME": "fromenv"}
    runtime = build_runtime(catalogue, ServeOptions(), environ=env)
    assert str(runtime.base_url) == "https://fromenv.azuredatalakestore.net"


TWO_SERVERS: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Two servers", "version": "1"},
    "servers": [
        {"url": "https://azure.local"},
        {
            "url": "https://{accountName}.{suffix}/v1",
            "variables": {
                "accountName": {"default": "none", "description": "The account."},
                "suffix": {"default": "azuredatalakestore.net"},
            },
        },
    ],
    "paths": {
        "/things": {
            "get": {
                "operationId": "listThings",
                "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {}}}}},
            }
        }
    },
}


@pytest.mark.anyio
async def test_the_second_server_is_reached_with_server_2_and_its_variables(tmp_path: Path) -> None:
    package, _ = _generate(tmp_path, TWO_SERVERS)
    catalogue = load_catalogue(package)
    fake = FakeUpstream()
    env = {f"{catalogue.env_prefix}_SERVER_ACCOUNTNAME": "acct"}
    runtime = build_runtime(catalogue, ServeOptions(server=2), environ=env, transport=fake.transport())
    async with runtime:
        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, package))
        async with Client(server) as client:
            result = await client.call_tool("listThings", {})
    assert not result.is_error
    (request,) = fake.requests
    assert request.header("host") == "acct.azuredatalakestore.net" and request.raw_path == "/v1/things"


def test_a_variable_of_another_server_names_the_server_to_choose(tmp_path: Path) -> None:
    package, _ = _generate(tmp_path, TWO_SERVERS)
    catalogue = load_catalogue(package)
    with pytest.raises(ConfigurationError, match="choose it with --server 2"):
        build_runtime(catalogue, ServeOptions(server_variables={"accountName": "acct"}), environ={})
    with pytest.raises(ConfigurationError, match="--server 3 is not one of the spec's servers"):
        build_runtime(catalogue, ServeOptions(server=3), environ={})
    readme = (package / "README.md").read_text(encoding="utf-8")
    assert "`--server 2`; variables `{accountName}`, `{suffix}`" in readme


def test_serve_takes_server_from_the_command_line_and_the_environment() -> None:
    from bridge.cli.serve import serve

    option = next(param for param in serve.params if param.name == "server_number")
    assert option.envvar == "MCP_BRIDGE_SERVER"
    assert option.type.convert("2", None, None) == 2


def _param(**node: Any) -> dict[str, Any]:
    return {"name": "api-version", "in": "query", "required": True, "schema": {"type": "string"}, **node}


@pytest.mark.parametrize(
    ("node", "info_version", "sent"),
    [
        (_param(), "2016-11-01", "2016-11-01"),  # Azure: info.version is the API version
        (_param(), "2023-05-01-preview", "2023-05-01-preview"),
        (_param(), "1.0", None),  # not an API version: the model is asked
        (_param(example="2020-01-01"), "1.0", "2020-01-01"),  # every example agrees
        (_param(examples={"a": {"value": "2020-01-01"}, "b": {"value": "2021-01-01"}}), "2021-01-01", None),
        (_param(schema={"type": "string", "enum": ["2022-02-02"]}), "2016-11-01", "2022-02-02"),
        (_param(schema={"type": "string", "enum": ["a", "b"]}), "2016-11-01", None),
        (_param(required=False), "2016-11-01", None),  # optional: left to the model
        ({"name": "op", "in": "query", "required": True, "schema": {"type": "string", "enum": ["OPEN"]}}, "", "OPEN"),
        ({"name": "read", "in": "query", "required": True, "schema": {"type": "boolean", "enum": [True]}}, "", "true"),
        ({"name": "op", "in": "query", "schema": {"type": "string", "enum": ["OPEN"]}}, "", None),
        ({"name": "key", "in": "cookie", "required": True, "schema": {"enum": ["x"]}}, "", None),
    ],
)
def test_a_required_parameter_with_one_value_the_spec_states_is_a_constant(
    node: dict[str, Any], info_version: str, sent: str | None
) -> None:
    from generator.parse.constants import spec_constant

    found = spec_constant(node, info_version)
    assert (found[0].value if found else None) == sent


def test_a_required_api_version_the_spec_cannot_fix_keeps_its_examples(tmp_path: Path) -> None:
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "Versions", "version": "1.0"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/things": {
                "get": {
                    "operationId": "listThings",
                    "parameters": [
                        {
                            "name": "api-version",
                            "in": "query",
                            "required": True,
                            "schema": {"type": "string"},
                            "examples": {"old": {"value": "2020-01-01"}, "new": {"value": "2024-01-01"}},
                        }
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    package, _ = _generate(tmp_path, spec)
    (tool,) = load_catalogue(package).tools
    assert tool.input_schema["required"] == ["api-version"]
    assert tool.input_schema["properties"]["api-version"]["examples"][0] in ("2020-01-01", "2024-01-01")


HOSTILE_HOST_TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["evil.example", "a.b", "x/..", "@evil.example", "evil.example:443", "%2e", "..", "/", "\\", "#"]),
    st.text(alphabet="./\\%@:#?2eE", max_size=12),
)


@functools.cache
def _datalake_runtime_inputs() -> tuple[Any, httpx.URL]:
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="datalake-"))
    package, _ = _generate(folder, DATALAKE)
    catalogue = load_catalogue(package)
    base = resolve_base_url(catalogue.servers, override=None, variables={"accountName": "myaccount"})
    return catalogue, base


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_no_argument_moves_a_parameterized_host_call_to_another_host(data: st.DataObject) -> None:
    """P83: the host template's parameters are not arguments; no argument value changes the host."""
    catalogue, base = _datalake_runtime_inputs()
    entry = data.draw(st.sampled_from(catalogue.tools), label="tool")
    args: dict[str, Any] = {"path": "a", "destination": "/b", "body": "aGk=", "expiryOption": "NeverExpire"}
    for param in entry.binding.params:
        if param.arg and param.location in ("path", "query"):
            args[param.arg] = data.draw(HOSTILE_HOST_TEXT, label=param.arg)
    args["accountName"] = data.draw(HOSTILE_HOST_TEXT, label="accountName")  # not an argument: ignored
    try:
        request = build_request(entry.binding, args, base_url=base, operation=entry.name)
    except InvalidArgumentsError:
        return
    assert request.url.host == "myaccount.azuredatalakestore.net" and request.url.scheme == "https"
    assert request.url.port is None


@pytest.mark.anyio
async def test_an_account_name_argument_is_refused_and_nothing_is_sent(tmp_path: Path) -> None:
    package, _ = _generate(tmp_path, DATALAKE)
    catalogue = load_catalogue(package)
    fake = FakeUpstream()
    runtime = build_runtime(
        catalogue, ServeOptions(server_variables={"accountName": "myaccount"}), environ={}, transport=fake.transport()
    )
    async with runtime:
        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, package))
        async with Client(server) as client:
            result = await client.call_tool("FileSystem_GetFileStatus", {"path": "a", "accountName": "evil.example"})
    assert result.is_error and fake.requests == []


@pytest.mark.parametrize(
    ("extension", "expected_url", "expected_variables"),
    [
        (  # the scheme prefix by default, with basePath
            {"hostTemplate": "{vault}.vault.azure.net", "parameters": [{"name": "vault", "in": "path"}]},
            "https://{vault}.vault.azure.net/api",
            {"vault": {"default": ""}},
        ),
        (  # useSchemePrefix false: the template carries the scheme (Cognitive Services' {Endpoint})
            {
                "hostTemplate": "{Endpoint}/text/analytics/v3.0",
                "useSchemePrefix": False,
                "parameters": [{"$ref": "#/parameters/Endpoint"}],
            },
            "{Endpoint}/text/analytics/v3.0/api",
            {"Endpoint": {"default": "", "description": "Supported endpoint (https://westus.api.cognitive.com)."}},
        ),
        (  # a referenced parameter's default and enum; a template name no parameter declares
            {"hostTemplate": "{region}.{suffix}", "parameters": [{"$ref": "#/parameters/Region"}]},
            "https://{region}.{suffix}/api",
            {"region": {"default": "eu", "enum": ["eu", "us"]}, "suffix": {"default": ""}},
        ),
    ],
)
def test_a_parameterized_host_becomes_a_server_with_variables(
    extension: dict[str, Any], expected_url: str, expected_variables: dict[str, Any]
) -> None:
    from generator.load import swagger2

    document = {
        "swagger": "2.0",
        "info": {"title": "Hosts", "version": "1"},
        "basePath": "/api",
        "x-ms-parameterized-host": extension,
        "paths": {},
        "parameters": {
            "Endpoint": {
                "name": "Endpoint",
                "in": "path",
                "required": True,
                "type": "string",
                "description": "Supported endpoint (https://westus.api.cognitive.com).",
                "x-ms-skip-url-encoding": True,
            },
            "Region": {"name": "region", "in": "path", "type": "string", "default": "eu", "enum": ["eu", "us"]},
        },
    }
    converted, issues = swagger2.convert(document)
    assert converted["servers"] == [{"url": expected_url, "variables": expected_variables}]
    undeclared = [issue for issue in issues if "which no parameter declares" in issue.detail]
    assert len(undeclared) == ("suffix" in expected_variables)


def test_the_constant_note_never_fails_a_strict_generation(tmp_path: Path) -> None:
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "Strict", "version": "2024-01-01"},
        "servers": [{"url": "https://management.example.com"}],
        "security": [{"key": []}],
        "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Key"}}},
        "paths": {
            "/things": {
                "get": {
                    "operationId": "listThings",
                    "parameters": [
                        {"name": "api-version", "in": "query", "required": True, "schema": {"type": "string"}}
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    result = generate(str(path), tmp_path / "pkg", GenerateOptions(strict=True))
    assert [issue.level.value for issue in result.issues] == ["note"]
    (tool,) = load_catalogue(tmp_path / "pkg").tools
    assert "api-version" not in tool.input_schema["properties"]
