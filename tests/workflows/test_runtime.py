"""Workflows run through the call core: actions, criteria, failures, cancel, progress, credentials, scopes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from bridge.workflows.runner import MAX_STEPS
from tests.bridge.fake_upstream import Recorded, Reply, make_reply
from tests.workflows.harness import TOKEN, arazzo, served, shop_upstream, text

pytestmark = pytest.mark.anyio

ORDER_ITEM: dict[str, Any] = {
    "workflowId": "order-item",
    "summary": "Order the first item matching a search.",
    "inputs": {
        "type": "object",
        "required": ["query"],
        "properties": {"query": {"type": "string"}, "quantity": {"type": "integer"}, "note": {"type": "string"}},
    },
    "steps": [
        {
            "stepId": "find",
            "operationId": "listItems",
            "parameters": [{"name": "q", "in": "query", "value": "$inputs.query"}],
            "successCriteria": [{"condition": "$statusCode == 200"}],
            "outputs": {"item": "$response.body#/0/id", "name": "$response.body#/0/name"},
        },
        {
            "stepId": "order",
            "operationId": "createOrder",
            "requestBody": {
                "contentType": "application/json",
                "payload": {
                    "itemId": "$steps.find.outputs.item",
                    "quantity": "$inputs.quantity",
                    "note": "for {$inputs.query}",
                },
                "replacements": [{"target": "/note", "value": "$steps.find.outputs.name"}],
            },
            "outputs": {"order": "$response.body#/id"},
        },
        {
            "stepId": "wait",
            "operationId": "getOrder",
            "parameters": [{"name": "id", "in": "path", "value": "$steps.order.outputs.order"}],
            "successCriteria": [{"condition": "$response.body#/status == 'DONE'"}],
            "onFailure": [{"name": "again", "type": "retry", "retryAfter": 0, "retryLimit": 3}],
            "outputs": {"status": "$response.body#/status"},
        },
    ],
    "outputs": {"order": "$steps.order.outputs.order", "status": "$steps.wait.outputs.status"},
}


def shop(statuses: list[str] | None = None) -> tuple[Any, list[str]]:
    """A fake shop whose order becomes done after ``statuses``."""
    fake = shop_upstream()
    pending = list(statuses or [])

    def handle(r: Recorded) -> Reply:
        if r.raw_path == "/items":
            return make_reply(
                json_body=[{"id": 7, "name": "lamp", "price": 12.5}, {"id": 8, "name": "rug", "price": 3}]
            )
        if r.raw_path == "/orders":
            return make_reply(json_body={"id": 41, "status": "new"})
        if r.raw_path == "/orders/41":
            return make_reply(json_body={"id": 41, "status": pending.pop(0) if pending else "done"})
        if r.raw_path == "/items/7":
            return make_reply(json_body={"id": 7, "name": "lamp", "price": 12.5})
        return make_reply(404, json_body={"message": "no"})

    fake.handler(handle)
    return fake, pending


async def test_a_workflow_runs_each_step_through_the_call_core_and_returns_its_outputs(tmp_path: Path) -> None:
    fake, _ = shop(["new", "packing"])
    async with served(tmp_path, arazzo(ORDER_ITEM), fake) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool("order-item", {"query": "lamp"})
    assert not result.is_error, text(result)
    assert result.structured_content == {"order": 41, "status": "done"}
    tool = listed["order-item"]
    assert tool.output_schema == {
        "type": "object",
        "properties": {"order": {"type": "integer"}, "status": {"type": "string"}},
    }
    assert tool.annotations is not None and tool.annotations.read_only_hint is False
    targets = [f"{r.method} {r.target}" for r in fake.requests]
    assert targets == ["GET /items?q=lamp", "POST /orders", "GET /orders/41", "GET /orders/41", "GET /orders/41"]
    # `quantity` was not given: its member is left out; the replacement put the item's name in `note`.
    assert fake.requests[1].json() == {"itemId": 7, "note": "lamp"}
    assert all(r.header("authorization") == f"Bearer {TOKEN}" for r in fake.requests)
    assert fake.violations == []


async def test_retry_gives_up_after_its_limit_and_the_error_names_step_operation_and_criterion(tmp_path: Path) -> None:
    fake, _ = shop(["new"] * 10)
    async with served(tmp_path, arazzo(ORDER_ITEM), fake) as client:
        result = await client.call_tool("order-item", {"query": "lamp"})
    assert result.is_error
    message = text(result)
    assert "step 'wait'" in message and "GET /orders/{id}" in message
    assert "$response.body#/status == 'DONE'" in message
    assert [r.target for r in fake.requests].count("/orders/41") == 4  # the try and its 3 retries


GOTO: dict[str, Any] = {
    "workflowId": "poll",
    "inputs": {"type": "object", "properties": {"id": {"type": "integer"}}},
    "steps": [
        {
            "stepId": "look",
            "operationId": "getOrder",
            "parameters": [{"name": "id", "in": "path", "value": "$inputs.id"}],
            "onSuccess": [
                {"name": "done", "type": "end", "criteria": [{"condition": "$response.body#/status == 'done'"}]},
                {"name": "again", "type": "goto", "stepId": "look"},
            ],
            "outputs": {"status": "$response.body#/status"},
        },
        {"stepId": "never", "operationId": "cancelOrder", "parameters": [{"name": "id", "in": "path", "value": 1}]},
    ],
    "outputs": {"status": "$steps.look.outputs.status"},
}


async def test_goto_loops_until_an_end_action_matches_and_later_steps_do_not_run(tmp_path: Path) -> None:
    fake, _ = shop(["new", "new", "packing"])
    async with served(tmp_path, arazzo(GOTO), fake) as client:
        result = await client.call_tool("poll", {"id": 41})
    assert result.structured_content == {"status": "done"}
    assert [f"{r.method} {r.target}" for r in fake.requests] == ["GET /orders/41"] * 4


async def test_an_unbounded_goto_stops_at_the_step_bound_with_a_tool_error(tmp_path: Path) -> None:
    fake, _ = shop(["new"] * 1000)
    async with served(tmp_path, arazzo(GOTO), fake) as client:
        result = await client.call_tool("poll", {"id": 41})
    assert result.is_error and f"at most {MAX_STEPS} steps" in text(result)
    assert len(fake.requests) == MAX_STEPS


def _check(criteria: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "workflowId": "check",
        "steps": [
            {
                "stepId": "item",
                "operationId": "getItem",
                "parameters": [{"name": "id", "in": "path", "value": 7}],
                "successCriteria": criteria,
                "outputs": {"name": "$response.body#/name"},
            }
        ],
        "outputs": {"name": "$steps.item.outputs.name"},
    }


@pytest.mark.parametrize(
    ("criterion", "passes"),
    [
        ({"condition": "$statusCode == 200 && $response.body#/price > 10"}, True),
        ({"condition": "$response.body#/name == 'LAMP'"}, True),  # strings compare case-insensitively
        ({"condition": "$statusCode == 201 || !($response.body#/price >= 10)"}, False),
        ({"context": "$statusCode", "condition": "^2\\d\\d$", "type": "regex"}, True),
        ({"context": "$response.body#/name", "condition": "^rug$", "type": "regex"}, False),
        ({"context": "$response.body", "condition": "$[?@.price > 10]", "type": "jsonpath"}, True),
        ({"context": "$response.body", "condition": "$.missing", "type": "jsonpath"}, False),
        ({"context": "$response.body", "condition": "$[?match(@.name, 'l.*p')]", "type": "jsonpath"}, True),
        ({"context": "$response.body", "condition": "$[?match(@.name, '(a+)+$')]", "type": "jsonpath"}, False),
    ],
)
async def test_each_criteria_form_decides_the_step(tmp_path: Path, criterion: dict[str, Any], passes: bool) -> None:
    fake, _ = shop()
    async with served(tmp_path, arazzo(_check([criterion])), fake) as client:
        result = await client.call_tool("check", {})
    assert result.is_error is not passes, text(result)
    if passes:
        assert result.structured_content == {"name": "lamp"}
    else:
        assert "step 'item'" in text(result) and "GET /items/{id}" in text(result)


async def test_a_failure_action_end_stops_the_workflow_with_the_outputs_so_far(tmp_path: Path) -> None:
    flow = _check([{"condition": "$statusCode == 200"}])
    flow["steps"][0]["parameters"][0]["value"] = 999
    flow["steps"][0]["onFailure"] = [{"name": "gone", "type": "end", "criteria": [{"condition": "$statusCode == 404"}]}]
    flow["outputs"]["code"] = "$steps.item.outputs.code"
    flow["steps"][0]["outputs"]["code"] = "$statusCode"
    fake, _ = shop()
    async with served(tmp_path, arazzo(flow), fake) as client:
        result = await client.call_tool("check", {})
    assert not result.is_error and result.structured_content == {"code": 404}


async def test_a_step_whose_arguments_are_invalid_fails_before_its_request_naming_the_step(tmp_path: Path) -> None:
    flow = _check([{"condition": "$statusCode == 200"}])
    flow["steps"][0]["parameters"][0]["value"] = "not-a-number"
    fake, _ = shop()
    async with served(tmp_path, arazzo(flow), fake) as client:
        result = await client.call_tool("check", {})
    assert result.is_error and "step 'item' (GET /items/{id})" in text(result) and "id: " in text(result)
    assert fake.requests == []


async def test_cancelling_the_call_cancels_the_step_in_flight_and_no_later_step_runs(tmp_path: Path) -> None:
    started, cancelled = anyio.Event(), anyio.Event()
    fake = shop_upstream()

    async def handle(r: Recorded) -> Reply:
        if r.raw_path == "/items" and not started.is_set():
            started.set()
            try:
                await anyio.Event().wait()
            except anyio.get_cancelled_exc_class():
                cancelled.set()
                raise
        return make_reply(json_body={"id": 1, "status": "new"})

    fake.handler(handle)
    results: list[Any] = []
    async with served(tmp_path, arazzo(ORDER_ITEM), fake) as client:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    results.append(await client.call_tool("order-item", {"query": "lamp"}))

                tg.start_soon(call)
                await started.wait()
                tg.cancel_scope.cancel()
            await cancelled.wait()
        after = await client.call_tool("listItems", {})
    assert results == [] and not after.is_error, text(after)
    assert [r.target for r in fake.requests] == ["/items?q=lamp", "/items"]


async def test_progress_goes_out_once_per_step(tmp_path: Path) -> None:
    fake, _ = shop(["new"])
    seen: list[tuple[float, str | None]] = []
    done = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))
        if len(seen) == 4:
            done.set()

    async with served(tmp_path, arazzo(ORDER_ITEM), fake) as client:
        result = await client.call_tool("order-item", {"query": "lamp"}, progress_callback=on_progress)
        with anyio.fail_after(5):
            await done.wait()
    assert not result.is_error
    assert [p for p, _ in seen] == [1, 2, 3, 4]
    assert seen[0][1] == "order-item: step find (GET /items)" and "step wait" in (seen[3][1] or "")


LOGIN: dict[str, Any] = {
    "workflowId": "whoami",
    "inputs": {"type": "object", "properties": {"user": {"type": "string"}}},
    "steps": [
        {
            "stepId": "login",
            "operationId": "login",
            "parameters": [{"name": "user", "in": "query", "value": "$inputs.user"}],
            "outputs": {"session": "$response.body", "expires": "$response.header.X-Expires-After"},
        },
        {
            "stepId": "me",
            "operationId": "me",
            "parameters": [{"name": "Authorization", "in": "header", "value": "Bearer {$steps.login.outputs.session}"}],
            "outputs": {"user": "$response.body#/user"},
        },
    ],
    "outputs": {"user": "$steps.me.outputs.user", "session": "$steps.login.outputs.session"},
}


async def test_a_credential_a_step_returns_authorises_the_next_step_and_never_reaches_the_model(tmp_path: Path) -> None:
    fake = shop_upstream()
    session = "sess-7f3a9c2e-41b8-4d1e"

    def handle(r: Recorded) -> Reply:
        if r.raw_path.startswith("/login"):
            return make_reply(json_body=session, headers={"X-Expires-After": "soon"})
        return make_reply(json_body={"user": "alice"})

    fake.handler(handle)
    async with served(tmp_path, arazzo(LOGIN), fake) as client:
        result = await client.call_tool("whoami", {"user": "alice"})
    assert not result.is_error, text(result)
    assert fake.requests[1].header("authorization") == f"Bearer {session}"
    assert result.structured_content is not None and result.structured_content["user"] == "alice"
    assert session not in text(result) and session not in str(result.structured_content)
    assert fake.violations == []


@pytest.fixture
def reader() -> Iterator[None]:
    token = AccessToken(token="t", client_id="c", scopes=["items:read"], subject="alice")
    reset = auth_context_var.set(AuthenticatedUser(token))
    yield
    auth_context_var.reset(reset)


async def test_a_workflow_needs_every_scope_of_its_steps_unlisted_and_uncallable_without(
    tmp_path: Path, reader: None
) -> None:
    fake, _ = shop()
    async with served(tmp_path, arazzo(ORDER_ITEM, _check([{"condition": "$statusCode == 200"}])), fake) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        refused = await client.call_tool("order-item", {"query": "lamp"})
        allowed = await client.call_tool("check", {})
    assert "check" in names and "order-item" not in names and "createOrder" not in names
    assert refused.is_error and "orders:write" in text(refused)
    assert not allowed.is_error
    assert [r.target for r in fake.requests] == ["/items/7"]


async def test_depends_on_runs_first_and_goto_a_workflow_hands_over_to_it(tmp_path: Path) -> None:
    first = {
        "workflowId": "first",
        "steps": [{"stepId": "list", "operationId": "listItems", "outputs": {"top": "$response.body#/0/id"}}],
        "outputs": {"top": "$steps.list.outputs.top"},
    }
    main = {
        "workflowId": "main",
        "dependsOn": ["first"],
        "inputs": {"type": "object", "properties": {"id": {"type": "integer"}}},
        "steps": [
            {
                "stepId": "item",
                "operationId": "getItem",
                "parameters": [{"name": "id", "in": "path", "value": "$workflows.first.outputs.top"}],
                "onSuccess": [{"name": "hand-over", "type": "goto", "workflowId": "poll"}],
                "outputs": {"name": "$response.body#/name"},
            },
            {"stepId": "never", "operationId": "cancelOrder", "parameters": [{"name": "id", "in": "path", "value": 1}]},
        ],
        "outputs": {"name": "$steps.item.outputs.name", "polled": "$workflows.poll.outputs.status"},
    }
    fake, _ = shop()
    async with served(tmp_path, arazzo(first, main, GOTO), fake) as client:
        result = await client.call_tool("main", {"id": 41})  # `poll` gets the inputs it declares
    assert not result.is_error, text(result)
    assert result.structured_content == {"name": "lamp", "polled": "done"}
    assert [f"{r.method} {r.target}" for r in fake.requests][:2] == ["GET /items", "GET /items/7"]
    assert "DELETE /orders/1" not in [f"{r.method} {r.target}" for r in fake.requests]


async def test_a_retry_may_run_another_step_first(tmp_path: Path) -> None:
    flow = {
        "workflowId": "refresh",
        "steps": [
            {
                "stepId": "look",
                "operationId": "getOrder",
                "parameters": [{"name": "id", "in": "path", "value": 41}],
                "successCriteria": [{"condition": "$response.body#/status == 'done'"}],
                "onFailure": [{"name": "nudge", "type": "retry", "stepId": "nudge", "retryLimit": 2}],
                "outputs": {"status": "$response.body#/status"},
            },
            {"stepId": "nudge", "operationId": "listItems"},
        ],
        "outputs": {"status": "$steps.look.outputs.status"},
    }
    fake, _ = shop(["new"])
    async with served(tmp_path, arazzo(flow), fake) as client:
        result = await client.call_tool("refresh", {})
    assert result.structured_content == {"status": "done"}
    assert [r.target for r in fake.requests] == ["/orders/41", "/items", "/orders/41", "/items"]
