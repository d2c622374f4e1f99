"""An AWS query-protocol API (writes sent as ``GET /?Action=TerminateInstances``) served: what reaches the API.

The package is generated from an excerpt of EC2 (tests/generator/parse/data/ec2_excerpt.yaml): every
action as GET and POST. The upstream records every request it gets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from bridge.confirm.policy import ConfirmSettings, covers
from bridge.modes.codemode import RUN_QUERY
from bridge.resources.uris import template_for
from bridge.serving.package import load_catalogue
from generator.generate import generate
from generator.options import GenerateOptions
from tests.bridge.modes.codemode.harness import code_client, text

pytestmark = pytest.mark.anyio

EXCERPT = Path(__file__).parents[3] / "generator" / "parse" / "data" / "ec2_excerpt.yaml"
# What an EC2 action reads by: its verb. Written here from AWS's documentation, not from the code's list.
READ_ACTIONS = ("Describe", "Get")


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ec2") / "ec2"
    generate(str(EXCERPT), out, GenerateOptions())
    return out


def _arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Valid arguments: each required one its only enum value, or an instance id."""
    properties = schema.get("properties", {})
    return {name: properties[name].get("enum", ["i-0abc"])[0] for name in schema.get("required", [])}


async def test_run_query_over_every_tool_sends_nothing_but_reads(package: Path) -> None:
    sent: list[httpx.Request] = []

    def upstream(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, headers={"content-type": "text/xml"}, stream=httpx.ByteStream(b"<ok/>"))

    catalogue = load_catalogue(package)
    assert len(catalogue.tools) == 28
    answered = []
    async with code_client(package, transport=httpx.MockTransport(upstream)) as (client, _):
        for tool in catalogue.tools:
            call = ", ".join(f"{name}={value!r}" for name, value in _arguments(tool.input_schema).items())
            result = await client.call_tool(RUN_QUERY, {"code": f"await {tool.name}({call})"})
            if not result.is_error:
                answered.append(tool.name)
            else:
                refusal = text(result)  # refused by name, at type check, before any request
                assert f"{tool.name}: not read-only" in refusal and "no API call was made" in refusal, refusal
    actions = [request.url.params["Action"] for request in sent]
    assert actions and all(action.startswith(READ_ACTIONS) for action in actions), actions
    assert all(request.method == "GET" for request in sent)
    # Not vacuous: every read of the excerpt was sent, once.
    assert sorted(answered) == sorted(t.name for t in catalogue.tools if t.name.startswith(("GET_Describe", "GET_Get")))
    assert len(sent) == len(answered) == 4


def test_confirm_destructive_asks_before_every_terminate_revoke_and_delete_whatever_the_method(package: Path) -> None:
    catalogue = load_catalogue(package)
    asked = {tool.name for tool in catalogue.tools if covers(ConfirmSettings(level="destructive"), tool)}
    destroying = {
        t.name for t in catalogue.tools if t.name.split("_", 1)[1].startswith(("Terminate", "Revoke", "Delete"))
    }
    assert asked == destroying and "POST_TerminateInstances" in asked
    writes = {tool.name for tool in catalogue.tools if covers(ConfirmSettings(level="writes"), tool)}
    assert writes == {t.name for t in catalogue.tools if not t.name.startswith(("GET_Describe", "GET_Get"))}


def test_a_get_named_as_a_write_is_never_a_resource(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n"
        "  /instances/terminate: {get: {operationId: terminateAll, responses: {'200': {description: ok}}}}\n"
        "  /instances: {get: {operationId: listInstances, responses: {'200': {description: ok}}}}\n"
    )
    generate(str(spec), tmp_path / "p", GenerateOptions())
    by_name = {tool.name: tool for tool in load_catalogue(tmp_path / "p").tools}
    assert template_for(by_name["listInstances"], "t") is not None
    assert template_for(by_name["terminateAll"], "t") is None
