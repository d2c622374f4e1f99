"""The operation-call core: each step on its own, and the whole call, against a fake upstream."""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio
import pytest

from bridge.calls.context import ApiError, CallContext
from bridge.calls.operation import OperationCall
from bridge.tools.errors import CredentialsError, InvalidArgumentsError, UpstreamTimeout
from bridge.tools.registry import ToolContext
from tests.bridge.calls.test_http_tools import ENV, SECRET, SPEC, catalogue
from tests.bridge.fake_upstream import FakeUpstream, Recorded, Reply, runtime_for

pytestmark = pytest.mark.anyio

GET_PET_INPUT = {
    "type": "object",
    "properties": {"petId": {"type": "integer", "minimum": 1}},
    "required": ["petId"],
    "additionalProperties": False,
}


def get_pet(fake: FakeUpstream, environ: dict[str, str] | None = None) -> OperationCall:
    cat = catalogue()
    entry = dataclasses.replace(cat.tools[0], input_schema=GET_PET_INPUT)
    return OperationCall(entry, runtime_for(fake, cat, environ=ENV if environ is None else environ))


def context() -> CallContext:
    return CallContext(surface="test")


def test_validation_names_the_field_and_sends_nothing() -> None:
    fake = FakeUpstream(SPEC)
    call = get_pet(fake)
    with pytest.raises(InvalidArgumentsError) as caught:
        call.validate({"petId": 0, "extra": 1})
    assert "petId" in str(caught.value) and "extra" in str(caught.value)
    assert fake.requests == []


def test_prepare_builds_exactly_the_request_the_spec_describes() -> None:
    prepared = get_pet(FakeUpstream(SPEC)).prepare({"petId": 7})
    assert prepared.method == "GET"
    assert str(prepared.url) == "http://upstream.test/v1/pets/7"
    assert prepared.operation == "GET /pets/{petId}"
    assert all(name.lower() != "x-api-key" for name, _ in prepared.headers)  # no credential yet


async def test_authorize_adds_the_bridges_own_credential_only() -> None:
    call = get_pet(FakeUpstream(SPEC))
    prepared, parts = await call.authorize(call.prepare({"petId": 7}), context())
    assert ("X-API-Key", SECRET) in prepared.headers
    assert parts.env_names


async def test_authorize_without_the_credential_is_a_tool_error_naming_the_variable() -> None:
    call = get_pet(FakeUpstream(SPEC), environ={})
    with pytest.raises(CredentialsError) as caught:
        await call.authorize(call.prepare({"petId": 7}), context())
    assert "PETS_API_KEY_VALUE" in str(caught.value)


async def test_the_whole_call_returns_the_data_whole_and_redacted() -> None:
    fake = FakeUpstream(SPEC)
    fake.reply(json_body={"id": 7, "name": "Rex", "echo": f"key={SECRET}", SECRET: "as a key"})
    result = await get_pet(fake)({"petId": 7}, context())
    assert result.status == 200
    assert result.data["id"] == 7 and result.data["name"] == "Rex"
    assert SECRET not in repr(result.data)
    assert len(fake.requests) == 1


async def test_an_error_status_raises_api_error_with_the_status_and_a_redacted_message() -> None:
    fake = FakeUpstream(SPEC)
    fake.reply(404, json_body={"message": f"no pet; your key {SECRET}"})
    with pytest.raises(ApiError) as caught:
        await get_pet(fake)({"petId": 7}, context())
    assert caught.value.status == 404
    assert "404" in str(caught.value)
    assert SECRET not in str(caught.value)


async def test_the_contexts_deadline_bounds_the_call() -> None:
    fake = FakeUpstream(SPEC)
    release = anyio.Event()

    async def slow(recorded: Recorded) -> Reply:
        await release.wait()
        return Reply(200, b"{}", "application/json")

    fake.handler(slow)
    ctx = CallContext(surface="test", deadline=anyio.current_time() + 0.05)
    with anyio.fail_after(5), pytest.raises(UpstreamTimeout):
        await get_pet(fake)({"petId": 7}, ctx)
    release.set()


def test_a_tool_context_carries_trace_keys_and_nothing_else_from_meta() -> None:
    meta: dict[str, Any] = {"traceparent": "00-abc-def-01", "progressToken": 3, "tracestate": 5}
    ctx = CallContext.from_tool(ToolContext(tool_name="get_pet", meta=meta))
    assert ctx.trace == {"traceparent": "00-abc-def-01"}
    assert ctx.surface == "get_pet"
    assert ctx.identity is None
