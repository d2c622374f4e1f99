"""Shared pools have a share per caller: two official in-memory clients of one bridge over the jobs API.

One caller filling its share of tasks or of operation handles must neither lock the other out
nor push the other's entries out, must never read them, and a lost handle must never tell the
model to start a write again.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import mcp_types
import pytest
from mcp import Client, MCPError

from bridge.calls.longrunning.tracker import STATUS_TOOL
from bridge.confirm import asking
from bridge.confirm.policy import ConfirmSettings
from bridge.server import tasks
from bridge.serving.assemble import ServeOptions
from tests.bridge.calls.longrunning.harness import QUICK, jobs_server
from tests.bridge.calls.longrunning.jobs_upstream import JobStore, serve_jobs

pytestmark = pytest.mark.anyio
WAIT = 10.0
DAY_MS = 24 * 3_600_000


@pytest.fixture
async def store(anyio_backend: str) -> Any:
    async with serve_jobs() as running:
        yield running


@asynccontextmanager
async def two_clients(
    store: JobStore, mode: str = "legacy", user: Any = None, **server: Any
) -> AsyncIterator[tuple[Client, Client]]:
    async with jobs_server(store, **server) as bridge, AsyncExitStack() as stack:
        first = await stack.enter_async_context(Client(bridge, mode=mode, elicitation_callback=user))
        second = await stack.enter_async_context(Client(bridge, mode=mode, elicitation_callback=user))
        yield first, second


def raw(client: Client) -> Any:
    return client.session._dispatcher.send_raw_request


def text(result: mcp_types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, mcp_types.TextContent)
    return block.text


async def test_one_caller_filling_its_task_share_locks_nobody_else_out_and_ttls_are_capped(store: JobStore) -> None:
    async with two_clients(store) as (greedy, other):
        made = []
        with pytest.raises(MCPError) as refused:
            for _ in range(tasks.TASKS_PER_CALLER + 1):  # quick tasks asking to be kept a day
                task = {"ttl": DAY_MS}
                made.append(
                    await raw(greedy)("tools/call", {"name": "startJob", "arguments": {"kind": "inline"}, "task": task})
                )
        created = await raw(other)("tools/call", {"name": "startJob", "arguments": {"kind": "inline"}, "task": {}})
        with anyio.fail_after(WAIT):
            result = await raw(other)("tasks/result", {"taskId": created["task"]["taskId"]})
        greedy_list = await raw(greedy)("tasks/list", {})
        other_list = await raw(other)("tasks/list", {})
    assert len(made) == tasks.TASKS_PER_CALLER
    assert (
        refused.value.error.code == mcp_types.INVALID_REQUEST and "most one caller may" in refused.value.error.message
    )
    assert all(entry["task"]["ttl"] <= tasks.MAX_TTL_MS < DAY_MS for entry in made)  # the server caps the ttl
    assert result["structuredContent"]["status"] == "succeeded"
    assert [t["taskId"] for t in other_list["tasks"]] == [created["task"]["taskId"]]
    assert created["task"]["taskId"] not in {t["taskId"] for t in greedy_list["tasks"]}


async def test_a_task_is_read_listed_and_cancelled_only_by_its_caller(store: JobStore) -> None:
    async with two_clients(store) as (owner, stranger):
        created = await raw(owner)("tools/call", {"name": "startJob", "arguments": {"kind": "hang"}, "task": {}})
        task_id = created["task"]["taskId"]
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            with pytest.raises(MCPError) as refused:
                await raw(stranger)(method, {"taskId": task_id})
            assert refused.value.error.code == mcp_types.INVALID_PARAMS
            assert "before starting it again" in refused.value.error.message
        listed = await raw(stranger)("tasks/list", {})
        mine = await raw(owner)("tasks/get", {"taskId": task_id})
    assert listed["tasks"] == [] and mine["status"] == "working"
    assert store.cancelled == []


async def test_one_callers_pending_operations_never_evict_anothers_handle(store: JobStore) -> None:
    follow = dataclasses.replace(QUICK, wait=0.2, keep=4)
    async with two_clients(store, follow=follow) as (patient, flooding):
        first = await patient.call_tool("startJob", {"kind": "hang"})
        handle = json.loads(text(first))["operation"]
        answers = [await flooding.call_tool("startJob", {"kind": "hang"}) for _ in range(follow.keep + 2)]
        store.release("job-1")
        done = await patient.call_tool(STATUS_TOOL, {"operation": handle})
        stolen = await flooding.call_tool(STATUS_TOOL, {"operation": handle})
    assert not done.is_error, text(done)
    assert json.loads(text(done))["lines"] == ["job-1 done"]
    unfollowed = [text(answer) for answer in answers if answer.is_error]
    assert unfollowed, "the flood was never refused a handle"
    for message in unfollowed:  # the operation runs on: the model must look, not start it again
        assert "before starting it again" in message and "call the operation again" not in message.lower()
    assert stolen.is_error and "handle is unknown" in text(stolen) and "before starting it again" in text(stolen)


async def test_one_callers_flood_of_confirmation_rounds_never_spends_anothers(store: JobStore) -> None:
    options = ServeOptions(confirm=ConfirmSettings(level="writes"))
    arguments = {"kind": "inline", "steps": 1}

    async def user(ctx: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="accept", content={"confirm": True})

    async with two_clients(store, mode="auto", user=user, options=options) as (patient, flooding):
        asked = await patient.session.call_tool("startJob", arguments, allow_input_required=True)
        assert isinstance(asked, mcp_types.InputRequiredResult) and asked.request_state
        opened, refused = 0, None
        while refused is None and opened <= asking.MAX_OPEN_ROUNDS:  # today: the oldest rounds go, anyone's
            round_ = await flooding.session.call_tool("startJob", arguments, allow_input_required=True)
            if isinstance(round_, mcp_types.InputRequiredResult):
                opened += 1
            else:
                refused = round_
        yes = {"confirm": mcp_types.ElicitResult(action="accept", content={"confirm": True})}
        answered = await patient.session.call_tool(
            "startJob", arguments, input_responses=yes, request_state=asked.request_state
        )
    assert not answered.is_error, text(answered)
    assert opened == asking.ROUNDS_PER_CALLER
    assert refused is not None and refused.is_error and "nothing was sent" in text(refused)
    assert len(store.jobs) == 1  # only the patient caller's confirmed write went out
