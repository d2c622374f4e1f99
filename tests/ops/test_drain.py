"""SIGTERM drains a real ``mcp-bridge serve --transport http``: calls in flight finish, new
connections are refused, open streams do not hold it, the drain deadline is kept, exit status 0."""

from __future__ import annotations

import contextlib
import json
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.e2e.conftest import port_accepts
from tests.ops.conftest import bridge_on, exit_code, gated_upstream

pytestmark = pytest.mark.anyio

WAIT = 20.0


async def test_sigterm_lets_the_call_in_flight_finish_refuses_new_connections_and_exits_0(tmp_path: Path) -> None:
    async with gated_upstream() as upstream, bridge_on(upstream, tmp_path, "--log-format", "json") as bridge:
        gate = upstream.hold()
        results: list[Any] = []
        with anyio.fail_after(WAIT):
            async with Client(bridge.url, mode="auto") as client:  # 2026-07-28: no session to close afterwards
                await client.list_tools()  # the client checks results against the output schemas it lists

                async def call() -> None:
                    results.append(await client.call_tool("getPet", {"petId": 7}))

                async with anyio.create_task_group() as tg:
                    tg.start_soon(call)
                    await upstream.arrived.wait()
                    bridge.process.send_signal(signal.SIGTERM)
                    while await anyio.to_thread.run_sync(port_accepts, bridge.port):  # the listener closes
                        await anyio.sleep(0.05)
                    assert bridge.process.poll() is None  # still draining: the call holds it
                    gate.set()
        code = await exit_code(bridge, WAIT)
        lines = [json.loads(line) for line in bridge.stderr().splitlines() if line.strip()]
    assert code == 0
    assert results[0].is_error is False and results[0].structured_content["id"] == 7
    assert any(line["message"].startswith("SIGTERM: draining (1 request(s) in flight)") for line in lines)


async def test_an_idle_session_with_its_stream_open_does_not_hold_the_drain(tmp_path: Path) -> None:
    async with gated_upstream() as upstream, bridge_on(upstream, tmp_path) as bridge:
        with anyio.fail_after(WAIT):
            session = Client(bridge.url, mode="legacy")  # a stateful session and its GET stream
            client = await session.__aenter__()
            assert (await client.call_tool("getPet", {"petId": 1})).is_error is False
            started = anyio.current_time()
            bridge.process.send_signal(signal.SIGTERM)
            code = await exit_code(bridge, WAIT)
            took = anyio.current_time() - started
            with contextlib.suppress(Exception):  # its DELETE finds the server gone
                await session.__aexit__(None, None, None)
    assert code == 0
    assert took < 10  # far below the 30 s drain deadline: no work was in flight


async def test_a_call_that_outlasts_the_drain_deadline_is_cut_and_the_process_still_exits_0(tmp_path: Path) -> None:
    from bench.mcp_load import Broken, Results
    from bench.mcp_load import Client as RawClient

    async with gated_upstream() as upstream, bridge_on(upstream, tmp_path, "--drain-timeout", "0.5") as bridge:
        upstream.hold()  # never opened
        outcome: list[str] = []
        with anyio.fail_after(WAIT):
            client = RawClient(bridge.url, "modern", Results(), 1)  # a bare client: the cut is its to see
            await client.connection.open()

            async def call() -> None:
                try:
                    outcome.append(await client.call())
                except Broken as exc:
                    outcome.append(f"cut: {exc}")

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await upstream.arrived.wait()
                started = anyio.current_time()
                bridge.process.send_signal(signal.SIGTERM)
                code = await exit_code(bridge, WAIT)
                took = anyio.current_time() - started
            client.connection.close()
        stderr = bridge.stderr()
    assert code == 0
    assert 0.4 < took < 10
    assert len(outcome) == 1 and outcome[0].startswith("cut")
    assert "drain deadline (0.5 s) reached: 1 request(s) cut off" in stderr
