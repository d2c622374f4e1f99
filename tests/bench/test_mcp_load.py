"""The load bench's bare MCP clients speak what the real server expects, and count what they see."""

from __future__ import annotations

import asyncio

import pytest

from bench.mcp_load import Client, Results, run_load
from bench.scale_bench import bridge, upstream, upstream_stats


@pytest.mark.parametrize(("protocol", "stateless"), [("session", False), ("modern", False), ("stateless", True)])
def test_each_protocol_gets_the_right_pet_from_a_real_bridge(protocol: str, stateless: bool) -> None:
    with upstream() as upstream_port, bridge(1, upstream_port, stateless=stateless) as served:
        result = asyncio.run(run_load(f"http://127.0.0.1:{served.ports[0]}/mcp", protocol, 3, 1.0, 20))
        stats = upstream_stats(upstream_port)
    assert set(result["outcomes"]) == {"ok"}
    assert result["outcomes"]["ok"] == len(result["latencies_ms"]) > 0
    assert stats["requests"] == result["outcomes"]["ok"]  # one upstream request per call, no more
    assert result["new_sessions"] == 0


def test_a_session_the_server_does_not_know_is_started_again_not_counted_as_an_error() -> None:
    with upstream() as upstream_port, bridge(1, upstream_port) as served:

        async def scenario() -> tuple[Results, str, str | None]:
            results = Results()
            client = Client(f"http://127.0.0.1:{served.ports[0]}/mcp", "session", results, 1)
            await client.connection.open()
            await client.handshake()
            client.session = "not-a-session-of-this-server"
            gone = await client.call()
            await client.handshake()
            again = await client.call()
            client.connection.close()
            return results, gone, again

        _, gone, again = asyncio.run(scenario())
    assert gone == "session_gone"
    assert again == "ok"
