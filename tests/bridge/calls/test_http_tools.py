"""HTTP tools end to end: catalogue -> Tool -> fake upstream -> CallToolResult or ToolError."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import mcp_types
import pytest

from bridge.calls.http_tools import make_http_tool, tools_from_catalogue
from bridge.calls.runtime import HttpRuntime
from bridge.contract.catalogue import OPERATION_META_KEY
from bridge.request.build import build_request
from bridge.secrets.credentials import CredentialParts
from bridge.tools.errors import (
    ConfigurationError,
    CredentialsError,
    InvalidArgumentsError,
    ResponseTooLarge,
    UpstreamError,
    UpstreamStatusError,
    UpstreamTimeout,
)
from bridge.tools.registry import ToolContext, ToolRegistry
from bridge.upstream.client import Upstream
from bridge.upstream.http_settings import HttpSettings
from tests.bridge.fake_upstream import (
    BASE_URL,
    FakeUpstream,
    Recorded,
    Reply,
    binding_from_spec,
    catalogue_from_spec,
    entry_from_spec,
    make_reply,
    runtime_for,
)

API = f"{BASE_URL}/v1"
SECRET = "SECRET-canary-9c2e"
PET = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}
SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Pets", "version": "1.0"},
    "servers": [{"url": API}],
    "security": [{"api_key": []}],
    "components": {"securitySchemes": {"api_key": {"type": "apiKey", "in": "header", "name": "X-API-Key"}}},
    "paths": {
        "/pets/{petId}": {
            "parameters": [{"name": "petId", "in": "path", "required": True, "schema": {"type": "integer"}}],
            "get": {"operationId": "get_pet", "summary": "Get a pet", "responses": {"200": {"description": "ok"}}},
            "delete": {"operationId": "delete_pet", "responses": {"204": {"description": "gone"}}},
        },
        "/pets": {
            "get": {
                "operationId": "list_pets",
                "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer"}}],
                "responses": {"200": {"description": "ok"}},
            },
            "post": {
                "operationId": "create_pet",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {"name": {"type": "string"}},
                            }
                        }
                    },
                },
                "responses": {"201": {"description": "created"}},
            },
        },
    },
}
ENV = {"PETS_API_KEY_VALUE": SECRET}


def catalogue() -> Any:
    entries = (
        entry_from_spec(SPEC, "GET", "/pets/{petId}", output_schema=PET),
        entry_from_spec(SPEC, "DELETE", "/pets/{petId}"),
        entry_from_spec(
            SPEC,
            "GET",
            "/pets",
            wrap_output=True,
            output_schema={"type": "object", "properties": {"result": {"type": "array"}}, "required": ["result"]},
        ),
        entry_from_spec(SPEC, "POST", "/pets"),
    )
    return catalogue_from_spec(SPEC, entries, prefix="PETS")


async def run(
    name: str,
    args: dict[str, Any],
    fake: FakeUpstream,
    *,
    environ: dict[str, str] | None = None,
    settings: HttpSettings | None = None,
) -> mcp_types.CallToolResult:
    runtime = runtime_for(fake, catalogue(), environ=ENV if environ is None else environ, settings=settings)
    registry = ToolRegistry(tools_from_catalogue(catalogue(), runtime))
    tool = registry.get(name)
    assert tool is not None
    async with runtime:
        result = await tool.run(args, ToolContext(tool_name=name))
    assert isinstance(result, mcp_types.CallToolResult)
    return result


def test_tools_carry_operation_meta_annotations_and_schemas() -> None:
    runtime = HttpRuntime.create(catalogue(), environ={})
    tools = tools_from_catalogue(catalogue(), runtime)
    assert [t.name for t in tools] == ["get_pet", "delete_pet", "list_pets", "create_pet"]
    get_pet = tools[0]
    assert get_pet.meta == {OPERATION_META_KEY: "GET /pets/{petId}"}
    assert get_pet.title == "Get a pet"
    assert get_pet.output_schema == PET
    assert get_pet.annotations == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    assert tools[1].annotations is not None and tools[1].annotations["destructiveHint"] is True


@pytest.mark.anyio
async def test_get_returns_structured_content_and_sends_the_key() -> None:
    fake = FakeUpstream(SPEC)
    fake.reply(json_body={"id": 7, "name": "Rex"})
    result = await run("get_pet", {"petId": 7}, fake)
    assert result.structured_content == {"id": 7, "name": "Rex"}
    [request] = fake.requests
    assert (request.method, request.target, request.header("x-api-key")) == ("GET", "/v1/pets/7", SECRET)
    assert request.header("accept") == "application/json, */*;q=0.5"
    assert fake.violations == []


@pytest.mark.anyio
async def test_array_response_is_wrapped_as_result() -> None:
    fake = FakeUpstream(SPEC)
    fake.reply(json_body=[{"id": 1}])
    result = await run("list_pets", {"limit": 5}, fake)
    assert result.structured_content == {"result": [{"id": 1}]}
    assert fake.requests[0].query == "limit=5"
    assert fake.violations == []


@pytest.mark.anyio
async def test_delete_204_says_done() -> None:
    fake = FakeUpstream(SPEC)
    fake.reply(204)
    result = await run("delete_pet", {"petId": 7}, fake)
    assert result.content == [mcp_types.TextContent(type="text", text="Done: 204 No Content")]


@pytest.mark.anyio
async def test_post_sends_json_body() -> None:
    fake = FakeUpstream(SPEC)
    fake.reply(201, json_body={"id": 8, "name": "Tom"})
    result = await run("create_pet", {"name": "Tom"}, fake)
    assert result.structured_content == {"id": 8, "name": "Tom"}
    assert fake.requests[0].json() == {"name": "Tom"}
    assert fake.violations == []


@pytest.mark.anyio
async def test_upstream_404_is_a_tool_error_with_status_and_hint() -> None:
    fake = FakeUpstream(SPEC)
    fake.reply(404, json_body={"message": "no such pet"})
    with pytest.raises(UpstreamStatusError) as info:
        await run("get_pet", {"petId": 7}, fake)
    assert info.value.status == 404
    assert str(info.value).startswith("GET /pets/{petId} failed: HTTP 404 Not Found")
    assert "petId" in str(info.value)


@pytest.mark.anyio
async def test_upstream_401_echoing_the_key_is_redacted() -> None:
    fake = FakeUpstream(SPEC)

    def echo(request: Recorded) -> Reply:
        return make_reply(401, body=f"bad key {request.header('x-api-key')} in {dict(request.headers)}")

    fake.handler(echo)
    with pytest.raises(UpstreamStatusError) as info:
        await run("get_pet", {"petId": 7}, fake)
    message = str(info.value)
    assert SECRET not in message
    assert "bad key ***" in message
    assert "PETS_API_KEY_VALUE" in message


@pytest.mark.anyio
async def test_secret_is_redacted_from_successful_results() -> None:
    fake = FakeUpstream(SPEC)
    fake.reply(json_body={"id": 1, "name": f"echo {SECRET}"})
    result = await run("get_pet", {"petId": 1}, fake)
    assert SECRET not in result.model_dump_json()


@pytest.mark.anyio
async def test_missing_credential_is_a_credentials_error_and_sends_nothing() -> None:
    fake = FakeUpstream(SPEC)
    with pytest.raises(CredentialsError, match="PETS_API_KEY_VALUE"):
        await run("get_pet", {"petId": 1}, fake, environ={})
    assert fake.requests == []


@pytest.mark.anyio
async def test_unsendable_arguments_are_refused_before_credentials_or_requests() -> None:
    fake = FakeUpstream(SPEC)
    with pytest.raises(InvalidArgumentsError, match='"petId"'):
        await run("get_pet", {"petId": ".."}, fake, environ={})
    assert fake.requests == []


@pytest.mark.anyio
async def test_response_over_the_cap_is_a_tool_error() -> None:
    fake = FakeUpstream(SPEC)
    fake.reply(json_body={"name": "x" * 5000})
    with pytest.raises(ResponseTooLarge):
        await run("get_pet", {"petId": 1}, fake, settings=HttpSettings(max_response_bytes=1000))


@pytest.mark.anyio
async def test_hanging_upstream_is_a_timeout_tool_error() -> None:
    fake = FakeUpstream(SPEC)
    never = anyio.Event()

    async def hang(request: Recorded) -> Reply:
        await never.wait()
        raise AssertionError("unreachable")

    fake.handler(hang)
    with anyio.fail_after(5), pytest.raises(UpstreamTimeout):
        await run("get_pet", {"petId": 1}, fake, settings=HttpSettings(deadline=0.1))


@pytest.mark.anyio
async def test_off_origin_redirect_is_a_tool_error() -> None:
    fake = FakeUpstream(SPEC)
    fake.reply(302, headers={"location": "http://127.0.0.2:9/steal"})
    with pytest.raises(UpstreamError, match="another origin"):
        await run("get_pet", {"petId": 1}, fake)
    assert len(fake.requests) == 1


@pytest.mark.anyio
async def test_a_2xx_answer_violating_the_output_schema_is_returned_as_text_with_a_note() -> None:
    fake = FakeUpstream(SPEC)
    fake.reply(json_body={"id": "seven"})
    result = await run("get_pet", {"petId": 7}, fake)
    assert not result.is_error  # the call happened: an error would invite a retry of the operation
    assert result.content[0] == mcp_types.TextContent(type="text", text='{"id":"seven"}')
    assert result.structured_content is not None and list(result.structured_content) == ["_truncated"]


@pytest.mark.anyio
async def test_runtime_create_resolves_the_base_url_and_reads_the_environment() -> None:
    fake = FakeUpstream(SPEC)
    fake.reply(json_body={"id": 1})
    runtime = HttpRuntime.create(catalogue(), environ=ENV, transport=fake.transport())
    assert runtime.base_url == httpx.URL(API)
    tool = make_http_tool(catalogue().tools[0], runtime)
    async with runtime:
        await tool.run({"petId": 1}, ToolContext(tool_name="get_pet"))
    assert fake.requests[0].header("x-api-key") == SECRET
    with pytest.raises(ConfigurationError, match="MY_BASE_URL"):
        HttpRuntime.create(catalogue().model_copy(update={"servers": ()}), environ={}, base_url_env_var="MY_BASE_URL")


@pytest.mark.anyio
async def test_fake_upstream_reports_requests_the_spec_does_not_allow() -> None:
    fake = FakeUpstream(SPEC)
    binding = binding_from_spec(SPEC, "GET", "/pets/{petId}")
    key = CredentialParts(headers=(("X-API-Key", "k"),))
    async with Upstream(API, transport=fake.transport()) as upstream:
        await upstream.send(build_request(binding, {"petId": "7"}, base_url=API))
        await upstream.send(build_request(binding, {"petId": "seven"}, base_url=API).with_credentials(key))
        await upstream.send(build_request(binding, {"petId": "7"}, base_url=API).with_credentials(key))
    assert len(fake.violations) == 2
    assert fake.violations[0].startswith("GET /v1/pets/7: SecurityValidationError")
    assert fake.violations[1].startswith("GET /v1/pets/seven: ParameterValidationError")
