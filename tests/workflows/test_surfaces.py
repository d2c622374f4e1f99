"""Workflows on every surface: typed functions in code mode (package stubs and built ones), discovery's
call_operation, and one audit line per step."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bridge.contract.stubs import StubIndex
from bridge.modes.codemode import RUN_CODE, RUN_QUERY, SEARCH
from bridge.modes.discovery import CALL
from bridge.serving.package import load_catalogue
from generator.generate import build_catalogue, generate
from generator.options import GenerateOptions
from tests.bridge.fake_upstream import FakeUpstream, Recorded, Reply, make_reply
from tests.bridge.modes.codemode.harness import code_client, value
from tests.bridge.modes.codemode.harness import text as code_text
from tests.workflows.harness import ENV, UPSTREAM, arazzo, served, shop_upstream, text, write
from tests.workflows.test_runtime import ORDER_ITEM, _check

pytestmark = pytest.mark.anyio


def _shop() -> FakeUpstream:
    fake = shop_upstream()

    def handle(r: Recorded) -> Reply:
        if r.raw_path.startswith("/items"):
            body = {"id": 7, "name": "lamp", "price": 12.5}
            return make_reply(json_body=[body] if r.raw_path == "/items" else body)
        return make_reply(json_body={"id": 41, "status": "done"})

    fake.handler(handle)
    return fake


@pytest.mark.parametrize("packaged", [True, False], ids=["api.pyi", "built stubs"])
async def test_a_workflow_is_a_typed_function_of_code_mode(tmp_path: Path, packaged: bool) -> None:
    spec, flows = write(tmp_path, arazzo(ORDER_ITEM, _check([{"condition": "$statusCode == 200"}])))
    options = GenerateOptions(workflows=(str(flows),), mode="code")
    if packaged:
        generate(str(spec), tmp_path / "pkg", options)
        package, catalogue = tmp_path / "pkg", load_catalogue(tmp_path / "pkg")
        index = StubIndex.parse((package / "api.pyi").read_text())
        assert "order_item" in index and "check" in index
        assert "query: str" in (index.signature("order_item") or "")
    else:
        package, (catalogue, _) = None, build_catalogue(str(spec), options)
    fake = _shop()
    async with code_client(package, catalogue=catalogue, fake=fake, base_url=UPSTREAM, environ=ENV) as (client, _):
        found = (await client.call_tool(SEARCH, {"name": "order_item"})).structured_content
        assert found is not None and "async def order_item(" in found["stub"]
        ran = await client.call_tool(RUN_CODE, {"code": "r = await order_item(query='lamp')\nr['status']"})
        read = await client.call_tool(RUN_QUERY, {"code": "(await check())['name']"})
        refused = await client.call_tool(RUN_QUERY, {"code": "await order_item(query='lamp')"})
    assert value(ran) == "done" and value(read) == "lamp"
    assert refused.is_error and "order_item" in code_text(refused)


async def test_discovery_finds_and_calls_a_workflow(tmp_path: Path) -> None:
    spec, flows = write(tmp_path, arazzo(ORDER_ITEM))
    catalogue, _ = build_catalogue(str(spec), GenerateOptions(workflows=(str(flows),), mode="discovery"))
    from bridge.calls.runtime import HttpRuntime
    from bridge.serving.assemble import build_bridge_server, build_registry

    fake = _shop()
    runtime = HttpRuntime.create(catalogue, base_url=UPSTREAM, environ=ENV, transport=fake.transport())
    async with runtime:
        from mcp import Client

        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, None), runtime=runtime)
        async with Client(server) as client:
            result = await client.call_tool(CALL, {"name": "order-item", "arguments": {"query": "lamp"}})
    assert not result.is_error, text(result)
    assert '"status":"done"' in text(result).replace(" ", "")


async def test_each_step_writes_one_audit_line_naming_the_workflow_and_step(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="bridge.audit")
    async with served(tmp_path, arazzo(ORDER_ITEM), _shop()) as client:
        result = await client.call_tool("order-item", {"query": "lamp"})
    assert not result.is_error, text(result)
    lines = [r.getMessage() for r in caplog.records if r.name == "bridge.audit"]
    assert [line.split(" tool=")[1].split(" ")[0] for line in lines] == [
        "order-item/find",
        "order-item/order",
        "order-item/wait",
    ]
    assert all("lamp" not in line for line in lines)  # names and statuses only, never argument values
