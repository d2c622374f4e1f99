"""The TypeScript SDK client (pinned) on tasks and elicitation: it carries both, the Python client neither tasks.

``ts_tasks.mjs`` spawns ``mcp-bridge serve generated/jobs`` over stdio against the loopback jobs
API and drives ``client.experimental.tasks.callToolStream`` / ``cancelTask`` and an elicitation
handler; the tests check what it saw and what the API received.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.bridge.calls.longrunning.jobs_upstream import API_KEY, JobStore, serve_jobs
from tests.e2e.conftest import ROOT, subprocess_env
from tests.node_tools import ensure_node_modules

pytestmark = [pytest.mark.anyio, pytest.mark.node]

SCRIPT = Path(__file__).with_name("ts_tasks.mjs")
PACKAGE = ROOT / "generated" / "jobs"
NODE_TIMEOUT = 60.0


@pytest.fixture
def script(tmp_path: Path) -> Path:
    workdir = tmp_path / "ts"
    workdir.mkdir()
    (workdir / "node_modules").symlink_to(ensure_node_modules(), target_is_directory=True)
    copied = workdir / SCRIPT.name
    shutil.copyfile(SCRIPT, copied)
    return copied


@pytest.fixture
async def store(anyio_backend: str) -> Any:
    async with serve_jobs() as running:
        yield running


async def run(script: Path, store: JobStore, scenario: str, *flags: str, elicit: str = "accept") -> Any:
    node = shutil.which("node")
    assert node is not None, "Node.js is needed for this test"
    command = [sys.executable, "-m", "bridge", "serve", str(PACKAGE), "--async-wait", "5", *flags]
    env = subprocess_env(
        {
            "JOBS_BASE_URL": f"http://127.0.0.1:{store.port}/v1",
            "JOBS_API_KEY": API_KEY,
            "MCP_SCENARIO": scenario,
            "MCP_ELICIT": elicit,
        }
    )
    with anyio.fail_after(NODE_TIMEOUT):
        done = await anyio.run_process([node, str(script), *command], cwd=ROOT, env=env, check=False)
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 0, stderr
    assert API_KEY not in stderr and API_KEY not in done.stdout.decode()
    (line,) = done.stdout.decode().splitlines()
    return json.loads(line)


async def test_the_typescript_client_runs_a_long_running_call_as_a_task(script: Path, store: JobStore) -> None:
    summary = await run(script, store, "task")
    assert summary["caps"]["requests"]["tools"]["call"] == {}
    assert summary["execution"] == {"startJob": {"taskSupport": "optional"}, "startExport": {"taskSupport": "optional"}}
    messages = summary["messages"]
    assert messages[0] == "taskCreated" and messages[-1] == "result" and "status:completed" in messages
    assert summary["result"]["structuredContent"]["lines"] == ["job-1 done"]
    assert summary["title"] == "Jobs" and summary["instructions"].startswith("Tools for the Jobs API")
    assert store.polls() == ["/v1/jobs/job-1/status"] * 3


async def test_cancelling_a_task_from_the_typescript_client_calls_the_apis_cancel(
    script: Path, store: JobStore
) -> None:
    summary = await run(script, store, "cancel")
    assert summary["cancelled"] == "cancelled"
    assert "status:cancelled" in summary["messages"] or summary["messages"][-1] == "error"
    with anyio.fail_after(10):
        while not store.cancelled:
            await store._changed.wait()
    assert store.cancelled == ["job-1"]


@pytest.mark.parametrize(("answer", "sent"), [("accept", True), ("decline", False)])
async def test_the_typescript_clients_elicitation_confirms_a_write(
    script: Path, store: JobStore, answer: str, sent: bool
) -> None:
    summary = await run(script, store, "confirm", "--confirm", "writes", elicit=answer)
    (form,) = summary["forms"]
    assert form.startswith("The assistant wants to send POST /v1/jobs\n") and "(Start a job)" in form
    assert summary["result"].get("isError", False) is not sent
    assert bool(store.requests) is sent
