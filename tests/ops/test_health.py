"""``/healthz`` and ``/readyz``: answered in front of the Host guard, 503 with the reason when not ready."""

from __future__ import annotations

import signal

import httpx
import pytest
import uvicorn

from bridge.ops.drain import DrainingServer, InFlight
from bridge.ops.health import HealthRoutes, Readiness
from bridge.ops.logs import JsonFormatter
from bridge.server.transports import host_origin_policy

pytestmark = pytest.mark.anyio


async def _mcp(scope: object, receive: object, send: object) -> None:
    raise AssertionError("health probes never reach the MCP app")


def client(readiness: Readiness, **kwargs: object) -> httpx.AsyncClient:
    app = HealthRoutes(_mcp, readiness, **kwargs)  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://10.0.0.7:8000")


async def test_healthz_and_readyz_answer_probes_whatever_their_host() -> None:
    async with client(Readiness()) as http:
        alive = await http.get("/healthz", headers={"host": "10.0.0.7:8000"})
        ready = await http.get("/readyz")
    assert (alive.status_code, alive.text) == (200, "ok\n")
    assert (ready.status_code, ready.text) == (200, "ready\n")
    assert alive.headers["cache-control"] == "no-store"


async def test_readyz_is_503_with_the_reason_while_draining_or_a_check_fails() -> None:
    readiness = Readiness()
    async with client(readiness) as http:
        readiness.draining = True
        draining = await http.get("/readyz")
        readiness.draining = False

        async def redis_down() -> str | None:
            return "shared limits unreachable (Redis at 127.0.0.1:1: ConnectionError)"

        readiness.add_check(redis_down)
        failing = await http.get("/readyz")
        alive = await http.get("/healthz")
    assert (draining.status_code, draining.text) == (503, "not ready: draining\n")
    assert failing.status_code == 503 and "Redis at 127.0.0.1:1" in failing.text
    assert alive.status_code == 200  # alive, just not ready


async def test_a_metrics_path_is_served_only_when_configured() -> None:
    guard = host_origin_policy("127.0.0.1", ["10.0.0.7"])
    metrics = {"metrics_path": "/metrics", "metrics": lambda: (b"x 1\n", "text/plain"), "guard": guard}
    async with client(Readiness(), **metrics) as http:
        served = await http.get("/metrics")
        foreign = await http.get("/metrics", headers={"host": "evil.example"})
    assert (served.status_code, served.text) == (200, "x 1\n")
    assert foreign.status_code == 403  # the metrics path meets the Host guard (P64)
    with pytest.raises(AssertionError, match="never reach"):
        async with client(Readiness()) as http:
            await http.get("/metrics")


def test_sigterm_turns_readiness_off_and_the_exit_status_stays_0() -> None:
    readiness = Readiness()
    server = DrainingServer(uvicorn.Config(_mcp), in_flight=InFlight(_mcp), readiness=readiness, timeout=1.0)  # type: ignore[arg-type]
    server.handle_exit(signal.SIGTERM, None)
    assert readiness.draining and server.should_exit
    assert server._captured_signals == []  # uvicorn would raise SIGTERM again after shutdown: exit 143


def test_json_log_lines_are_one_object_each_with_the_audit_fields_as_keys() -> None:
    import json
    import logging

    formatter = JsonFormatter()
    audit = logging.LogRecord(
        "bridge.audit",
        logging.INFO,
        "x",
        1,
        "call subject=%s client=%s tool=%s method=%s path=%s status=%s ms=%.1f",
        ("alice", "agent", "getPet", "GET", "/pets/{petId}", "200", 12.34),
        None,
    )
    line = formatter.format(audit)
    assert "\n" not in line
    data = json.loads(line)
    assert data["message"] == "call" and data["level"] == "info" and data["logger"] == "bridge.audit"
    assert {k: data[k] for k in ("subject", "client", "tool", "method", "path", "status", "ms")} == {
        "subject": "alice",
        "client": "agent",
        "tool": "getPet",
        "method": "GET",
        "path": "/pets/{petId}",
        "status": "200",
        "ms": 12.3,
    }
    try:
        raise ValueError("two\nlines")
    except ValueError:
        import sys

        failed = logging.LogRecord("bridge", logging.ERROR, "x", 1, "broke\nhere", (), sys.exc_info())
    other = json.loads(formatter.format(failed))
    assert other["message"] == "broke\nhere" and "ValueError" in other["exception"]


async def test_the_probes_answer_any_host_but_mcp_requests_still_meet_the_host_guard() -> None:
    from bridge.server.handlers import build_server
    from bridge.server.transports import http_app
    from bridge.tools import Tool, ToolRegistry

    async def run(args: dict[str, object], ctx: object) -> str:
        return "ok"

    registry = ToolRegistry([Tool(name="t", run=run, description="t tool")])
    app = HealthRoutes(http_app(build_server(registry, name="s", version="1")), Readiness())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://evil.example") as http:
        probe = await http.get("/healthz")
        mcp = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert probe.status_code == 200 and probe.text == "ok\n"
    assert mcp.status_code == 403


def test_with_everything_off_no_telemetry_metrics_or_redis_code_is_loaded() -> None:
    import subprocess
    import sys

    program = """
import sys, anyio
from tests.ops.conftest import Gated, observed_server
from bridge.ops.settings import OpsSettings
async def main():
    async with observed_server(OpsSettings(), Gated()) as (server, ops):
        pass
anyio.run(main)
names = ("bridge.ops.observe", "bridge.ops.instrument", "bridge.ops.metrics", "bridge.ops.telemetry",
         "bridge.ops.shared_limits", "opentelemetry.sdk", "prometheus_client", "redis")
print(",".join(n for n in names if n in sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "", out.stdout
