"""The handshake-era tools/list answer the bridge builds itself equals the SDK's own answer."""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, MCPError
from mcp_types import methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from bridge.calls.http_tools import tools_from_catalogue
from bridge.calls.runtime import HttpRuntime
from bridge.server.handlers import build_server, modern_wire_data, wire_data, wire_tool
from bridge.serving.package import load_catalogue
from bridge.tools.registry import Tool, ToolContext, ToolRegistry
from tests.golden import GENERATED_DIR, GOLDEN_SPECS


async def _run(args: dict[str, Any], ctx: ToolContext) -> None:
    return None


def hand_written_tools() -> list[Tool]:
    """Tools whose definitions use what a user may pass: read-only mappings, tuples, None values."""
    schema: Mapping[str, Any] = MappingProxyType(
        {
            "type": "object",
            "properties": {"q": {"type": "string", "default": None}, "tags": {"type": "array"}},
            "required": ("q",),
        }
    )
    return [
        Tool(name="bare", run=_run),
        Tool(
            name="full",
            run=_run,
            title="Full",
            description="Every field.",
            input_schema=schema,
            output_schema={"type": "object", "properties": {"n": {"type": ["integer", "null"]}}},
            annotations={"readOnlyHint": True, "destructiveHint": None, "openWorldHint": False},
            meta={"mcp-bridge/operation": "GET /x", "extra": None},
        ),
        Tool(name="no_description", run=_run, description="", annotations={}),
    ]


def golden_tools() -> list[Tool]:
    tools: list[Tool] = []
    for name in GOLDEN_SPECS:
        catalogue = load_catalogue(GENERATED_DIR / name)
        runtime = HttpRuntime.create(catalogue, base_url="http://127.0.0.1:9", environ={})
        tools.extend(tools_from_catalogue(catalogue, runtime))
    # Two golden packages come from one spec (petstore, petstore_tailored): a name once.
    return list({tool.name: tool for tool in reversed(tools)}.values())[::-1]


def sdk_answer(tools: list[Tool], version: str) -> dict[str, Any]:
    """What the SDK's runner sends for a ListToolsResult handler return (dump, then the sieve)."""
    dumped = types.ListToolsResult(tools=[wire_tool(t) for t in tools]).model_dump(
        by_alias=True, mode="json", exclude_none=True
    )
    return methods.serialize_server_result("tools/list", version, dumped)


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
@pytest.mark.parametrize("source", ["hand_written", "golden"])
def test_wire_data_is_exactly_what_the_sdk_sends(version: str, source: str) -> None:
    tools = hand_written_tools() if source == "hand_written" else golden_tools()
    ours = {"tools": [wire_data(t) for t in tools]}
    assert json.dumps(ours, sort_keys=True) == json.dumps(sdk_answer(tools, version), sort_keys=True)


@pytest.mark.parametrize("version", MODERN_PROTOCOL_VERSIONS)
def test_wire_data_is_what_the_sdk_puts_in_a_2026_envelope(version: str) -> None:
    """Tools without null _meta members (the 2026 wire drops those; such lists take the SDK's path)."""
    tools = [t for t in hand_written_tools() + golden_tools() if None not in (t.meta or {}).values()]
    assert len(tools) > 20
    assert any(t.execution for t in tools)  # the jobs package's long-running tools: no `execution` in 2026
    ours = [modern_wire_data(t) for t in tools]
    assert json.dumps(ours, sort_keys=True) == json.dumps(sdk_answer(tools, version)["tools"], sort_keys=True)


@pytest.mark.anyio
async def test_a_2026_connection_gets_the_sdks_envelope_around_the_same_tools() -> None:
    registry = ToolRegistry(golden_tools())
    seen: list[tuple[str, dict[str, Any]]] = []

    async def spy(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method == "tools/list":
            seen.append((ctx.protocol_version, result))
        return result

    answers = {}
    with anyio.fail_after(10):
        for mode in ("auto", "legacy"):
            server = build_server(registry, name="s", version="1")
            server.middleware.insert(0, spy)
            async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
                answers[mode] = await client.list_tools(cache_mode="bypass")
    assert [t.model_copy(update={"execution": None}) for t in answers["legacy"].tools] == answers["auto"].tools
    (modern_version, modern), (legacy_version, legacy) = seen
    assert modern_version in MODERN_PROTOCOL_VERSIONS and legacy_version in HANDSHAKE_PROTOCOL_VERSIONS
    assert modern["resultType"] == "complete" and "ttlMs" in modern and "_meta" in modern
    without_execution = [{k: v for k, v in tool.items() if k != "execution"} for tool in legacy["tools"]]
    assert any("execution" in tool for tool in legacy["tools"])  # 2025-11-25 carries task support
    assert json.dumps(modern["tools"], sort_keys=True) == json.dumps(without_execution, sort_keys=True)


def test_wire_data_shares_the_tools_schema_dicts() -> None:
    tool = golden_tools()[0]
    data = wire_data(tool)
    assert data["inputSchema"] is tool.input_schema


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_every_protocol_era_lists_the_same_tools(mode: str) -> None:
    registry = ToolRegistry(hand_written_tools())
    with anyio.fail_after(5):
        async with Client(build_server(registry, name="s", version="1"), mode=mode) as client:  # type: ignore[arg-type]
            listed = await client.list_tools(cache_mode="bypass")
    assert [t.name for t in listed.tools] == ["bare", "full", "no_description"]
    full = listed.tools[1]
    assert full.input_schema["required"] == ["q"]
    assert full.annotations is not None and full.annotations.read_only_hint is True
    assert full.annotations.destructive_hint is None


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_tool_with_an_invalid_definition_fails_tools_list_with_an_internal_error(mode: str) -> None:
    registry = ToolRegistry([Tool(name="bad", run=_run, annotations={"readOnlyHint": {"not": "a bool"}})])
    with anyio.fail_after(5):
        async with Client(build_server(registry, name="s", version="1"), mode=mode) as client:  # type: ignore[arg-type]
            with pytest.raises(MCPError) as caught:
                await client.list_tools(cache_mode="bypass")
    assert caught.value.error.code == types.INTERNAL_ERROR
