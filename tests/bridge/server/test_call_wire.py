"""tools/call answers with held structured content are exactly the SDK's own answers, in every protocol version."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import anyio
import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.server.runner import ServerRunner
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from bridge.server.call_wire import CallResultWire, hold_structured
from bridge.server.handlers import build_server
from bridge.tools.json_text import parse_answer_json
from bridge.tools.registry import Tool, ToolContext, ToolRegistry

VERSIONS = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)

# Finite floats only: an answer's JSON has no others (bridge.tools.json_text.parse_answer_json).
FINITE = st.floats(allow_nan=False, allow_infinity=False)
JSON_LEAVES = st.none() | st.booleans() | st.integers() | FINITE | st.text(max_size=20)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
STRUCTURED = st.dictionaries(st.text(max_size=8), JSON_VALUES, min_size=1, max_size=5)
META = st.none() | st.dictionaries(st.sampled_from(["a", "mcp-bridge/x"]), st.none() | st.text(max_size=5), max_size=2)


def _result(structured: dict[str, Any], is_error: bool, meta: dict[str, Any] | None) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(structured))],
        structured_content=structured,
        is_error=is_error,
        _meta=meta,
    )


def _wire(runner: ServerRunner[Any], version: str, result: types.CallToolResult, *, held: bool) -> Any:
    async def inner(ctx: Any) -> Any:
        return runner._serialize("tools/call", version, hold_structured(result) if held else result)

    return anyio.run(CallResultWire(), SimpleNamespace(method="tools/call"), inner)


def _response(result: Any) -> str:
    return types.JSONRPCResponse(jsonrpc="2.0", id=1, result=result).model_dump_json(by_alias=True, exclude_unset=True)


def test_an_answers_json_is_plain_json_data_with_finite_floats() -> None:
    assert parse_answer_json(b'{"big": 1e999, "small": -1e999, "x": 1.5, "n": 2}') == {
        "big": None,
        "small": None,
        "x": 1.5,
        "n": 2,
    }
    for literal in (b"NaN", b"Infinity", b"-Infinity"):
        with pytest.raises(ValueError):
            parse_answer_json(b'{"x": ' + literal + b"}")


def _runner() -> ServerRunner[Any]:
    server = build_server(ToolRegistry([]), name="s", version="1")
    return ServerRunner(server=server, connection=None, lifespan_state=None)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(structured=STRUCTURED, is_error=st.booleans(), meta=META)
def test_held_structured_content_gives_the_sdks_answer_in_every_version(
    structured: dict[str, Any], is_error: bool, meta: dict[str, Any] | None
) -> None:
    runner = _runner()
    for version in VERSIONS:
        result = _result(structured, is_error, meta)
        sdk = _wire(runner, version, result, held=False)
        ours = _wire(runner, version, result, held=True)
        # As the stdio / SSE writers and the 2026 HTTP path put it on the wire.
        assert _response(ours) == _response(sdk), version
        assert json.dumps(ours, sort_keys=True, allow_nan=False) == json.dumps(sdk, sort_keys=True), version


def test_outside_a_tools_call_nothing_is_held() -> None:
    result = _result({"a": 1}, False, None)
    assert hold_structured(result) is result


def test_results_that_are_not_plain_dicts_are_left_to_the_sdk() -> None:
    runner = _runner()
    for result in (types.CallToolResult(content=[]), types.CallToolResult(content=[], structured_content={})):
        for version in VERSIONS:
            assert _wire(runner, version, result, held=True) == _wire(runner, version, result, held=False)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_json_tool_answers_what_the_sdk_answers_end_to_end(mode: str) -> None:
    body = {"id": 7, "name": "octo", "nested": {"list": [1, 2.5, None, "x"], "flag": True}, "unicode": "é✓"}

    async def run(args: dict[str, Any], ctx: ToolContext) -> types.CallToolResult:
        return _result(dict(body), False, None)

    answers: list[Any] = []

    async def spy(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method == "tools/call":
            answers.append(result)
        return result

    for is_json in (True, False):
        tool = Tool(name="t", run=run, output_schema={"type": "object"}, structured_is_json=is_json)
        server = build_server(ToolRegistry([tool]), name="s", version="1")
        server.middleware.insert(0, spy)
        with anyio.fail_after(10):
            async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
                called = await client.call_tool("t", {})
        assert called.structured_content == body
    fast, sdk = answers
    assert json.dumps(fast, sort_keys=True) == json.dumps(sdk, sort_keys=True)
    assert fast["structuredContent"] == body
