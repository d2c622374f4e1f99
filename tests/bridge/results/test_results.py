"""Responses to tool results: content types, wrapping, empty bodies, and 4xx/5xx errors with hints."""

from __future__ import annotations

import base64
import dataclasses
import functools
import json
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import anyio
import httpx
import jsonschema
import mcp_types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client

from bridge.contract.catalogue import Catalogue, HttpBinding, ParamBinding
from bridge.results.tool_result import OutputCheck, response_to_result, status_error
from bridge.server.handlers import build_server
from bridge.tools.content import to_call_result
from bridge.tools.registry import Tool, ToolContext, ToolRegistry
from bridge.upstream.client import UpstreamResponse
from tests.security.fault_server import Fault, FaultServer
from tests.security.harness import bridge_client, catalogue_of

BINDING = HttpBinding(
    method="GET",
    path="/pets/{petId}",
    params=(ParamBinding(arg="petId", wire="petId", location="path", style="simple", explode=False, required=True),),
)
WRAPPED = dataclasses.replace(BINDING, wrap_output=True)
SECRET = "SECRET-canary-77"


def response(
    status: int = 200,
    body: bytes | str = b"",
    content_type: str | None = "application/json",
    headers: dict[str, str] | None = None,
    truncated: bool = False,
) -> UpstreamResponse:
    all_headers = dict(headers or {})
    if content_type is not None:
        all_headers["content-type"] = content_type
    phrase = {200: "OK", 204: "No Content"}.get(status, "")
    return UpstreamResponse(
        status=status,
        reason=phrase or _phrase(status),
        headers=httpx.Headers(all_headers),
        content=body.encode() if isinstance(body, str) else body,
        url=httpx.URL("http://upstream.test/pets/1"),
        operation="GET /pets/{petId}",
        truncated=truncated,
    )


def _phrase(status: int) -> str:
    import http

    return http.HTTPStatus(status).phrase


def result(resp: UpstreamResponse, binding: HttpBinding = BINDING, **options: Any) -> mcp_types.CallToolResult:
    return response_to_result(resp, binding=binding, tool_name="get_pet", **options)


def redact(text: str) -> str:
    return text.replace(SECRET, "***")


def test_json_object_becomes_structured_content_and_compact_text() -> None:
    out = result(response(body='{"id": 1, "name": "Rex ü"}'))
    assert out.structured_content == {"id": 1, "name": "Rex ü"}
    assert out.content == [mcp_types.TextContent(type="text", text='{"id":1,"name":"Rex ü"}')]
    assert not out.is_error


def test_json_array_is_wrapped_when_the_binding_says_so() -> None:
    out = result(response(body="[1, 2]"), WRAPPED)
    assert out.structured_content == {"result": [1, 2]}
    assert out.content == [mcp_types.TextContent(type="text", text="[1,2]")]


def test_json_object_is_wrapped_too_when_the_binding_says_so() -> None:
    assert result(response(body='{"a": 1}'), WRAPPED).structured_content == {"result": {"a": 1}}


def test_non_object_json_without_wrapping_is_text_only() -> None:
    out = result(response(body='"just a string"'))
    assert out.structured_content is None
    assert out.content == [mcp_types.TextContent(type="text", text='"just a string"')]


def test_vendor_json_and_untyped_json_are_parsed() -> None:
    assert result(response(body='{"a": 1}', content_type="application/vnd.api+json")).structured_content == {"a": 1}
    assert result(response(body='{"a": 1}', content_type=None)).structured_content == {"a": 1}


def test_invalid_json_falls_back_to_text() -> None:
    out = result(response(body="{not json"))
    assert out.structured_content is None
    assert out.content == [mcp_types.TextContent(type="text", text="{not json")]


@pytest.mark.parametrize(("status", "text"), [(204, "Done: 204 No Content"), (200, "Done: 200 OK (empty body)")])
def test_empty_bodies_say_done(status: int, text: str) -> None:
    assert result(response(status)).content == [mcp_types.TextContent(type="text", text=text)]


def test_image_becomes_image_content() -> None:
    out = result(response(body=b"\x89PNG\r\n", content_type="image/png"))
    assert out.content == [
        mcp_types.ImageContent(type="image", data=base64.b64encode(b"\x89PNG\r\n").decode(), mime_type="image/png")
    ]


def test_audio_becomes_audio_content() -> None:
    out = result(response(body=b"ID3", content_type="audio/mpeg"))
    assert out.content == [mcp_types.AudioContent(type="audio", data="SUQz", mime_type="audio/mpeg")]


@pytest.mark.parametrize(
    ("content_type", "body", "text"),
    [
        ("text/plain; charset=utf-8", "héllo".encode(), "héllo"),
        ("text/csv; charset=latin-1", "héllo".encode("latin-1"), "héllo"),
        ("application/xml", b"<a>1</a>", "<a>1</a>"),
        ("application/atom+xml", b"<feed/>", "<feed/>"),
        ("image/svg+xml", b"<svg/>", "<svg/>"),
        (None, b"plain words", "plain words"),
    ],
)
def test_text_and_xml_become_text(content_type: str | None, body: bytes, text: str) -> None:
    assert result(response(body=body, content_type=content_type)).content == [
        mcp_types.TextContent(type="text", text=text)
    ]


def test_other_binary_becomes_an_embedded_blob_resource() -> None:
    out = result(response(body=b"%PDF-1.7\x00\xff", content_type="application/pdf"))
    [block] = out.content
    assert isinstance(block, mcp_types.EmbeddedResource)
    assert block.resource == mcp_types.BlobResourceContents(
        uri="mcp-bridge://response/get_pet",
        mime_type="application/pdf",
        blob=base64.b64encode(b"%PDF-1.7\x00\xff").decode(),
    )


def test_secrets_echoed_in_success_bodies_are_redacted() -> None:
    out = result(response(body=json.dumps({"headers": {"X-Api-Key": SECRET}})), redact=redact)
    assert out.structured_content == {"headers": {"X-Api-Key": "***"}}
    assert SECRET not in out.model_dump_json()
    text = result(response(body=f"key={SECRET}", content_type="text/plain"), redact=redact)
    assert text.content == [mcp_types.TextContent(type="text", text="key=***")]


@pytest.mark.parametrize("content_type", ["image/png", "audio/mpeg", "application/zip", None])
def test_binary_bodies_are_redacted_before_encoding(content_type: str | None) -> None:
    body = b"\x00\x01" + f"X-Api-Key: {SECRET}".encode() + b"\xff"
    out = result(response(body=body, content_type=content_type), redact=redact)
    block = out.content[0]
    data = block.resource.blob if isinstance(block, mcp_types.EmbeddedResource) else block.data  # type: ignore[union-attr]
    assert SECRET.encode() not in base64.b64decode(data)
    assert isinstance(out.content[1], mcp_types.TextContent) and "overwritten" in out.content[1].text


def test_the_media_type_and_reason_phrase_are_redacted_too() -> None:
    image = result(response(body=b"\x89PNG", content_type=f"image/x-{SECRET}"), redact=redact)
    assert SECRET not in image.model_dump_json()
    done = dataclasses.replace(response(200, b""), reason=f"OK {SECRET}")
    assert SECRET not in result(done, redact=redact).model_dump_json()


def test_structured_content_that_breaks_the_output_schema_is_an_error_with_the_data() -> None:
    check = OutputCheck({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]})
    good = result(response(body='{"id": 1}'), output_check=check)
    assert good.structured_content == {"id": 1} and not good.is_error
    bad = result(response(body='{"id": "x"}'), output_check=check)
    assert bad.is_error and bad.structured_content is None
    assert isinstance(bad.content[0], mcp_types.TextContent) and bad.content[0].text == '{"id":"x"}'
    assert isinstance(bad.content[1], mcp_types.TextContent) and "(id: " in bad.content[1].text


# ---------------------------------------------------------------------------------------- errors


def error_text(resp: UpstreamResponse, **options: Any) -> str:
    error = status_error(resp, binding=BINDING, **options)
    assert error.status == resp.status
    return str(error)


def test_error_message_has_operation_status_and_body() -> None:
    text = error_text(response(404, '{"message": "pet 1 not found"}'))
    assert text.splitlines()[0] == "GET /pets/{petId} failed: HTTP 404 Not Found"
    assert 'The API said: {"message":"pet 1 not found"}' in text
    assert "Check the ids and path arguments (petId)" in text


def test_long_error_bodies_are_cut_to_an_excerpt() -> None:
    text = error_text(response(500, "x" * 10_000, content_type="text/plain"))
    assert "x" * 2000 + " … (truncated)" in text and "x" * 2001 not in text
    assert "retrying later may help" in text.lower()


def test_error_body_cut_by_the_byte_cap_is_marked_truncated() -> None:
    text = error_text(response(502, "short", content_type="text/plain", truncated=True))
    assert "short … (truncated)" in text


def test_secrets_echoed_in_error_bodies_are_redacted() -> None:
    body = json.dumps({"error": "unauthorized", "received": {"Authorization": f"Bearer {SECRET}"}})
    text = error_text(response(401, body), redact=redact, credential_env=("PETS_TOKEN",))
    assert SECRET not in text and "Bearer ***" in text
    assert "The user must check the credential configured in PETS_TOKEN" in text


def test_unauthorised_without_credentials_suggests_configuring_one() -> None:
    assert "may need to configure" in error_text(response(403, ""))


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"detail": [{"loc": ["body", "name"], "msg": "field required"}]}, '"name"'),
        ({"errors": [{"source": {"pointer": "/data/attributes/age"}}]}, '"data.attributes.age"'),
        ({"invalid_params": [{"name": "age", "reason": "must be positive"}]}, '"age"'),
        ({"error": {"param": "amount", "message": "Invalid integer"}}, '"amount"'),
        ({"field": "email", "message": "bad"}, '"email"'),
    ],
)
def test_validation_errors_name_the_rejected_field(body: dict[str, Any], field: str) -> None:
    text = error_text(response(422, json.dumps(body)))
    assert f"The API rejected the value of {field}" in text


def test_bad_request_without_field_asks_to_check_arguments() -> None:
    assert "The API rejected the arguments" in error_text(response(400, '{"path": "/pets/1", "error": "Bad"}'))


def test_conflict_hint() -> None:
    assert "conflicts with the resource's current state" in error_text(response(409, ""))


def test_rate_limit_hint_uses_retry_after_seconds_or_date() -> None:
    assert "retry after 30 s" in error_text(response(429, "", headers={"retry-after": "30"}))
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    assert "retry after 1" in error_text(response(429, "", headers={"retry-after": when}))
    assert "wait before retrying" in error_text(response(429, ""))


def test_binary_error_bodies_are_described_not_dumped() -> None:
    assert "(3 bytes of application/octet-stream)" in error_text(
        response(500, b"\x00\x01\x02", content_type="application/octet-stream")
    )


# ------------------------------------------- an answer in another shape is returned, not dropped

MEDIA_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Media", "version": "1.0"},
    "servers": [{"url": "https://media.example"}],
    "paths": {
        "/logs": {
            "get": {
                "operationId": "getLogs",
                "responses": {
                    "200": {
                        "description": "the log, as JSON lines or as plain text",
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "properties": {"lines": {"type": "array"}}}
                            },
                            "text/plain": {"schema": {"type": "string"}},
                        },
                    }
                },
            }
        },
        "/thing": {
            "get": {
                "operationId": "getThing",
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"count": {"type": "integer"}},
                                    "required": ["count"],
                                }
                            }
                        },
                    }
                },
            }
        },
    },
}


@functools.cache
def media_catalogue() -> Catalogue:
    return catalogue_of(MEDIA_SPEC, "media")


def _raw(body: bytes, content_type: str | None, status: int = 200) -> Fault:
    return Fault("ok", status=status, body=body, headers=(("Content-Type", content_type),) if content_type else ())


@pytest.mark.parametrize(
    ("tool", "fault", "is_error", "shown"),
    [
        ("getLogs", _raw(b"line one\nline two", "text/plain; charset=utf-8"), False, "line one\nline two"),
        ("getThing", _raw(b'"just a string"', "application/json"), False, '"just a string"'),
        ("getThing", _raw(b"[1, 2]", "application/json"), False, "[1,2]"),
        ("getThing", _raw(b'{"count": "many"}', "application/json"), False, '{"count":"many"}'),
        ("getThing", _raw(b"{oops", "application/json"), False, "{oops"),
        ("getThing", _raw(b"", "application/json"), False, "Done: 200"),
        ("getThing", _raw(b"", None, status=204), False, "Done: 204"),
        ("getThing", _raw(b"plain words", None), False, "plain words"),
        ("getThing", _raw(b"<html>please log in</html>", "text/html"), True, "please log in"),
        ("getLogs", _raw(b"\x89PNG\r\n\x1a\n", "image/png"), True, None),
    ],
)
@pytest.mark.anyio
async def test_a_2xx_answer_that_is_not_the_documented_json_shape_reaches_the_model(
    tool: str, fault: Fault, is_error: bool, shown: str | None
) -> None:
    async with FaultServer(fault) as server:
        async with bridge_client(server.url, catalogue=media_catalogue(), environ={}) as client:
            with anyio.fail_after(10):
                # The official client checks structuredContent against the outputSchema: no raise.
                out = await client.call_tool(tool, {})
    assert out.is_error is is_error
    texts = [b.text for b in out.content if isinstance(b, mcp_types.TextContent)]
    if shown is not None:
        assert shown in texts[0]
    assert texts[-1].startswith("[_truncated] ")  # the note: what the answer is, and that it is not the JSON shape
    if not is_error:
        assert out.structured_content is not None and list(out.structured_content) == ["_truncated"]


@pytest.mark.anyio
async def test_an_answer_in_the_documented_shape_is_still_structured_content() -> None:
    async with FaultServer(_raw(b'{"lines": ["a", "b"]}', "application/json")) as server:
        async with bridge_client(server.url, catalogue=media_catalogue(), environ={}) as client:
            with anyio.fail_after(10):
                out = await client.call_tool("getLogs", {})
    assert not out.is_error and out.structured_content == {"lines": ["a", "b"]}


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_MEDIA = ("application/json", "text/plain", "text/html", "application/octet-stream", "image/png", None)


@settings(max_examples=150, deadline=None)
@given(value=_JSON, media=st.sampled_from(_MEDIA), status=st.sampled_from([200, 201, 204]))
def test_every_2xx_answer_gives_a_result_the_server_and_clients_accept(
    value: Any, media: str | None, status: int
) -> None:
    """Whatever a 2xx answer holds, the tool result is legal for a tool with an output schema: the
    server's mapping accepts it, and structuredContent (when not an error) validates."""
    entry = next(t for t in media_catalogue().tools if t.name == "getLogs")
    assert entry.output_schema is not None
    body = json.dumps(value).encode() if media in ("application/json", None) else str(value).encode()
    out = response_to_result(
        response(status, b"" if status == 204 else body, media),
        binding=entry.binding,
        tool_name=entry.name,
        output_check=OutputCheck(entry.output_schema),
    )
    to_call_result(out, output_schema=entry.output_schema, tool_name=entry.name, structured_verified=True)
    assert out.content
    empty = status == 204 or not body  # no body, no media type to judge
    declared = media in (None, "application/json", "text/plain") or empty
    assert out.is_error is not declared
    if not out.is_error:
        assert out.structured_content is not None
        jsonschema.validate(out.structured_content, entry.output_schema)


@pytest.mark.anyio
async def test_a_hand_written_tool_with_an_output_schema_may_answer_with_text() -> None:
    registry = ToolRegistry()
    schema = {"type": "object", "properties": {"count": {"type": "integer"}, "_truncated": {"type": "array"}}}
    strict = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}

    async def text_answer(args: dict[str, Any], ctx: ToolContext) -> Any:
        return "the log says: 3 lines"

    async def dict_answer(args: dict[str, Any], ctx: ToolContext) -> Any:
        return {"count": 3}

    registry.add(Tool(name="text", run=text_answer, output_schema=schema))
    registry.add(Tool(name="strict_text", run=text_answer, output_schema=strict))
    registry.add(Tool(name="dict", run=dict_answer, output_schema=schema))
    async with Client(build_server(registry, name="t", version="1")) as client:
        with anyio.fail_after(10):
            text_out = await client.call_tool("text", {})
            strict_out = await client.call_tool("strict_text", {})
            dict_out = await client.call_tool("dict", {})
    assert not text_out.is_error and text_out.structured_content is not None
    assert list(text_out.structured_content) == ["_truncated"]
    first = text_out.content[0]
    assert isinstance(first, mcp_types.TextContent) and first.text == "the log says: 3 lines"
    assert strict_out.is_error  # a schema that cannot hold the note: the old rule, a tool error
    assert dict_out.structured_content == {"count": 3}  # a dict is still structured content
