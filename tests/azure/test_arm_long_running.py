"""Azure Resource Manager long-running operations (issue 31): a PUT answering 201 with
``Azure-AsyncOperation`` and ``provisioningState: Creating`` is followed to the end, and the final
answer comes from where ``final-state-via`` says, against a fake upstream that behaves like ARM."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bridge.serving.assemble import ServeOptions, build_bridge_server, build_registry, build_runtime
from bridge.serving.package import load_catalogue
from generator.generate import generate
from generator.options import GenerateOptions
from tests.bridge.calls.longrunning.harness import QUICK
from tests.bridge.fake_upstream import FakeUpstream, Recorded, Reply, make_reply

SPEC = Path(__file__).resolve().parent / "arm_widgets.json"
BASE = "http://upstream.test"
WIDGET = "/subscriptions/s1/resourceGroups/rg/providers/Contoso.Widgets/widgets/w1"
STATUS = "/subscriptions/s1/providers/Contoso.Widgets/locations/westus/operationStatuses/op1"
RESULT = "/subscriptions/s1/providers/Contoso.Widgets/locations/westus/operationResults/op1"
ARGS = {"subscriptionId": "s1", "resourceGroupName": "rg", "widgetName": "w1"}


class Arm:
    """A fake ARM provider: one widget whose creation takes ``polls`` status checks."""

    def __init__(self, *, polls: int = 2, status_header: bool = True, first: int = 201) -> None:
        self.polls = polls
        self.status_header = status_header
        self.first = first
        self.checks = 0
        self.state = "Creating"

    def widget(self) -> dict[str, Any]:
        return {"id": WIDGET, "name": "w1", "properties": {"color": "red", "provisioningState": self.state}}

    def _advance(self) -> None:
        self.checks += 1
        if self.checks >= self.polls:
            self.state = "Succeeded"

    def __call__(self, request: Recorded) -> Reply:
        quick = {"Retry-After": "0"}
        if request.method == "PUT" and request.raw_path == WIDGET:
            headers = {"Azure-AsyncOperation": f"{BASE}{STATUS}?api-version=2024-03-01"} if self.status_header else {}
            return make_reply(self.first, json_body=self.widget(), headers={**headers, **quick})
        if request.method == "POST" and request.raw_path == f"{WIDGET}/polish":
            headers = {"Location": f"{BASE}{RESULT}", "Azure-AsyncOperation": f"{BASE}{STATUS}", **quick}
            return make_reply(202, headers=headers)
        if request.method == "GET" and request.raw_path == STATUS:
            self._advance()
            status = "Succeeded" if self.state == "Succeeded" else "InProgress"
            return make_reply(200, json_body={"id": STATUS, "status": status}, headers=quick)
        if request.method == "GET" and request.raw_path == WIDGET:
            if not self.status_header:
                self._advance()
            return make_reply(200, json_body=self.widget(), headers=quick)
        if request.method == "GET" and request.raw_path == RESULT:
            return make_reply(200, json_body={"id": WIDGET, "polished": True})
        return make_reply(404, json_body={"error": {"code": "NotFound"}})


async def _call(tmp_path: Path, arm: Callable[[Recorded], Reply], tool: str, args: dict[str, Any]) -> tuple[Any, Any]:
    generate(str(SPEC), tmp_path / "pkg", GenerateOptions())
    catalogue = load_catalogue(tmp_path / "pkg")
    fake = FakeUpstream()
    fake.handler(arm)
    options = ServeOptions(base_url=BASE, long_running=QUICK)
    runtime = build_runtime(catalogue, options, environ={}, transport=fake.transport())
    async with runtime:
        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, tmp_path / "pkg"))
        async with Client(server) as client:
            result = await client.call_tool(tool, args)
    return result, fake


def _json(result: Any) -> Any:
    return json.loads("".join(block.text for block in result.content if hasattr(block, "text")))


@pytest.mark.anyio
async def test_a_put_answering_201_with_azure_asyncoperation_is_followed_to_the_final_resource(tmp_path: Path) -> None:
    arm = Arm(polls=2)
    result, fake = await _call(tmp_path, arm, "Widgets_CreateOrUpdate", {**ARGS, "properties": {"color": "red"}})
    assert not result.is_error, result.content
    sent = [(r.method, r.raw_path) for r in fake.requests]
    assert sent == [("PUT", WIDGET), ("GET", STATUS), ("GET", STATUS), ("GET", WIDGET)]
    assert ("api-version", "2024-03-01") in fake.requests[0].query_pairs
    assert _json(result)["properties"]["provisioningState"] == "Succeeded"


@pytest.mark.anyio
async def test_a_201_still_creating_with_no_status_url_polls_the_resource_itself(tmp_path: Path) -> None:
    arm = Arm(polls=3, status_header=False)
    result, fake = await _call(tmp_path, arm, "Widgets_CreateOrUpdate", {**ARGS, "properties": {"color": "red"}})
    assert not result.is_error, result.content
    sent = [(r.method, r.raw_path) for r in fake.requests]
    assert sent == [("PUT", WIDGET)] + [("GET", WIDGET)] * 3
    assert _json(result)["properties"]["provisioningState"] == "Succeeded"


@pytest.mark.anyio
async def test_a_200_already_succeeded_with_no_status_url_is_the_answer(tmp_path: Path) -> None:
    arm = Arm(polls=0, status_header=False, first=200)
    arm.state = "Succeeded"
    result, fake = await _call(tmp_path, arm, "Widgets_CreateOrUpdate", {**ARGS, "properties": {"color": "red"}})
    assert not result.is_error and len(fake.requests) == 1


@pytest.mark.anyio
async def test_final_state_via_location_fetches_the_first_answers_location(tmp_path: Path) -> None:
    result, fake = await _call(tmp_path, Arm(polls=1), "Widgets_Polish", ARGS)
    assert not result.is_error, result.content
    sent = [(r.method, r.raw_path) for r in fake.requests]
    assert sent == [("POST", f"{WIDGET}/polish"), ("GET", STATUS), ("GET", RESULT)]
    assert _json(result) == {"id": WIDGET, "polished": True}
