"""MCP tasks (2025-11-25) on long-running tools, over raw JSON-RPC: the Python SDK client has no task methods.

A handshake-era connection (``mode="legacy"``) of the official client sends the requests as a
task-aware client would (``tools/call`` with ``task``, then ``tasks/get``, ``tasks/result``,
``tasks/list``, ``tasks/cancel``); the jobs API on loopback does the long-running work.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
import pytest
from mcp import MCPError

from bridge.confirm.policy import ConfirmSettings
from bridge.server.tasks import RELATED_TASK_KEY
from bridge.serving.assemble import ServeOptions
from tests.bridge.calls.longrunning.harness import jobs_client
from tests.bridge.calls.longrunning.jobs_upstream import JobStore, serve_jobs

pytestmark = pytest.mark.anyio
WAIT = 10.0
TASK = {"ttl": 60_000}


@pytest.fixture
async def store(anyio_backend: str) -> Any:
    async with serve_jobs() as running:
        yield running


def raw(client: Any) -> Any:
    return client.session._dispatcher.send_raw_request


async def test_tasks_are_offered_on_handshake_connections_for_long_running_tools_only(store: JobStore) -> None:
    async with jobs_client(store, mode="legacy") as legacy:
        capability = legacy.server_capabilities.tasks
        listed = {tool["name"]: tool.get("execution") for tool in (await raw(legacy)("tools/list", {}))["tools"]}
    async with jobs_client(store) as modern:
        modern_tools = (await modern.list_tools()).tools
        modern_capability = modern.server_capabilities.tasks
    assert capability is not None and capability.requests is not None
    assert capability.requests.tools is not None and capability.requests.tools.call is not None
    assert capability.list is not None and capability.cancel is not None
    assert {name for name, execution in listed.items() if execution} == {"startJob", "startExport"}
    assert listed["startJob"] == {"taskSupport": "optional"}
    assert modern_capability is None  # 2026-07-28: the SDK carries no tasks; the wait-and-handle path serves
    assert [tool.execution for tool in modern_tools] == [None] * len(modern_tools)  # no such field in 2026-07-28


async def test_a_task_answers_at_once_and_its_result_is_the_final_answer(store: JobStore) -> None:
    async with jobs_client(store, mode="legacy") as client:
        call = raw(client)
        created = await call("tools/call", {"name": "startJob", "arguments": {"kind": "hang"}, "task": TASK})
        task = mcp_types.CreateTaskResult.model_validate(created).task
        assert task.status == "working" and task.ttl == TASK["ttl"] and task.poll_interval
        with anyio.fail_after(WAIT):
            await store.polled("job-1", 2)  # the work runs on after the answer
        assert (await call("tasks/get", {"taskId": task.task_id}))["status"] == "working"
        store.release("job-1")
        with anyio.fail_after(WAIT):
            result = await call("tasks/result", {"taskId": task.task_id})
        final = await call("tasks/get", {"taskId": task.task_id})
        listed = await call("tasks/list", {})
    assert result["structuredContent"]["lines"] == ["job-1 done"]
    assert result["_meta"][RELATED_TASK_KEY] == {"taskId": task.task_id}
    assert final["status"] == "completed"
    assert [t["taskId"] for t in listed["tasks"]] == [task.task_id]


async def test_a_failed_operation_makes_a_failed_task_whose_result_is_the_tool_error(store: JobStore) -> None:
    async with jobs_client(store, mode="legacy") as client:
        call = raw(client)
        created = await call("tools/call", {"name": "startJob", "arguments": {"kind": "fail"}, "task": TASK})
        task_id = created["task"]["taskId"]
        with anyio.fail_after(WAIT):
            result = await call("tasks/result", {"taskId": task_id})
        final = await call("tasks/get", {"taskId": task_id})
    assert result["isError"] is True and "disk full" in result["content"][0]["text"]
    assert final["status"] == "failed" and "disk full" in final["statusMessage"]


async def test_cancelling_a_task_stops_polling_and_calls_the_apis_cancel(store: JobStore) -> None:
    async with jobs_client(store, mode="legacy") as client:
        call = raw(client)
        created = await call("tools/call", {"name": "startJob", "arguments": {"kind": "hang"}, "task": TASK})
        task_id = created["task"]["taskId"]
        with anyio.fail_after(WAIT):
            await store.polled("job-1", 3)
        cancelled = await call("tasks/cancel", {"taskId": task_id})
        with anyio.fail_after(WAIT):
            while not store.cancelled:
                await store._changed.wait()
        polls = len(store.polls())
        await call("tools/list", {})  # a round trip later, no poll has been added
        assert len(store.polls()) == polls
        with pytest.raises(MCPError) as no_result:
            await call("tasks/result", {"taskId": task_id})
        with pytest.raises(MCPError) as again:
            await call("tasks/cancel", {"taskId": task_id})
    assert cancelled["status"] == "cancelled"
    assert store.cancelled == ["job-1"]
    assert no_result.value.error.code == mcp_types.INVALID_PARAMS
    assert again.value.error.code == mcp_types.INVALID_PARAMS  # a terminal task cannot be cancelled


async def test_a_task_for_a_tool_without_task_support_is_refused(store: JobStore) -> None:
    async with jobs_client(store, mode="legacy") as client:
        with pytest.raises(MCPError) as refused:
            await raw(client)("tools/call", {"name": "listJobs", "arguments": {}, "task": TASK})
    assert refused.value.error.code == mcp_types.METHOD_NOT_FOUND
    assert store.requests == []


async def test_bad_arguments_are_answered_at_once_not_as_a_task(store: JobStore) -> None:
    async with jobs_client(store, mode="legacy") as client:
        answer = await raw(client)("tools/call", {"name": "startJob", "arguments": {"steps": "x"}, "task": TASK})
    assert answer["isError"] is True and "kind" in answer["content"][0]["text"]
    assert store.requests == []


async def test_unknown_task_ids_are_refused(store: JobStore) -> None:
    async with jobs_client(store, mode="legacy") as client:
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            with pytest.raises(MCPError) as refused:
                await raw(client)(method, {"taskId": "not-a-task"})
            assert refused.value.error.code == mcp_types.INVALID_PARAMS


async def test_under_confirm_the_user_is_asked_before_the_task_exists(store: JobStore) -> None:
    answers = iter(["decline", "accept"])

    async def answer(ctx: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        action = next(answers)
        return mcp_types.ElicitResult(action=action, content={"confirm": True} if action == "accept" else None)

    options = ServeOptions(confirm=ConfirmSettings(level="writes"))
    async with jobs_client(store, mode="legacy", options=options, elicitation_callback=answer) as client:
        call = raw(client)
        declined = await call("tools/call", {"name": "startJob", "arguments": {"kind": "inline"}, "task": TASK})
        assert store.requests == []  # declined: no task, nothing sent
        created = await call("tools/call", {"name": "startJob", "arguments": {"kind": "inline"}, "task": TASK})
        with anyio.fail_after(WAIT):
            result = await call("tasks/result", {"taskId": created["task"]["taskId"]})
        listed = await call("tasks/list", {})
    assert declined["isError"] is True and "declined" in declined["content"][0]["text"]
    assert "task" not in declined
    assert result["structuredContent"]["status"] == "succeeded"
    assert len(listed["tasks"]) == 1


async def test_a_server_that_stops_abandons_its_tasks_without_cancelling_their_operations(store: JobStore) -> None:
    async with jobs_client(store, mode="legacy") as client:
        await raw(client)("tools/call", {"name": "startJob", "arguments": {"kind": "hang"}, "task": TASK})
        with anyio.fail_after(WAIT):
            await store.polled("job-1", 2)
    polls = len(store.polls())
    async with jobs_client(store, mode="legacy") as other:  # a round trip on a new server: the old one is gone
        await raw(other)("tools/list", {})
    assert store.cancelled == []  # the job may finish without us; stopping is not the user's cancel
    assert len(store.polls()) == polls


async def test_tasks_are_capped_and_forgotten_after_their_ttl(store: JobStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from bridge.server import tasks

    monkeypatch.setattr(tasks, "MAX_TASKS", 2)
    async with jobs_client(store, mode="legacy") as client:
        call = raw(client)
        short = await call("tools/call", {"name": "startJob", "arguments": {"kind": "inline"}, "task": {"ttl": 1}})
        with anyio.fail_after(WAIT):
            await call("tasks/result", {"taskId": short["task"]["taskId"]})
        await call("tools/call", {"name": "startJob", "arguments": {"kind": "hang"}, "task": TASK})
        await call("tools/call", {"name": "startJob", "arguments": {"kind": "hang"}, "task": TASK})
        with pytest.raises(MCPError) as full:
            await call("tools/call", {"name": "startJob", "arguments": {"kind": "hang"}, "task": TASK})
        with pytest.raises(MCPError) as forgotten:  # ended 1 ms after its start: gone
            await call("tasks/get", {"taskId": short["task"]["taskId"]})
    assert full.value.error.code == mcp_types.INVALID_REQUEST
    assert forgotten.value.error.code == mcp_types.INVALID_PARAMS
    assert len(store.jobs) == 3  # the refused one was never started
