"""Responses to tool results: content types, wrapping, empty bodies, and 4xx/5xx errors with hints."""

from __future__ import annotations

import base64
import dataclasses
import json
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import mcp_types
import pytest

from bridge.binding import HttpBinding, ParamBinding
from bridge.results import OutputCheck, response_to_result, status_error
from bridge.upstream import UpstreamResponse

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
