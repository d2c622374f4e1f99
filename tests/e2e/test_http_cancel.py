"""A cancelled request gets no response over streamable HTTP, as over stdio (the reference page;
P42). A real ``serve --transport http`` subprocess, a raw client on the wire (the official client
drops a cancelled id, so it could not tell), the demo upstream holding the call open."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.e2e.conftest import Upstream, http_bridge

pytestmark = pytest.mark.anyio

ACCEPT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


def _events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ") and line[6:].strip()]


@pytest.mark.parametrize(
    ("flags", "call"),
    [
        ((), {"name": "waitForAdoption", "arguments": {"petId": 1}}),
        (("--mode", "code"), {"name": "run_query", "arguments": {"code": "await waitForAdoption(petId=1)"}}),
    ],
    ids=["tools", "code"],
)
async def test_a_cancelled_call_over_http_gets_no_response_and_the_session_goes_on(
    upstream: Upstream, tmp_path: Path, flags: tuple[str, ...], call: dict[str, Any]
) -> None:
    store = upstream.store
    async with http_bridge(upstream, tmp_path, *flags) as bridge:
        with anyio.fail_after(60):
            async with httpx.AsyncClient(timeout=30) as client:
                opened = await client.post(bridge.url, json=INIT, headers=ACCEPT)
                assert opened.status_code == 200
                headers = {
                    **ACCEPT,
                    "Mcp-Session-Id": opened.headers["mcp-session-id"],
                    "MCP-Protocol-Version": "2025-11-25",
                }
                note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                assert (await client.post(bridge.url, json=note, headers=headers)).status_code == 202
                seen: list[str] = []

                async def slow_call() -> None:
                    request = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call}
                    async with client.stream("POST", bridge.url, json=request, headers=headers) as response:
                        assert response.status_code == 200
                        async for chunk in response.aiter_text():
                            seen.append(chunk)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(slow_call)
                    await store.waiting_started.wait()
                    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}
                    assert (await client.post(bridge.url, json=cancel, headers=headers)).status_code == 202
                    await store.waiting_aborted.wait()  # the upstream request was closed
                # The cancelled request's stream ended (the task group is done) with nothing for id 3.
                ping = await client.post(
                    bridge.url, json={"jsonrpc": "2.0", "id": 4, "method": "ping"}, headers=headers
                )
    answered = [event for event in _events("".join(seen)) if event.get("id") == 3]
    assert answered == []  # no result and no -32800 "Request cancelled"
    assert _events(ping.text) == [{"jsonrpc": "2.0", "id": 4, "result": {}}]
    assert "Traceback" not in bridge.stderr()


async def test_the_official_client_cancels_over_http_and_goes_on(upstream: Upstream, tmp_path: Path) -> None:
    from mcp import Client, MCPError

    store = upstream.store
    async with http_bridge(upstream, tmp_path) as bridge:
        with anyio.fail_after(60):
            async with Client(bridge.url) as client:
                with pytest.raises(MCPError):  # its read timeout: it sends notifications/cancelled
                    await client.call_tool("waitForAdoption", {"petId": 1}, read_timeout_seconds=1.0)
                await store.waiting_aborted.wait()
                listed = await client.call_tool("listPets", {})
    assert not listed.is_error
