"""Over streamable HTTP: confirmations, MCP tasks and resources of ``serve generated/jobs`` with the official client.

The bridge is the real console command in a subprocess (``--transport http``), the jobs API runs on
loopback in the test's event loop, and the official Python client connects over HTTP, stateful:
its elicitation callback answers on the request's SSE stream (2025-11-25) or through an input
round (2026-07-28).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from mcp import Client

from bridge.cli.demo_upstream import free_port
from tests.bridge.calls.longrunning.jobs_upstream import API_KEY, JobStore, serve_jobs
from tests.e2e.conftest import ROOT, STARTUP_TIMEOUT, port_accepts, stop_process, subprocess_env

pytestmark = pytest.mark.anyio
PACKAGE = ROOT / "generated" / "jobs"


@pytest.fixture
async def store(anyio_backend: str) -> Any:
    async with serve_jobs() as running:
        yield running


@asynccontextmanager
async def http_jobs_bridge(store: JobStore, tmp_path: Path, *flags: str) -> AsyncIterator[str]:
    port = free_port()
    log = tmp_path / "bridge.stderr"
    env = subprocess_env({"JOBS_BASE_URL": f"http://127.0.0.1:{store.port}/v1", "JOBS_API_KEY": API_KEY})
    command = [sys.executable, "-m", "bridge", "serve", str(PACKAGE), "--transport", "http", "--port", str(port)]
    with log.open("wb") as stderr:
        process = subprocess.Popen([*command, *flags], cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stderr=stderr)
    try:
        with anyio.fail_after(STARTUP_TIMEOUT):
            while not await anyio.to_thread.run_sync(port_accepts, port):
                assert process.poll() is None, log.read_text()
                await anyio.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        await anyio.to_thread.run_sync(stop_process, process)
    assert API_KEY not in log.read_text()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_confirmations_over_http(store: JobStore, tmp_path: Path, mode: str) -> None:
    answers = iter(["decline", "accept"])

    async def user(ctx: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        action = next(answers)
        return mcp_types.ElicitResult(action=action, content={"confirm": True} if action == "accept" else None)

    async with http_jobs_bridge(store, tmp_path, "--confirm", "writes") as url:
        async with Client(url, mode=mode, elicitation_callback=user) as client:
            declined = await client.call_tool("startJob", {"kind": "inline", "steps": 1})
            assert store.requests == []
            accepted = await client.call_tool("startJob", {"kind": "inline", "steps": 1})
    assert declined.is_error and not accepted.is_error
    assert [job.kind for job in store.jobs.values()] == ["inline"]


async def test_a_task_over_http(store: JobStore, tmp_path: Path) -> None:
    async with http_jobs_bridge(store, tmp_path) as url:
        async with Client(url, mode="legacy") as client:
            call = client.session._dispatcher.send_raw_request
            created = await call("tools/call", {"name": "startJob", "arguments": {"kind": "report"}, "task": {}})
            with anyio.fail_after(15):
                result = await call("tasks/result", {"taskId": created["task"]["taskId"]})
    assert result["structuredContent"]["lines"] == ["job-1 done"]


async def test_resources_over_http(store: JobStore, tmp_path: Path) -> None:
    async with http_jobs_bridge(store, tmp_path, "--resources") as url:
        async with Client(url) as client:
            templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
            read = await client.read_resource("jobs:///reports/2")
    assert templates == ["jobs:///jobs/{jobId}", "jobs:///reports/{reportId}"]
    assert API_KEY not in read.contents[0].text  # type: ignore[union-attr]


async def test_the_icon_option_takes_a_file_and_refuses_a_bad_url_in_one_line(store: JobStore, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bridge.cli import cli

    refused = CliRunner().invoke(cli, ["serve", str(PACKAGE), "--icon", "javascript:alert(1)"])
    assert refused.exit_code == 2
    assert refused.output.strip().count("\n") == 0 and "--icon" in refused.output
    logo = tmp_path / "logo.png"
    logo.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(32))
    async with http_jobs_bridge(store, tmp_path, "--icon", str(logo)) as url:
        async with Client(url, mode="legacy") as client:
            assert client.server_info is not None
            icons = client.server_info.icons or []
    assert [icon.mime_type for icon in icons] == ["image/png"] and icons[0].src.startswith("data:image/png;base64,")


async def test_a_task_belongs_to_its_session(store: JobStore, tmp_path: Path) -> None:
    from mcp import MCPError

    async with http_jobs_bridge(store, tmp_path) as url:
        async with Client(url, mode="legacy") as owner, Client(url, mode="legacy") as other:
            created = await owner.session._dispatcher.send_raw_request(
                "tools/call", {"name": "startJob", "arguments": {"kind": "hang"}, "task": {}}
            )
            task_id = created["task"]["taskId"]
            with pytest.raises(MCPError) as foreign:
                await other.session._dispatcher.send_raw_request("tasks/get", {"taskId": task_id})
            listed = await other.session._dispatcher.send_raw_request("tasks/list", {})
            mine = await owner.session._dispatcher.send_raw_request("tasks/get", {"taskId": task_id})
    assert foreign.value.error.code == mcp_types.INVALID_PARAMS
    assert listed["tasks"] == [] and mine["status"] == "working"


async def test_over_stateless_http_anonymous_callers_get_no_tasks_and_never_see_each_others(
    store: JobStore, tmp_path: Path
) -> None:
    from mcp import MCPError

    async with http_jobs_bridge(store, tmp_path, "--stateless", "--async-wait", "0.2") as url:
        async with Client(url, mode="legacy") as first, Client(url, mode="legacy") as second:
            offered = first.server_capabilities.tasks
            with pytest.raises(MCPError) as refused:
                await first.session._dispatcher.send_raw_request(
                    "tools/call", {"name": "startJob", "arguments": {"kind": "hang"}, "task": {}}
                )
            listed = await second.session._dispatcher.send_raw_request("tasks/list", {})
            plain = await first.call_tool("startJob", {"kind": "inline", "steps": 1})  # without a task it runs
    assert offered is None  # callers who cannot be told apart are not offered tasks
    assert refused.value.error.code == mcp_types.INVALID_REQUEST and "session or an access token" in (
        refused.value.error.message
    )
    assert listed["tasks"] == []
    assert not plain.is_error and [job.kind for job in store.jobs.values()] == ["inline"]


async def test_over_http_one_sessions_flood_of_tasks_leaves_room_for_another_session(
    store: JobStore, tmp_path: Path
) -> None:
    from mcp import MCPError

    from bridge.server.tasks import MAX_TTL_MS, TASKS_PER_CALLER

    day = {"ttl": 24 * 3_600_000}
    async with http_jobs_bridge(store, tmp_path) as url:
        async with Client(url, mode="legacy") as greedy, Client(url, mode="legacy") as other:
            call = greedy.session._dispatcher.send_raw_request
            made = [
                await call("tools/call", {"name": "startJob", "arguments": {"kind": "inline"}, "task": day})
                for _ in range(TASKS_PER_CALLER)
            ]
            with pytest.raises(MCPError) as refused:
                await call("tools/call", {"name": "startJob", "arguments": {"kind": "inline"}, "task": day})
            created = await other.session._dispatcher.send_raw_request(
                "tools/call", {"name": "startJob", "arguments": {"kind": "inline"}, "task": day}
            )
    assert refused.value.error.code == mcp_types.INVALID_REQUEST
    assert created["task"]["status"] in ("working", "completed")
    assert max(entry["task"]["ttl"] for entry in [*made, created]) == MAX_TTL_MS  # a day asked, an hour kept


def _front(nginx_url: str) -> str:
    return nginx_url if nginx_url.endswith("/mcp") else f"{nginx_url}/mcp"


async def test_behind_the_readmes_nginx_stateless_callers_get_no_tasks_and_see_none(
    store: JobStore, tmp_path: Path
) -> None:
    from mcp import MCPError

    from tests.services.nginx import bridge_http_block, running_nginx

    flags = ("--stateless", "--forwarded-allow-ips", "127.0.0.1")
    async with http_jobs_bridge(store, tmp_path, *flags) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with running_nginx(bridge_http_block([port])) as nginx:
            async with Client(_front(nginx.url), mode="legacy") as first, Client(_front(nginx.url), mode="legacy") as b:
                offered = first.server_capabilities.tasks
                with pytest.raises(MCPError):
                    await first.session._dispatcher.send_raw_request(
                        "tools/call", {"name": "startJob", "arguments": {"kind": "hang"}, "task": {}}
                    )
                listed = await b.session._dispatcher.send_raw_request("tasks/list", {})
    assert offered is None and listed["tasks"] == []
    assert [job.kind for job in store.jobs.values()] == []  # the refused task-augmented call sent nothing


async def test_behind_the_readmes_nginx_one_sessions_flood_of_tasks_leaves_room_for_another(
    store: JobStore, tmp_path: Path
) -> None:
    from mcp import MCPError

    from bridge.server.tasks import TASKS_PER_CALLER
    from tests.services.nginx import bridge_http_block, running_nginx

    task = {"ttl": 24 * 3_600_000}
    job = {"name": "startJob", "arguments": {"kind": "inline"}, "task": task}
    async with http_jobs_bridge(store, tmp_path, "--forwarded-allow-ips", "127.0.0.1") as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with running_nginx(bridge_http_block([port])) as nginx:
            front = _front(nginx.url)
            async with Client(front, mode="legacy") as greedy, Client(front, mode="legacy") as other:
                for _ in range(TASKS_PER_CALLER):
                    await greedy.session._dispatcher.send_raw_request("tools/call", job)
                with pytest.raises(MCPError) as refused:
                    await greedy.session._dispatcher.send_raw_request("tools/call", job)
                created = await other.session._dispatcher.send_raw_request("tools/call", job)
    assert refused.value.error.code == mcp_types.INVALID_REQUEST
    assert created["task"]["status"] in ("working", "completed")
