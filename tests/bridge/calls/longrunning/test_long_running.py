"""Long-running operations without MCP tasks: the official client, the bridge, the loopback jobs API.

The jobs API answers ``POST /v1/jobs`` with 202 and a status URL, then ``running`` until it has
been polled ``steps`` times. The client connects in its default mode (2026-07-28), where the SDK
has no tasks: the call waits, with progress, up to ``--async-wait``, else answers with a handle
for ``get_operation_status``.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import anyio
import mcp_types
import pytest

from bridge.calls.longrunning.tracker import STATUS_TOOL
from bridge.serving.assemble import ServeOptions
from tests.bridge.calls.longrunning.harness import QUICK, jobs_client
from tests.bridge.calls.longrunning.jobs_upstream import API_KEY, HOSTILE, JobStore, serve_jobs

pytestmark = pytest.mark.anyio
WAIT = 10.0  # bound of every wait on the upstream in these tests


@pytest.fixture
async def store(anyio_backend: str) -> Any:
    async with serve_jobs() as running:
        yield running


def payload(result: mcp_types.CallToolResult) -> Any:
    block = result.content[0]
    assert isinstance(block, mcp_types.TextContent)
    return json.loads(block.text)


def text(result: mcp_types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))


async def test_a_call_without_tasks_waits_for_the_operation_with_progress(store: JobStore) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async with jobs_client(store) as client:
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("startJob", {"kind": "report", "steps": 3}, progress_callback=on_progress)
    assert not result.is_error, text(result)
    assert payload(result)["lines"] == ["job-1 done"]  # the report the finished status pointed at
    assert [value for value, _, _ in progress] == [1.0, 2.0]  # one per status check that said "running"
    assert all(message == "POST /jobs: running" for _, _, message in progress)
    assert [(method, path) for method, path, _ in store.requests] == [
        ("POST", "/v1/jobs"),
        *[("GET", "/v1/jobs/job-1/status")] * 3,
        ("GET", "/v1/reports/1"),
    ]


async def test_polls_carry_the_operations_credentials_and_results_are_redacted(store: JobStore) -> None:
    async with jobs_client(store) as client:
        echoed = await client.call_tool("startJob", {"kind": "echo", "steps": 2})
        report = await client.call_tool("startJob", {"kind": "report", "steps": 1})
    assert {key for _, _, key in store.requests} == {API_KEY}  # the start, every poll and the result fetch
    for result in (echoed, report):
        assert not result.is_error, text(result)
        assert API_KEY not in text(result) and API_KEY not in json.dumps(result.structured_content)
    assert payload(echoed)["seen_key"] != API_KEY


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("inline", {"id": "job-1", "kind": "inline", "status": "succeeded"}),  # the final status is the result
        ("operation-location", {"id": "job-1", "kind": "operation-location", "status": "succeeded"}),
        ("redirect", {"id": 1, "lines": ["job-1 done"]}),  # a 303 to the result, followed under the base path
    ],
)
async def test_the_common_status_shapes_end_with_the_result(store: JobStore, kind: str, expected: Any) -> None:
    async with jobs_client(store) as client:
        result = await client.call_tool("startJob", {"kind": kind, "steps": 2})
    assert not result.is_error, text(result)
    got = payload(result)
    got.pop("seen_key", None)
    assert got == expected


async def test_a_state_pointer_and_result_pointer_from_x_mcp_async(store: JobStore) -> None:
    # startExport: `state: /progress/phase`, `succeeded: [written]`, `result: /file`; "writing" keeps polling.
    async with jobs_client(store) as client:
        result = await client.call_tool("startExport", {})
    assert not result.is_error, text(result)
    assert payload(result) == {"name": "export.csv", "rows": 3}
    assert [p for m, p, _ in store.requests if m == "GET"] == ["/v1/exports/1", "/v1/exports/1"]


async def test_a_failed_operation_is_a_tool_error_with_the_apis_words(store: JobStore) -> None:
    async with jobs_client(store) as client:
        result = await client.call_tool("startJob", {"kind": "fail", "steps": 1})
    assert result.is_error
    assert "the operation failed (failed)" in text(result) and "disk full" in text(result)


@pytest.mark.parametrize("kind", sorted(HOSTILE))
async def test_hostile_status_urls_are_refused_and_never_polled(store: JobStore, kind: str) -> None:
    async with jobs_client(store) as client:
        result = await client.call_tool("startJob", {"kind": kind})
    assert result.is_error
    assert "status URL" in text(result) and "does not poll it" in text(result)
    assert store.requests == [("POST", "/v1/jobs", API_KEY)]  # nothing after the start, anywhere


async def test_a_status_answer_over_the_response_cap_is_refused(store: JobStore) -> None:
    async with jobs_client(store) as client:
        result = await client.call_tool("startJob", {"kind": "huge", "steps": 1})
    assert result.is_error
    assert "too large" in text(result).lower()


async def test_when_the_wait_runs_out_a_handle_lets_the_status_tool_finish_the_call(store: JobStore) -> None:
    short = dataclasses.replace(QUICK, wait=0.2, min_interval=0.01)
    async with jobs_client(store, follow=short) as client:
        first = await client.call_tool("startJob", {"kind": "hang"})
        assert not first.is_error  # not a failure: the operation runs on
        pending = payload(first)
        assert pending["status"] == "running" and pending["state"] == "running"
        assert pending["operation"].startswith("op_") and STATUS_TOOL in pending["check_again"]
        assert "/v1/jobs" not in json.dumps(pending)  # a handle, never the status URL
        store.release("job-1")
        done = await client.call_tool(STATUS_TOOL, {"operation": pending["operation"]})
        assert not done.is_error, text(done)
        assert payload(done)["lines"] == ["job-1 done"]
        again = await client.call_tool(STATUS_TOOL, {"operation": pending["operation"]})
        forged = await client.call_tool(STATUS_TOOL, {"operation": "op_" + "A" * 24})
    assert again.is_error and forged.is_error  # a finished operation's handle is gone; a made-up one never was
    assert "handle is unknown" in text(forged) and "before starting it again" in text(forged)


async def test_the_status_tool_is_listed_only_when_the_api_has_long_running_operations(store: JobStore) -> None:
    from tests.security.harness import bridge_client

    async with jobs_client(store) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert names.count(STATUS_TOOL) == 1
    async with bridge_client("http://127.0.0.1:9/v1") as plain:  # an API without any
        assert STATUS_TOOL not in [tool.name for tool in (await plain.list_tools()).tools]


async def test_following_stops_at_the_deadline(store: JobStore) -> None:
    short = dataclasses.replace(QUICK, wait=0.1, deadline=0.3, min_interval=0.01)
    async with jobs_client(store, follow=short) as client:
        result = first = await client.call_tool("startJob", {"kind": "hang"})
        # Each check waits at most `wait`; the deadline ends them, however slow the machine (on a loaded one
        # the start itself may already reach it), and WAIT bounds the loop.
        with anyio.fail_after(WAIT):
            while not result.is_error:
                result = await client.call_tool(STATUS_TOOL, {"operation": payload(first)["operation"]})
    assert "stopped following it after 0.3 s" in text(result)


async def test_a_wait_that_overruns_the_deadline_answers_the_deadline(
    store: JobStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A poll that returns after the deadline (a slow upstream, a loaded machine) once left the entry
    # remembered past its deadline, swept at once: the next check found "no operation".
    from bridge.calls.longrunning import tracker

    short = dataclasses.replace(QUICK, wait=0.05, deadline=0.1, min_interval=0.01)
    real = tracker.poll_until

    async def slow(pending: Any, *args: Any) -> Any:
        try:
            return await real(pending, *args)
        finally:  # bounded: until just past the operation's deadline
            await anyio.sleep(max(0.0, pending.started + short.deadline - anyio.current_time()) + 0.01)

    monkeypatch.setattr(tracker, "poll_until", slow)
    async with jobs_client(store, follow=short) as client:
        result = await client.call_tool("startJob", {"kind": "hang"})
    assert result.is_error and "stopped following it after 0.1 s" in text(result)


async def test_cancelling_the_call_stops_polling_and_calls_the_apis_cancel(store: JobStore) -> None:
    async with jobs_client(store) as client:
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "startJob", {"kind": "hang"})
            with anyio.fail_after(WAIT):
                await store.polled("job-1", 2)
            group.cancel_scope.cancel()
        with anyio.fail_after(WAIT):
            while not store.cancelled:
                await store._changed.wait()
        polls = len(store.polls())
        await client.call_tool("listJobs", {})  # a round trip later, no poll has been added
    assert store.cancelled == ["job-1"]
    assert len(store.polls()) == polls
    assert store.requests[-2][:2] == ("DELETE", "/v1/jobs/job-1")  # the link's $response.body#/id


async def test_a_program_awaits_a_long_running_operation(store: JobStore) -> None:
    program = 'job = await startJob(kind="report", steps=2)\n{"lines": job["lines"]}'
    async with jobs_client(store, options=ServeOptions(mode="code")) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool("run_code", {"code": program})
    assert STATUS_TOOL in names
    assert not result.is_error, text(result)
    assert payload(result)["result"] == {"lines": ["job-1 done"]}


async def test_discovery_mode_follows_too(store: JobStore) -> None:
    async with jobs_client(store, options=ServeOptions(mode="discovery")) as client:
        result = await client.call_tool(
            "call_operation", {"name": "startJob", "arguments": {"kind": "inline", "steps": 2}}
        )
    assert not result.is_error, text(result)
    assert payload(result)["status"] == "succeeded"


async def test_a_program_gets_a_handle_before_its_time_is_up_and_the_operation_runs_on(store: JobStore) -> None:
    from bridge.modes.sandbox import SandboxLimits

    program = (
        "try:\n"
        '    await startJob(kind="hang")\n'
        '    outcome = "done"\n'
        "except ApiError as error:\n"
        "    outcome = str(error)\n"
        "outcome"
    )
    options = ServeOptions(mode="code", sandbox=SandboxLimits(wall_seconds=2.0))
    async with jobs_client(store, options=options) as client:
        result = await client.call_tool("run_code", {"code": program})
    assert not result.is_error, text(result)
    outcome = payload(result)["result"]
    assert "still running" in outcome and STATUS_TOOL in outcome
    assert store.cancelled == []
