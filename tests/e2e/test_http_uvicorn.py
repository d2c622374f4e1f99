"""``mcp-bridge serve generated/petstore --transport http`` under uvicorn, as a subprocess.

The official Python client connects over streamable HTTP, both with the 2026 discovery (``auto``)
and with the initialize handshake (``legacy``), to a stateful and to a stateless bridge.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

from bridge.cli.demo_upstream import DEMO_API_KEY
from tests.e2e.conftest import Upstream, http_bridge

pytestmark = pytest.mark.anyio

CALL_TIMEOUT = 30.0
MODES = ("auto", "legacy")


async def test_http_bridge_lists_and_calls_tools_for_streamable_http_clients(
    upstream: Upstream, tmp_path: Path
) -> None:
    store = upstream.store
    async with http_bridge(upstream, tmp_path) as bridge:
        for mode in MODES:
            with anyio.fail_after(CALL_TIMEOUT):
                async with Client(bridge.url, mode=mode) as client:
                    listed = await client.list_tools()
                    assert len(listed.tools) == 6
                    read = await client.call_tool("getPet", {"petId": 2})
                    assert read.is_error is False
                    assert read.structured_content == store.pets[2]
                    missing = await client.call_tool("getPet", {"petId": 404})
                    assert missing.is_error is True
                    invalid = await client.call_tool("getPet", {"petId": 0})
                    assert invalid.is_error is True
        stderr = bridge.stderr()
    assert store.requests == [("GET", "/v1/pets/2"), ("GET", "/v1/pets/404")] * len(MODES)
    assert DEMO_API_KEY not in stderr


@pytest.mark.parametrize("mode", MODES)
async def test_cancelling_an_http_call_closes_its_upstream_request(
    upstream: Upstream, tmp_path: Path, mode: str
) -> None:
    store = upstream.store
    async with http_bridge(upstream, tmp_path) as bridge:
        with anyio.fail_after(CALL_TIMEOUT):
            async with Client(bridge.url, mode=mode) as client:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(client.call_tool, "waitForAdoption", {"petId": 1})
                    await store.waiting_started.wait()
                    tg.cancel_scope.cancel()
                await store.waiting_aborted.wait()
                after = await client.call_tool("getPet", {"petId": 3})
                assert after.structured_content == store.pets[3]


async def test_stateless_http_bridge_serves_clients_and_answers_get_with_405(
    upstream: Upstream, tmp_path: Path
) -> None:
    store = upstream.store
    async with http_bridge(upstream, tmp_path, "--stateless") as bridge:
        for mode in MODES:
            with anyio.fail_after(CALL_TIMEOUT):
                async with Client(bridge.url, mode=mode) as client:
                    listed = await client.list_tools()
                    assert len(listed.tools) == 6
                    created = await client.call_tool("createPet", {"name": f"Stateless {mode}"})
                    assert created.is_error is False
                    assert created.structured_content is not None
                    assert created.structured_content["name"] == f"Stateless {mode}"
        async with httpx.AsyncClient(timeout=5.0) as http:
            response = await http.get(bridge.url, headers={"Accept": "text/event-stream"})
            default_accept = await http.get(bridge.url)
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert default_accept.status_code == 405
    assert [pet["name"] for pet in store.pets.values()][-2:] == ["Stateless auto", "Stateless legacy"]
