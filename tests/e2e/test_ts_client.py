"""The official TypeScript SDK client (``@modelcontextprotocol/sdk``, pinned) against the bridge.

``ts_client.mjs`` connects, lists the tools, calls one and prints a JSON summary; the tests check
that the ``structuredContent`` it saw is exactly what the upstream API returned.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from bridge.cli.demo_upstream import DEMO_API_KEY
from tests.e2e.conftest import ROOT, Upstream, bridge_command, http_bridge, subprocess_env
from tests.node_tools import ensure_node_modules

pytestmark = [pytest.mark.anyio, pytest.mark.node]

SCRIPT = Path(__file__).with_name("ts_client.mjs")
NODE_TIMEOUT = 45.0


@pytest.fixture
def ts_client(tmp_path: Path) -> Path:
    """ts_client.mjs copied next to a node_modules symlink, so its bare imports resolve (ESM ignores NODE_PATH)."""
    node_modules = ensure_node_modules()
    workdir = tmp_path / "ts"
    workdir.mkdir()
    (workdir / "node_modules").symlink_to(node_modules, target_is_directory=True)
    script = workdir / SCRIPT.name
    shutil.copyfile(SCRIPT, script)
    return script


async def run_ts_client(script: Path, *args: str, tool: str, arguments: dict[str, Any], env: dict[str, str]) -> Any:
    node = shutil.which("node")
    assert node is not None, "Node.js is needed for this test"
    run_env = subprocess_env({**env, "MCP_TOOL": tool, "MCP_TOOL_ARGS": json.dumps(arguments)})
    with anyio.fail_after(NODE_TIMEOUT):
        done = await anyio.run_process([node, str(script), *args], cwd=ROOT, env=run_env, check=False)
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 0, stderr
    assert DEMO_API_KEY not in stderr
    lines = done.stdout.decode().splitlines()
    assert len(lines) == 1, lines
    return json.loads(lines[0])


async def test_typescript_client_calls_the_stdio_bridge(upstream: Upstream, ts_client: Path) -> None:
    summary = await run_ts_client(
        ts_client,
        "stdio",
        *bridge_command(),
        tool="getPet",
        arguments={"petId": 2},
        env=upstream.bridge_env(),
    )
    assert summary["serverName"] == "petstore"
    assert summary["toolCount"] == 6
    assert summary["isError"] is False
    assert summary["structuredContent"] == upstream.store.pets[2]
    assert json.loads(summary["text"]) == upstream.store.pets[2]
    assert upstream.store.requests == [("GET", "/v1/pets/2")]


@pytest.mark.parametrize("stateless", [False, True], ids=["stateful", "stateless"])
async def test_typescript_client_calls_the_http_bridge(
    upstream: Upstream, ts_client: Path, tmp_path: Path, stateless: bool
) -> None:
    flags = ("--stateless",) if stateless else ()
    async with http_bridge(upstream, tmp_path, *flags) as bridge:
        summary = await run_ts_client(
            ts_client,
            "http",
            bridge.url,
            tool="createPet",
            arguments={"name": "Ts", "tag": "lizard", "status": "pending"},
            env={},
        )
    created = upstream.store.pets[4]
    assert created == {"id": 4, "name": "Ts", "tag": "lizard", "status": "pending"}
    assert summary["toolCount"] == 6
    assert summary["isError"] is False
    assert summary["structuredContent"] == created
    assert summary["protocolVersion"] == "2025-11-25"


async def test_typescript_client_sees_an_upstream_404_as_a_tool_error(upstream: Upstream, ts_client: Path) -> None:
    summary = await run_ts_client(
        ts_client, "stdio", *bridge_command(), tool="getPet", arguments={"petId": 77}, env=upstream.bridge_env()
    )
    assert summary["isError"] is True
    assert summary["structuredContent"] is None
    assert "no pet with id 77" in summary["text"]


async def test_typescript_client_runs_a_code_mode_program_over_stdio(upstream: Upstream, ts_client: Path) -> None:
    """Code mode through the TypeScript SDK: run_query's program calls the API through the bridge."""
    summary = await run_ts_client(
        ts_client,
        "stdio",
        *bridge_command("--mode", "code"),
        tool="run_query",
        arguments={"code": "pet = await getPet(petId=2)\n{'name': pet['name'], 'id': pet['id']}"},
        env=upstream.bridge_env(),
    )
    assert summary["isError"] is False, summary["text"]
    assert "run_query" in summary["tools"] and "search_operations" in summary["tools"]
    assert summary["structuredContent"]["result"] == {"name": upstream.store.pets[2]["name"], "id": 2}
    assert upstream.store.requests == [("GET", "/v1/pets/2")]
