"""Metrics: calls by tool and outcome, latency histograms, upstream statuses, in flight, limiter
rejections; a Prometheus scrape parsed with prometheus_client's parser, and OTLP metrics."""

from __future__ import annotations

import os
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from prometheus_client.parser import text_string_to_metric_families

from bridge.ops.settings import OpsSettings
from bridge.serving.operate import Operations
from tests.ops.conftest import Gated, bridge_on, gated_upstream, observed_server
from tests.services.otlp_sink import running_sink
from tests.services.processes import free_port

pytestmark = pytest.mark.anyio

SCRAPED = OpsSettings(metrics_path="/metrics")


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def scrape(operations: Operations) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    body, content_type = operations.prometheus.exposition()
    assert content_type.startswith("text/plain")
    return samples(body.decode())


async def test_outcomes_latency_upstream_statuses_and_limits_are_counted() -> None:
    state = Gated()
    async with observed_server(SCRAPED, state, max_concurrent_calls=1, max_queue_wait=0.0) as (server, operations):
        async with Client(server) as client:
            assert (await client.call_tool("getPet", {"petId": 1})).is_error is False
            assert (await client.call_tool("getPet", {"petId": "x"})).is_error is True  # a bad argument
            with pytest.raises(MCPError):
                await client.call_tool("noSuchTool", {})  # a protocol error
            gate = state.hold()
            state.arrived = anyio.Event()
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "getPet", {"petId": 2})
                await state.arrived.wait()
                during = scrape(operations)
                busy = await client.call_tool("getPet", {"petId": 3})  # the one slot is taken
                gate.set()
        after = scrape(operations)
    assert busy.is_error is True
    calls = "mcp_bridge_tool_calls_total"
    assert during[("mcp_bridge_tool_calls_in_flight", ())] == 1
    assert after[("mcp_bridge_tool_calls_in_flight", ())] == 0
    assert after[(calls, (("outcome", "ok"), ("tool", "getPet")))] == 2
    assert after[(calls, (("outcome", "tool_error"), ("tool", "getPet")))] == 1
    assert after[(calls, (("outcome", "limited"), ("tool", "getPet")))] == 1
    assert after[(calls, (("outcome", "protocol_error"), ("tool", "?")))] == 1  # a caller's name is no label
    assert after[("mcp_bridge_limiter_rejections_total", (("kind", "concurrency"), ("scope", "api")))] == 1
    ok = (("operation", "GET /pets/{petId}"), ("status", "200"))
    assert after[("mcp_bridge_upstream_requests_total", ok)] == 2
    assert after[("mcp_bridge_tool_call_duration_seconds_count", (("tool", "getPet"),))] == 4
    assert after[("mcp_bridge_upstream_request_duration_seconds_count", (("operation", "GET /pets/{petId}"),))] == 2
    assert not any("noSuchTool" in str(key) for key in after)


async def test_a_cancelled_call_is_counted_as_cancelled() -> None:
    state = Gated()
    async with observed_server(SCRAPED, state) as (server, operations):
        state.hold()
        async with Client(server) as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "getPet", {"petId": 2})
                await state.arrived.wait()
                tg.cancel_scope.cancel()
            with anyio.fail_after(10):
                while ("mcp_bridge_tool_calls_total", (("outcome", "cancelled"), ("tool", "getPet"))) not in scrape(
                    operations
                ):
                    await anyio.sleep(0.02)
        assert scrape(operations)[("mcp_bridge_tool_calls_in_flight", ())] == 0


async def test_a_real_bridge_serves_prometheus_on_its_own_port_and_otlp_metrics_to_a_collector(
    tmp_path: Path,
) -> None:
    port = free_port()
    with running_sink() as (sink, endpoint):
        os.environ.update(OTEL_EXPORTER_OTLP_ENDPOINT=endpoint, OTEL_METRIC_EXPORT_INTERVAL="200")
        try:
            args = ("--metrics-port", str(port), "--otel", "metrics")
            async with gated_upstream() as upstream, bridge_on(upstream, tmp_path, *args) as bridge:
                with anyio.fail_after(20):
                    async with Client(bridge.url) as client:
                        assert (await client.call_tool("getPet", {"petId": 4})).is_error is False

                    def fetch() -> str:
                        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
                            return str(response.read().decode())

                    text = await anyio.to_thread.run_sync(fetch)
                    while "mcp_bridge_tool_calls" not in sink.metric_names():
                        await anyio.sleep(0.05)
        finally:
            for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_METRIC_EXPORT_INTERVAL"):
                del os.environ[name]
    found: dict[Any, float] = samples(text)
    assert found[("mcp_bridge_tool_calls_total", (("outcome", "ok"), ("tool", "getPet")))] == 1
    assert {"mcp_bridge_tool_call_duration", "mcp_bridge_upstream_requests"} <= sink.metric_names()


async def test_token_exchange_lookups_are_counted_as_cache_hits_and_misses() -> None:
    from bridge.ops.instrument import observe_exchanger
    from bridge.ops.metrics import PrometheusRecorder
    from tests.bridge.identity.test_token_exchange import TokenEndpoint, exchanger

    endpoint = TokenEndpoint()
    made = exchanger(endpoint)
    recorder = PrometheusRecorder()
    observe_exchanger(made, recorder)
    first = await made.token_for("alice", "tok-a-0123456789", ("pets:read",))
    again = await made.token_for("alice", "tok-a-0123456789", ("pets:read",))
    other = await made.token_for("bob", "tok-b-0123456789", ("pets:read",))
    body, _ = recorder.exposition()
    found = samples(body.decode())
    assert first == again != other and len(endpoint.exchanges) == 2
    assert found[("mcp_bridge_token_exchange_cache_total", (("result", "miss"),))] == 2
    assert found[("mcp_bridge_token_exchange_cache_total", (("result", "hit"),))] == 1
