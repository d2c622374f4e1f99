"""``mcp-bridge serve generated/petstore`` over stdio, driven by the official Python client.

The bridge runs as a real subprocess against the demo pet store API on a loopback socket. Every
test also checks that stdout carried only JSON-RPC (a stray line reaches the client's message
handler as an exception) and that the upstream API key never shows up on stderr.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from bridge.cli.demo_upstream import DEMO_API_KEY
from tests.e2e.conftest import PACKAGE, ROOT, Upstream, text_log

pytestmark = pytest.mark.anyio

CALL_TIMEOUT = 30.0


@asynccontextmanager
async def stdio_bridge(
    upstream: Upstream, tmp_path: Path, mode: str = "auto", package: Path = PACKAGE
) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bridge", "serve", str(package)],
        env=upstream.bridge_env(),
        cwd=str(ROOT),
    )
    stream_errors: list[Exception] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            stream_errors.append(message)

    with text_log(tmp_path / "bridge.stderr") as errlog:
        with anyio.fail_after(CALL_TIMEOUT):
            async with Client(stdio_client(params, errlog=errlog), mode=mode, message_handler=on_message) as client:
                yield client
        errlog.seek(0)
        stderr = errlog.read()
    assert stream_errors == [], f"stdout carried something other than JSON-RPC: {stream_errors!r}"
    assert DEMO_API_KEY not in stderr


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def test_stdio_bridge_lists_tools_with_annotations_output_schema_and_operation(
    upstream: Upstream, tmp_path: Path
) -> None:
    async with stdio_bridge(upstream, tmp_path) as client:
        listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == {"listPets", "createPet", "getPet", "deletePet", "waitForAdoption", "getInventory"}
    get_pet = tools["getPet"]
    assert get_pet.annotations is not None
    assert get_pet.annotations.read_only_hint is True
    assert get_pet.annotations.destructive_hint is False
    assert tools["deletePet"].annotations is not None and tools["deletePet"].annotations.destructive_hint is True
    assert get_pet.input_schema["required"] == ["petId"]
    assert get_pet.output_schema is not None and get_pet.output_schema["type"] == "object"
    assert tools["listPets"].output_schema is not None
    assert tools["listPets"].output_schema["properties"]["result"]["type"] == "array"
    assert get_pet.meta is not None and get_pet.meta["mcp-bridge/operation"] == "GET /pets/{petId}"
    assert upstream.store.requests == []


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_stdio_bridge_proxies_reads_writes_and_upstream_errors(
    upstream: Upstream, tmp_path: Path, mode: str
) -> None:
    store = upstream.store
    async with stdio_bridge(upstream, tmp_path, mode) as client:
        read = await client.call_tool("getPet", {"petId": 1})
        assert read.is_error is False
        assert read.structured_content == store.pets[1]

        write = await client.call_tool("createPet", {"name": "Bella", "tag": "dog"})
        assert write.is_error is False
        assert write.structured_content == {"id": 4, "name": "Bella", "tag": "dog", "status": "available"}
        assert store.pets[4]["name"] == "Bella"

        listed = await client.call_tool("listPets", {"status": "available"})
        assert listed.structured_content == {"result": [store.pets[1], store.pets[4]]}
        assert json.loads(text_of(listed)) == [store.pets[1], store.pets[4]]

        missing = await client.call_tool("getPet", {"petId": 999})
        assert missing.is_error is True
        assert "404" in text_of(missing)
        assert "no pet with id 999" in text_of(missing)

        store.api_key = "rotated-key"  # the bridge's key is now wrong: the upstream answers 401
        refused = await client.call_tool("listPets", {})
        assert refused.is_error is True
        assert "401" in text_of(refused)
        assert DEMO_API_KEY not in text_of(refused)
    assert store.requests == [
        ("GET", "/v1/pets/1"),
        ("POST", "/v1/pets"),
        ("GET", "/v1/pets"),
        ("GET", "/v1/pets/999"),
        ("GET", "/v1/pets"),
    ]


async def test_stdio_bridge_rejects_invalid_arguments_without_calling_the_upstream(
    upstream: Upstream, tmp_path: Path
) -> None:
    async with stdio_bridge(upstream, tmp_path) as client:
        wrong_type = await client.call_tool("getPet", {"petId": "x"})
        unknown_field = await client.call_tool("createPet", {"name": "Bella", "owner": "me"})
        missing = await client.call_tool("getPet", {})
    for result in (wrong_type, unknown_field, missing):
        assert result.is_error is True
        assert text_of(result).startswith("Invalid arguments for tool")
    assert "petId" in text_of(wrong_type)
    assert "owner" in text_of(unknown_field)
    assert upstream.store.requests == []


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_cancelling_a_stdio_call_closes_its_upstream_request(
    upstream: Upstream, tmp_path: Path, mode: str
) -> None:
    store = upstream.store
    async with stdio_bridge(upstream, tmp_path, mode) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "waitForAdoption", {"petId": 1})
            await store.waiting_started.wait()
            tg.cancel_scope.cancel()
        await store.waiting_aborted.wait()
        after = await client.call_tool("getPet", {"petId": 2})
        assert after.structured_content == store.pets[2]
    assert store.requests == [("GET", "/v1/pets/1/wait"), ("GET", "/v1/pets/2")]


STRAY_HOOKS = """
from __future__ import annotations

import os
import sys


def register(registry, runtime):
    @registry.tool("shout", description="Writes to stdout.")
    async def shout(args, ctx):
        print("a stray print", flush=True)
        sys.stdout.write("a stray write\\n")
        sys.stdout.flush()
        os.write(1, b"a stray os.write\\n")
        return "done"
"""


async def test_a_tools_stray_output_to_stdout_never_reaches_the_wire(upstream: Upstream, tmp_path: Path) -> None:
    package = tmp_path / "petstore"
    shutil.copytree(PACKAGE, package)
    (package / "hooks.py").write_text(STRAY_HOOKS, encoding="utf-8")
    async with stdio_bridge(upstream, tmp_path, package=package) as client:
        shouted = await client.call_tool("shout", {})
        read = await client.call_tool("getPet", {"petId": 1})
    assert text_of(shouted) == "done"
    assert read.structured_content == upstream.store.pets[1]
    stderr = (tmp_path / "bridge.stderr").read_text(encoding="utf-8")
    for line in ("a stray print", "a stray write", "a stray os.write"):
        assert line in stderr  # fd 1 pointed at stderr while serving; the wire had its own descriptor
