"""Cancellation on the real wire: `mcp-bridge serve` over stdio, a slow upstream on 127.0.0.1.

Raw JSON-RPC, so the test sees every line the server writes: after `notifications/cancelled`
the upstream request is closed and no response is ever written for the cancelled id.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from bridge.cli.demo_upstream import DEMO_API_KEY, serve_pet_store
from tests.golden import GENERATED_DIR, ROOT

pytestmark = pytest.mark.anyio


class RawClient:
    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._stdin = process.stdin
        self._stdout = BufferedByteReceiveStream(process.stdout)

    async def send(self, message: dict[str, Any]) -> None:
        await self._stdin.send((json.dumps(message) + "\n").encode())

    async def receive(self) -> dict[str, Any]:
        line = await self._stdout.receive_until(b"\n", 1 << 24)
        message: dict[str, Any] = json.loads(line)
        return message

    async def initialize(self) -> None:
        """The handshake: initialize (answered as id 1), then the initialized notification."""
        await self.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
        )
        assert (await self.receive())["id"] == 1
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


async def test_cancelled_call_closes_the_upstream_request_and_gets_no_response() -> None:
    async with serve_pet_store() as (port, store):
        env = {"PETSTORE_BASE_URL": f"http://127.0.0.1:{port}/v1", "PETSTORE_API_KEY": DEMO_API_KEY, "PATH": ""}
        command = [sys.executable, "-m", "bridge", "serve", str(GENERATED_DIR / "petstore")]
        async with await anyio.open_process(command, env=env, cwd=ROOT, stderr=None) as process:
            client = RawClient(process)
            try:
                with anyio.fail_after(20):
                    await client.initialize()
                    await client.send(
                        {
                            "jsonrpc": "2.0",
                            "id": 2,
                            "method": "tools/call",
                            "params": {"name": "waitForAdoption", "arguments": {"petId": 1}},
                        }
                    )
                    await store.waiting_started.wait()
                    await client.send(
                        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
                    )
                    await store.waiting_aborted.wait()
                    await client.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
                    reply = await client.receive()
                assert reply == {"jsonrpc": "2.0", "id": 3, "result": {}}
            finally:
                process.kill()
