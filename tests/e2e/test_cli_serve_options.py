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
