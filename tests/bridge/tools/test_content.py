from __future__ import annotations

import base64
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from bridge.server.handlers import build_server
from bridge.tools.content import audio, error_result, image, link, resource, text, to_call_result
from bridge.tools.errors import ToolError
from bridge.tools.registry import ToolContext, ToolRegistry

PNG = b"\x89PNG\r\n\x1a\n\x00"
PNG_B64 = base64.b64encode(PNG).decode()


def test_str_becomes_one_text_block() -> None:
    assert to_call_result("héllo") == types.CallToolResult(content=[types.TextContent(text="héllo")])


def test_dict_becomes_compact_json_text_and_structured_content() -> None:
    value = {"name": "Zoë", "n": [1, 2]}
    assert to_call_result(value) == types.CallToolResult(
        content=[types.TextContent(text='{"name":"Zoë","n":[1,2]}')], structured_content=value
    )


@pytest.mark.parametrize(
    ("value", "json_text"),
    [([1, "a", None], '[1,"a",null]'), ([], "[]"), (3, "3"), (2.5, "2.5"), (True, "true"), (False, "false")],
)
def test_list_number_and_bool_become_json_text_only(value: Any, json_text: str) -> None:
    assert to_call_result(value) == types.CallToolResult(content=[types.TextContent(text=json_text)])


def test_single_content_block_is_sent_as_is() -> None:
    block = image(PNG, "image/png")
    assert to_call_result(block).content == [block]


def test_list_of_content_blocks_is_sent_as_is() -> None:
    blocks = [text("chart:"), image(PNG, "image/png"), link("file:///q3.csv", "q3.csv", mime="text/csv")]
    assert to_call_result(blocks) == types.CallToolResult(content=blocks)


def test_list_mixing_blocks_and_values_is_rejected() -> None:
    with pytest.raises(TypeError):
        to_call_result([text("a"), {"b": 1}])


def test_full_result_dict_is_sent_as_is() -> None:
    value = {"content": [{"type": "text", "text": "x"}], "isError": True, "_meta": {"k": 1}}
    assert to_call_result(value) == types.CallToolResult(
        content=[types.TextContent(text="x")], is_error=True, _meta={"k": 1}
    )


def test_call_tool_result_model_is_sent_as_is() -> None:
    result = types.CallToolResult(content=[text("x")], structured_content={"a": 1})
    assert to_call_result(result) is result


@pytest.mark.parametrize(
    "body",
    [
        {"content": [{"type": "text", "text": "x"}], "id": 7},
        {"content": ["plain", "strings"]},
        {"content": [{"type": "paragraph", "text": "x"}]},
        {"content": [{"type": "text"}]},
    ],
)
def test_json_body_with_a_content_key_stays_data(body: dict[str, Any]) -> None:
    assert to_call_result(body).structured_content == body


def test_none_becomes_an_empty_result() -> None:
    assert to_call_result(None) == types.CallToolResult(content=[])


@pytest.mark.parametrize("value", [b"bytes", {1, 2}, object()])
def test_unsupported_value_is_a_type_error(value: Any) -> None:
    with pytest.raises(TypeError):
        to_call_result(value)


def test_nan_cannot_be_sent() -> None:
    with pytest.raises(ValueError):
        to_call_result({"x": float("nan")})


OUTPUT = {"type": "object", "properties": {"cents": {"type": "integer"}}, "required": ["cents"]}


def test_output_schema_value_is_structured_content_with_json_copy() -> None:
    assert to_call_result({"cents": 5}, output_schema=OUTPUT, tool_name="p") == types.CallToolResult(
        content=[types.TextContent(text='{"cents":5}')], structured_content={"cents": 5}
    )


@pytest.mark.parametrize("value", [{"cents": "5"}, [1], "text", None])
def test_output_schema_mismatch_is_a_tool_error(value: Any) -> None:
    with pytest.raises(ToolError):
        to_call_result(value, output_schema=OUTPUT, tool_name="p")


def test_output_schema_rejects_content_blocks() -> None:
    with pytest.raises(ToolError):
        to_call_result([text("x")], output_schema=OUTPUT, tool_name="p")


def test_output_schema_checks_a_full_result_unless_it_is_an_error() -> None:
    with pytest.raises(ToolError):
        to_call_result({"content": [], "structuredContent": {"cents": "x"}}, output_schema=OUTPUT, tool_name="p")
    with pytest.raises(ToolError):
        to_call_result({"content": []}, output_schema=OUTPUT, tool_name="p")
    failed = to_call_result({"content": [], "isError": True}, output_schema=OUTPUT, tool_name="p")
    assert failed.is_error


def test_text_helper() -> None:
    assert text("hi") == types.TextContent(type="text", text="hi")


def test_image_and_audio_helpers_accept_bytes_or_base64() -> None:
    assert image(PNG, "image/png") == types.ImageContent(data=PNG_B64, mime_type="image/png")
    assert image(PNG_B64, "image/png") == image(PNG, "image/png")
    assert audio(b"RIFF", "audio/wav") == types.AudioContent(data="UklGRg==", mime_type="audio/wav")
    assert audio("UklGRg==", "audio/wav") == audio(b"RIFF", "audio/wav")


def test_image_helper_rejects_a_str_that_is_not_base64() -> None:
    with pytest.raises(ValueError):
        image("not base64!", "image/png")


def test_link_helper() -> None:
    assert link("file:///r.csv", "r.csv", mime="text/csv", description="Q3") == types.ResourceLink(
        uri="file:///r.csv", name="r.csv", mime_type="text/csv", description="Q3"
    )


def test_resource_helper_embeds_text_or_blob() -> None:
    assert resource("mem://a", "hello", "text/plain") == types.EmbeddedResource(
        resource=types.TextResourceContents(uri="mem://a", mime_type="text/plain", text="hello")
    )
    assert resource("mem://b", PNG, "image/png") == types.EmbeddedResource(
        resource=types.BlobResourceContents(uri="mem://b", mime_type="image/png", blob=PNG_B64)
    )


def test_error_result_helper() -> None:
    assert error_result("boom") == types.CallToolResult(content=[types.TextContent(text="boom")], is_error=True)


RETURNS: dict[str, Any] = {
    "string": "plain",
    "object": {"a": 1},
    "array": [1, 2],
    "number": 4.5,
    "blocks": [text("t"), image(PNG, "image/png"), audio(PNG, "audio/wav"), resource("mem://x", PNG, "x/y")],
    "full": {"content": [{"type": "text", "text": "raw"}], "isError": True},
    "nothing": None,
}


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.anyio
async def test_every_return_row_reaches_the_client(mode: str) -> None:
    registry = ToolRegistry()
    for name, value in RETURNS.items():

        async def run(args: dict[str, Any], ctx: ToolContext, value: Any = value) -> Any:
            return value

        registry.tool(name, description=name)(run)
    server = build_server(registry, name="t", version="1")
    got: dict[str, types.CallToolResult] = {}
    with anyio.fail_after(5):
        async with Client(server, mode=mode) as client:
            for name in RETURNS:
                got[name] = await client.call_tool(name, {})
    assert got["string"].content == [types.TextContent(text="plain")]
    assert (got["object"].content, got["object"].structured_content) == ([types.TextContent(text='{"a":1}')], {"a": 1})
    assert (got["array"].content, got["array"].structured_content) == ([types.TextContent(text="[1,2]")], None)
    assert got["number"].content == [types.TextContent(text="4.5")]
    assert got["blocks"].content == RETURNS["blocks"]
    assert (got["full"].content, got["full"].is_error) == ([types.TextContent(text="raw")], True)
    assert (got["nothing"].content, got["nothing"].is_error) == ([], False)
