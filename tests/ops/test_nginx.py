"""Debian's nginx with docs/deployment.md's configuration in front of ``serve --workers 3``: sessions stay on
their worker, stateless calls spread, a killed worker is restarted, a rolling restart (SIGHUP)
loses no call, and SIGTERM to the supervisor drains everything to exit status 0."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import psutil
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from bench.mcp_load import run_load
from bench.scale_bench import _consecutive_ports
from tests.e2e.conftest import ROOT, bridge_command, stop_process, subprocess_env
from tests.ops.conftest import Gated, gated_upstream
from tests.services.nginx import Nginx, bridge_http_block, running_nginx

pytestmark = pytest.mark.anyio

WORKERS = 3
READY_TIMEOUT = 60.0


@dataclass
class Deployment:
    supervisor: subprocess.Popen[bytes]
    ports: list[int]
    nginx: Nginx
    log: Path

    @property
    def url(self) -> str:
        return f"{self.nginx.url}/mcp" if not self.nginx.url.endswith("/mcp") else self.nginx.url

    def workers(self) -> list[int]:
        return [child.pid for child in psutil.Process(self.supervisor.pid).children()]


def ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as response:
            return bool(response.status == 200)
    except OSError:
        return False


async def all_ready(ports: list[int]) -> None:
    with anyio.fail_after(READY_TIMEOUT):
        while not all([await anyio.to_thread.run_sync(ready, port) for port in ports]):
            await anyio.sleep(0.1)


@asynccontextmanager
async def deployment(upstream: Gated, tmp_path: Path) -> AsyncIterator[Deployment]:
    base = _consecutive_ports(WORKERS)
    ports = [base + i for i in range(WORKERS)]
    log = tmp_path / "supervisor.log"
    args = ["--transport", "http", "--port", str(base), "--workers", str(WORKERS), "--forwarded-allow-ips", "127.0.0.1"]
    with log.open("wb") as out:
        supervisor = subprocess.Popen(
            bridge_command(*args),
            cwd=ROOT,
            env=subprocess_env(upstream.upstream.bridge_env()),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
        )
    try:
        await all_ready(ports)
        with running_nginx(bridge_http_block(ports)) as nginx:
            yield Deployment(supervisor, ports, nginx, log)
    finally:
        await anyio.to_thread.run_sync(stop_process, supervisor)


async def test_sessions_stay_on_their_worker_and_a_killed_worker_comes_back(tmp_path: Path) -> None:
    async with gated_upstream() as upstream, deployment(upstream, tmp_path) as deployed:
        routes = []
        with anyio.fail_after(60):
            for number in range(6):
                http = create_mcp_http_client()
                async with http, Client(streamable_http_client(deployed.url, http_client=http), mode="legacy") as c:
                    for _ in range(3):  # every call of the session reaches the worker that has it
                        assert (await c.call_tool("getPet", {"petId": number + 1})).is_error is False
                    session = c.session_id if hasattr(c, "session_id") else None
                    routes.append(session)
            async with Client(deployed.url) as modern:  # 2026-07-28: no session, any worker
                for pet in range(6):
                    assert (await modern.call_tool("getPet", {"petId": pet + 1})).is_error is False
            before = deployed.workers()
            psutil.Process(before[1]).kill()
            with anyio.fail_after(30):
                while len(after := deployed.workers()) < WORKERS or set(after) == set(before):
                    await anyio.sleep(0.1)
            await all_ready(deployed.ports)
            async with Client(deployed.url, mode="legacy") as again:
                assert (await again.call_tool("getPet", {"petId": 1})).is_error is False
        deployed.supervisor.send_signal(signal.SIGTERM)
        code = await anyio.to_thread.run_sync(lambda: deployed.supervisor.wait(30))
        left = [pid for pid in before if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]
    assert code == 0 and left == []
    assert upstream.requests == 6 * 3 + 6 + 1
    log = deployed.log.read_text()
    assert "worker 1 exited" in log and "starting it again" in log


# A bound on the whole rolling restart, never a window it must fit in: on a loaded machine replacing three
# workers one by one can take much longer than on an idle one, and the load runs until it is done.
ROLL_BOUND = 300.0
AFTER_ROLL = 2.0  # seconds of calls on the new workers before the load stops


@pytest.mark.parametrize("protocol", ["modern", "session"])
async def test_a_rolling_restart_loses_no_call(tmp_path: Path, protocol: str) -> None:
    async with gated_upstream() as upstream, deployment(upstream, tmp_path) as deployed:
        before = set(deployed.workers())
        rolled = asyncio.Event()

        async def roll() -> None:
            """SIGHUP once calls flow, then wait until every worker is new and ready, then a little more."""
            while upstream.requests < 10:
                await anyio.sleep(0.05)
            deployed.supervisor.send_signal(signal.SIGHUP)
            while True:
                now = set(deployed.workers())
                if len(now) == WORKERS and now.isdisjoint(before):
                    break
                await anyio.sleep(0.1)
            await all_ready(deployed.ports)
            await anyio.sleep(AFTER_ROLL)
            rolled.set()

        with anyio.fail_after(ROLL_BOUND + 60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(roll)
                result = await run_load(deployed.url, protocol, 4, ROLL_BOUND, 1_000_000, stop=rolled)
        after = set(deployed.workers())
    assert rolled.is_set(), "the workers were not all replaced within the bound"
    outcomes = result["outcomes"]
    assert before.isdisjoint(after)  # every worker was replaced during the run
    # Every call sent was answered. A session begun on a worker in its last second of draining ends
    # with it: the client's next step (notifications/initialized) gets 404 and it shakes hands again
    # ("connect:..."); no call is sent in such a session, so none is lost.
    assert {name for name in outcomes if not name.startswith("connect:")} == {"ok"}, outcomes
    assert outcomes["ok"] > 50 and result["failures"] == []
