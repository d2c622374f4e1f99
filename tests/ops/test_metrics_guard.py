"""``/metrics`` meets the Host/Origin guard of MCP requests on the MCP port (``--metrics-path``) and
on ``--metrics-port``; only ``/healthz`` and ``/readyz`` answer any Host (probes use the pod address)."""

from __future__ import annotations

import http.client
from pathlib import Path

import anyio
import pytest

from tests.ops.conftest import bridge_on, gated_upstream
from tests.services.processes import free_port

pytestmark = pytest.mark.anyio

CASES = {
    "allowed": ({"Host": "127.0.0.1:{port}"}, 200),
    "loopback name": ({"Host": "localhost"}, 200),
    "allowed origin": ({"Host": "127.0.0.1:{port}", "Origin": "http://localhost:{port}"}, 200),
    "foreign host": ({"Host": "evil.example"}, 403),
    "rebinding host": ({"Host": "attacker.test:{port}"}, 403),
    "foreign origin": ({"Host": "127.0.0.1:{port}", "Origin": "https://evil.example"}, 403),
    "null origin": ({"Host": "127.0.0.1:{port}", "Origin": "null"}, 403),
}


def get(port: int, path: str, headers: dict[str, str]) -> tuple[int, str]:
    """One GET with exactly these headers (http.client sends no Host of its own with skip_host)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest("GET", path, skip_host=True)
        for name, value in headers.items():
            connection.putheader(name, value.format(port=port))
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


async def test_metrics_meet_the_host_and_origin_guard_on_both_ports(tmp_path: Path) -> None:
    metrics_port = free_port()
    args = ("--metrics-port", str(metrics_port), "--metrics-path", "/metrics")
    async with gated_upstream() as upstream, bridge_on(upstream, tmp_path, *args) as bridge:
        answers: dict[tuple[str, str], tuple[int, str]] = {}
        with anyio.fail_after(60):
            for name, (headers, _) in CASES.items():
                for where, port, path in (("mcp port", bridge.port, "/metrics"), ("metrics port", metrics_port, "/")):
                    answers[(where, name)] = await anyio.to_thread.run_sync(get, port, path, headers)
            probes = [
                await anyio.to_thread.run_sync(get, bridge.port, path, {"Host": "10.1.2.3:8000"})
                for path in ("/healthz", "/readyz")
            ]
    for (where, name), (status, body) in answers.items():
        expected = CASES[name][1]
        assert status == expected, (where, name, status, body[:200])
        if expected == 200:
            assert "mcp_bridge_tool_calls" in body or "python_info" in body or "# HELP" in body, (where, name)
        else:
            assert "Forbidden" in body and "mcp_bridge" not in body, (where, name)
    assert [status for status, _ in probes] == [200, 200]  # the probes alone answer any Host


async def test_the_workers_supervisors_metrics_port_meets_the_guard_too(tmp_path: Path) -> None:
    metrics_port = free_port()
    args = ("--workers", "2", "--metrics-port", str(metrics_port))
    async with gated_upstream() as upstream, bridge_on(upstream, tmp_path, *args):
        with anyio.fail_after(60):
            foreign = await anyio.to_thread.run_sync(get, metrics_port, "/", {"Host": "evil.example"})
            allowed = await anyio.to_thread.run_sync(get, metrics_port, "/", {"Host": "127.0.0.1:{port}"})
    assert foreign[0] == 403 and "mcp_bridge" not in foreign[1]
    assert allowed[0] == 200


def test_a_busy_metrics_port_stops_serve_with_one_line(tmp_path: Path) -> None:
    import os
    import socket
    import subprocess
    import sys

    from tests.e2e.conftest import PACKAGE

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        command = [sys.executable, "-m", "bridge", "serve", PACKAGE, "--transport", "http"]
        command += ["--port", str(free_port()), "--metrics-port", str(busy)]
        env = {**os.environ, "PETSTORE_API_KEY": "a-long-enough-demo-key"}
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert [line for line in done.stderr.splitlines() if "--metrics-port" in line] == [
        f"error: --metrics-port: cannot listen on 127.0.0.1:{busy}: Address already in use"
    ]
