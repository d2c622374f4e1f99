"""Code mode over streamable HTTP: ``mcp-bridge serve --transport http --mode code`` as a subprocess."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client

from bridge.cli.demo_upstream import DEMO_API_KEY
from tests.e2e.conftest import Upstream, http_bridge, upstream  # noqa: F401 (the fixture)

pytestmark = pytest.mark.anyio

PROGRAM = "import asyncio\npets = await asyncio.gather(getPet(petId=1), getPet(petId=2))\n[p['id'] for p in pets]"


async def test_a_program_runs_over_http_and_the_server_stops_cleanly(upstream: Upstream, tmp_path: Path) -> None:  # noqa: F811
    store = upstream.store
    async with http_bridge(upstream, tmp_path, "--mode", "code") as bridge:
        with anyio.fail_after(30):
            async with Client(bridge.url) as client:
                program = PROGRAM
                result = await client.call_tool("run_query", {"code": program})
        assert result.structured_content == {"result": [1, 2]}, result
        stderr = bridge.stderr()
    assert sorted(store.requests) == [("GET", "/v1/pets/1"), ("GET", "/v1/pets/2")]
    assert DEMO_API_KEY not in stderr
    assert "Traceback" not in bridge.stderr()
