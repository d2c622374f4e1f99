"""A success criterion an author wrote runs off the event loop and within a time budget: a second
session's quick call completes while ``$..*..*..*`` grinds through a big upstream answer, and the
hostile criterion ends the step with an error that names it, not a guess."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from bridge.calls.runtime import HttpRuntime
from bridge.serving.assemble import build_bridge_server, build_registry
from bridge.workflows import evaluate
from generator.generate import GenerateOptions, build_catalogue
from tests.bridge.fake_upstream import Recorded, Reply, make_reply
from tests.workflows.harness import ENV, UPSTREAM, arazzo, shop_upstream, text, write

pytestmark = pytest.mark.anyio

WAIT = 60.0
HOSTILE = "$..*..*..*"  # cubic in the answer's nodes


def big_answer(items: int = 4000) -> list[dict[str, Any]]:
    """About 420 KB of JSON, the red team's answer size: ``$..*..*..*`` takes seconds on it."""
    return [
        {"id": i, "name": f"item {i}", "tags": ["a", "b", "c"], "price": {"amount": i, "currency": "EUR"}}
        for i in range(items)
    ]


def hostile_flow(condition: str = HOSTILE) -> dict[str, Any]:
    return {
        "workflowId": "grind",
        "steps": [
            {
                "stepId": "list",
                "operationId": "listItems",
                "successCriteria": [{"context": "$response.body", "condition": condition, "type": "jsonpath"}],
            }
        ],
    }


@asynccontextmanager
async def two_sessions(tmp_path: Path, document: dict[str, Any], listed: anyio.Event) -> AsyncIterator[list[Client]]:
    fake = shop_upstream()
    answer = big_answer()

    def handle(r: Recorded) -> Reply:
        if r.raw_path.startswith("/items/"):
            return make_reply(json_body={"id": 7, "name": "lamp", "price": 12.5})
        listed.set()
        return make_reply(json_body=answer)

    fake.handler(handle)
    spec_path, flows = write(tmp_path, document)
    catalogue, _ = build_catalogue(str(spec_path), GenerateOptions(workflows=(str(flows),)))
    runtime = HttpRuntime.create(catalogue, base_url=UPSTREAM, environ=ENV, transport=fake.transport())
    async with runtime:
        registry = build_registry(catalogue, runtime, None)
        server = build_bridge_server(catalogue, registry, redact=runtime.credentials.redact, runtime=runtime)
        async with Client(server) as first, Client(server) as second:
            yield [first, second]


async def test_a_second_sessions_call_completes_while_a_hostile_criterion_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A budget far above the quick call's time, so the order below says where the criterion ran.
    monkeypatch.setattr(evaluate, "JSONPATH_SECONDS", 5.0, raising=False)  # absent before the budget
    monkeypatch.setattr(evaluate, "JSONPATH_VISITS", 10**9)
    listed = anyio.Event()
    started = threading.Event()  # set where the criterion runs: a worker thread, or the loop itself
    real = evaluate.compile_query

    def compile_and_signal(condition: str) -> Any:
        started.set()
        return real(condition)

    monkeypatch.setattr(evaluate, "compile_query", compile_and_signal)
    finished: list[str] = []
    results: dict[str, Any] = {}

    async def call(client: Client, name: str, tool: str, arguments: dict[str, Any]) -> None:
        results[name] = await client.call_tool(tool, arguments)
        finished.append(name)

    async with two_sessions(tmp_path, arazzo(hostile_flow()), listed) as (first, second):
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call, first, "hostile", "grind", {})
                await listed.wait()
                while not started.is_set():  # bounded by fail_after; on the loop, this waits out the criterion
                    await anyio.sleep(0.01)
                await call(second, "quick", "getItem", {"id": 7})
    assert finished == ["quick", "hostile"]
    assert results["quick"].is_error is False
    message = text(results["hostile"])
    assert not results["hostile"].is_error or ("step 'list'" in message and "ran for more than 5 s" in message)


async def test_a_criterion_over_its_time_budget_fails_the_step_naming_it(tmp_path: Path) -> None:
    async with two_sessions(tmp_path, arazzo(hostile_flow()), anyio.Event()) as (client, _):
        with anyio.fail_after(WAIT):
            result = await client.call_tool("grind", {})
    message = text(result)
    assert result.is_error and "failed unexpectedly" not in message
    assert "a criterion was stopped" in message and "narrow the query" in message and repr(HOSTILE) in message
    # Its time budget, or on a fast machine its node budget, whichever comes first: a stop either way.
    assert f"ran for more than {evaluate.JSONPATH_SECONDS:g} s" in message or "nodes of the document" in message


async def test_a_cheap_criterion_on_the_same_answer_still_decides_the_step(tmp_path: Path) -> None:
    async with two_sessions(tmp_path, arazzo(hostile_flow("$[?@.id == 1999]")), anyio.Event()) as (client, _):
        result = await client.call_tool("grind", {})
    assert result.is_error is False, text(result)
