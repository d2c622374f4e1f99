"""`mcp-bridge serve` options that only show on a running server: client auth, response checks."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import Upstream, http_bridge

pytestmark = pytest.mark.anyio

TOKEN = "bridge-client-token-0123456789"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


async def test_auth_token_env_makes_the_http_server_demand_the_token(
    upstream: Upstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRIDGE_CLIENT_TOKEN", TOKEN)
    async with http_bridge(upstream, tmp_path, "--auth-token-env", "BRIDGE_CLIENT_TOKEN") as bridge:
        async with httpx.AsyncClient(timeout=10) as client:
            anonymous = await client.post(bridge.url, json=INITIALIZE, headers=HEADERS)
            wrong = await client.post(bridge.url, json=INITIALIZE, headers={**HEADERS, "authorization": "Bearer x"})
            good = {**HEADERS, "authorization": f"Bearer {TOKEN}"}
            right = await client.post(bridge.url, json=INITIALIZE, headers=good)
    assert (anonymous.status_code, wrong.status_code, right.status_code) == (401, 401, 200)
    assert TOKEN not in bridge.stderr()


async def test_auth_options_are_refused_over_stdio(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bridge.cli import cli

    result = CliRunner().invoke(cli, ["serve", "generated/petstore", "--auth-token-env", "X"])
    assert result.exit_code == 2
    assert "--transport http" in result.output


async def test_serve_over_http_says_where_it_listens(upstream: Upstream, tmp_path: Path) -> None:
    async with http_bridge(upstream, tmp_path) as bridge:
        assert f"listening on {bridge.url}" in bridge.stderr()


async def test_a_port_in_use_is_one_line_with_the_fix(tmp_path: Path) -> None:
    import socket
    import subprocess

    import anyio

    from tests.e2e.conftest import bridge_command

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = bridge_command("--transport", "http", "--port", str(port))
        done = await anyio.to_thread.run_sync(
            lambda: subprocess.run(command, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        )
    errors = [line for line in done.stderr.splitlines() if line.startswith("error")]
    assert done.returncode == 1
    said = f"error: port {port} on 127.0.0.1 is in use by another program: stop it, or choose a free port with --port"
    assert errors == [said]
    assert "Traceback" not in done.stderr and "Errno" not in done.stderr


async def test_stdio_on_a_terminal_says_once_that_it_waits_for_a_client(tmp_path: Path) -> None:
    import os
    import pty
    import subprocess

    import anyio

    from tests.e2e.conftest import bridge_command, stop_process

    leader, follower = pty.openpty()
    log = tmp_path / "stderr.log"
    with log.open("wb") as err:
        process = subprocess.Popen(bridge_command(), stdin=follower, stdout=subprocess.DEVNULL, stderr=err)
    os.close(follower)
    try:
        with anyio.fail_after(120):
            while "waiting for an MCP client" not in log.read_text():
                await anyio.sleep(0.1)
    finally:
        await anyio.to_thread.run_sync(stop_process, process)
        os.close(leader)
    assert log.read_text().count("waiting for an MCP client") == 1
