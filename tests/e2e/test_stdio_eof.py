"""Requests read before stdin closes are answered (issue 18): ``printf '...' | mcp-bridge serve``.

A real subprocess gets the whole conversation on a pipe that is closed right after the last
request; every request must get its answer on stdout before the process exits. A slower start
(``PYTHONPROFILEIMPORTTIME=1``) made the race lose the last answer about one run in five.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.golden import GENERATED_DIR
from tests.security.fault_server import Fault, FaultServer

ROOT = Path(__file__).resolve().parents[2]
RUNS = 8
RUN_TIMEOUT = 60.0

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "pipe", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def _serve(lines: list[dict[str, Any]], env: dict[str, str]) -> tuple[list[dict[str, Any]], float]:
    """Feed ``lines`` on stdin, close it, and read stdout to the end (the process exits)."""
    started = time.monotonic()
    process = subprocess.run(
        [sys.executable, "-m", "bridge", "serve", str(GENERATED_DIR / "petstore")],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        cwd=str(ROOT),
        env={**os.environ, **env},
        check=False,
    )
    assert process.returncode == 0, process.stderr[-2000:]
    return [json.loads(line) for line in process.stdout.splitlines() if line.strip()], time.monotonic() - started


def test_every_request_read_before_stdin_closes_is_answered() -> None:
    for run in range(RUNS):
        answers, _ = _serve([INITIALIZE, INITIALIZED, LIST], {"PYTHONPROFILEIMPORTTIME": "1"})
        ids = [answer.get("id") for answer in answers]
        assert ids == [1, 2], f"run {run}: {ids}"
        assert answers[1]["result"]["tools"], answers[1]


@pytest.mark.anyio
async def test_a_call_still_running_at_eof_is_answered_and_a_cancelled_one_is_not() -> None:
    slow = Fault.delay_then(1.0, Fault.ok({"id": 1, "name": "Rex"}))
    async with FaultServer(slow) as server:
        env = {"PETSTORE_BASE_URL": server.url, "PETSTORE_API_KEY": "pet-secret-4d1c9e"}
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "getPet", "arguments": {"petId": 1}},
        }
        cancelled = {**call, "id": 4}
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}}
        answers, took = await anyio.to_thread.run_sync(_serve, [INITIALIZE, INITIALIZED, call, cancelled, cancel], env)
    by_id = {answer.get("id"): answer for answer in answers}
    assert set(by_id) == {1, 3}, answers  # 4 was cancelled: never answered, and not waited for
    assert "result" in by_id[3] and not by_id[3]["result"].get("isError"), by_id[3]
    assert took < RUN_TIMEOUT / 2
