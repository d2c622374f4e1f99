"""The sandbox's workers: started by the first program, stopped with the server; cancellation."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from bridge.calls.runtime import HttpRuntime
from bridge.cli.demo_upstream import DEMO_API_KEY, serve_pet_store
from bridge.modes.sandbox import HostCalls, Sandbox
from bridge.serving.assemble import SandboxLifespan, build_bridge_server, build_registry
from bridge.serving.package import load_catalogue
from tests.bridge.modes.codemode.harness import ENV, UPSTREAM
from tests.golden import GENERATED_DIR, ROOT
from tests.test_cancel_wire import RawClient

pytestmark = pytest.mark.anyio


async def test_workers_start_on_the_first_program_and_stop_with_the_server() -> None:
    package = GENERATED_DIR / "petstore"
    catalogue = load_catalogue(package)
    async with HttpRuntime.create(catalogue, base_url=UPSTREAM, environ=ENV) as runtime:
        server = build_bridge_server(
            catalogue, build_registry(catalogue, runtime, None), mode="code", runtime=runtime, package_dir=package
        )
        assert isinstance(server.lifespan, SandboxLifespan)
        sandbox = server.lifespan.sandbox
        async with Client(server) as client:
            await client.list_tools()
            assert not sandbox.started
            result = await client.call_tool("run_query", {"code": "1 + 1"})
            assert result.structured_content == {"result": 2}
            assert sandbox.started
        assert not sandbox.started


async def test_closing_an_unstarted_sandbox_and_closing_twice_are_harmless() -> None:
    sandbox = Sandbox()
    await sandbox.aclose()
    value, _ = await sandbox.run("40 + 2", stubs="", prelude="", functions={}, calls=HostCalls(1))
    assert value == 42
    await sandbox.aclose()
    await sandbox.aclose()
    assert not sandbox.started


async def test_stdio_code_mode_runs_a_program_and_a_cancel_closes_its_request(tmp_path: Path) -> None:
    async with serve_pet_store() as (port, store):
        env = {"PETSTORE_BASE_URL": f"http://127.0.0.1:{port}/v1", "PETSTORE_API_KEY": DEMO_API_KEY, "PATH": ""}
        command = [sys.executable, "-m", "bridge", "serve", str(GENERATED_DIR / "petstore"), "--mode", "code"]
        async with await anyio.open_process(command, env=env, cwd=ROOT, stderr=None) as process:
            client = RawClient(process)
            try:
                with anyio.fail_after(30):
                    await client.initialize()
                    program = "pets = await listPets(limit=2)\nlen(pets)"
                    call = {"name": "run_query", "arguments": {"code": program}}
                    await client.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
                    reply = await client.receive()
                    assert reply["id"] == 2 and not reply["result"].get("isError"), reply
                    assert json.loads(reply["result"]["content"][0]["text"]) == {"result": 2}
                    slow = {"name": "run_query", "arguments": {"code": "await waitForAdoption(petId=1)"}}
                    await client.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": slow})
                    await store.waiting_started.wait()
                    await client.send(
                        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}
                    )
                    await store.waiting_aborted.wait()
                    await client.send({"jsonrpc": "2.0", "id": 4, "method": "ping"})
                    assert await client.receive() == {"jsonrpc": "2.0", "id": 4, "result": {}}
                await process.stdin.aclose()  # type: ignore[union-attr]
                with anyio.fail_after(10):
                    assert await process.wait() == 0  # the workers were stopped cleanly
            finally:
                if process.returncode is None:
                    process.kill()
