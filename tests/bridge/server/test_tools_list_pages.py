"""tools/list in pages: every tool once through the official client's cursors, bounded pages, bad cursors -32602."""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio
import mcp_types as types
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client, MCPError

from bridge.server.handlers import build_server
from bridge.server.list_pages import PAGE_BYTES, PAGE_TOOLS, Pages
from bridge.tools.registry import Tool, ToolContext, ToolRegistry
from tests.bridge.server.test_tools_list_wire import golden_tools

WAIT = 60


async def _run(args: dict[str, Any], ctx: ToolContext) -> None:
    return None


def _many(count: int, description_bytes: int = 10, *, null_meta: bool = False) -> list[Tool]:
    return [
        Tool(
            name=f"tool_{n:05d}",
            run=_run,
            description=f"{n} " + "x" * description_bytes,
            input_schema={"type": "object", "properties": {"id": {"type": "integer"}}},
            meta={"extra": None} if null_meta and n == 1 else None,
        )
        for n in range(count)
    ]


async def _every_page(client: Client, cursor: str | None = None) -> list[types.ListToolsResult]:
    pages = []
    for _ in range(100):  # bounded: a server that never ends its cursors fails the test
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        pages.append(page)
        cursor = page.next_cursor
        if cursor is None:
            return pages
    raise AssertionError("the cursors never ended")


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize(
    ("count", "description_bytes", "null_meta"),
    [(PAGE_TOOLS + 700, 10, False), (40, 150_000, False), (40, 150_000, True)],
    ids=["many-tools", "big-tools", "big-tools-sdk-path"],
)
async def test_the_official_client_gets_every_tool_once_through_the_cursors(
    mode: str, count: int, description_bytes: int, null_meta: bool
) -> None:
    tools = _many(count, description_bytes, null_meta=null_meta)
    with anyio.fail_after(WAIT):
        async with Client(build_server(ToolRegistry(tools), name="s", version="1"), mode=mode) as client:  # type: ignore[arg-type]
            pages = await _every_page(client)
            again = await _every_page(client)
    assert len(pages) > 1
    assert [t.name for page in pages for t in page.tools] == [t.name for t in tools]
    assert [t.name for page in again for t in page.tools] == [t.name for t in tools]  # deterministic
    assert [p.next_cursor for p in pages] == [p.next_cursor for p in again]
    for page in pages:
        assert 1 <= len(page.tools) <= PAGE_TOOLS
        listed = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools]
        assert len(json.dumps(listed, separators=(",", ":"))) <= PAGE_BYTES


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_api_under_the_bounds_is_one_page_without_a_cursor(mode: str) -> None:
    tools = golden_tools()
    with anyio.fail_after(WAIT):
        async with Client(build_server(ToolRegistry(tools), name="s", version="1"), mode=mode) as client:  # type: ignore[arg-type]
            listed = await client.list_tools(cache_mode="bypass")
    assert listed.next_cursor is None
    assert [t.name for t in listed.tools] == [t.name for t in tools]


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_bad_cursor_is_invalid_params(mode: str) -> None:
    registry = ToolRegistry(_many(PAGE_TOOLS + 10))
    with anyio.fail_after(WAIT):
        async with Client(build_server(registry, name="s", version="1"), mode=mode) as client:  # type: ignore[arg-type]
            good = (await client.list_tools(cache_mode="bypass")).next_cursor
            assert good is not None
            tag = base64.urlsafe_b64decode(good + "=" * (-len(good) % 4)).decode().partition(":")[0]
            bad = ["", "nonsense", "é", "%%%", "x" * 5000, _b64("other:5"), _b64(f"{tag}:0"), _b64(f"{tag}:-1")]
            bad += [_b64(f"{tag}:{PAGE_TOOLS + 10}"), _b64(f"{tag}:0{PAGE_TOOLS}"), _b64(f"{tag}:1e3"), good + "A"]
            for cursor in bad:
                with pytest.raises(MCPError) as caught:
                    await client.list_tools(cursor=cursor, cache_mode="bypass")
                assert caught.value.error.code == types.INVALID_PARAMS, cursor
            registry.add(Tool(name="added", run=_run))  # the list changed: its old cursors name nothing
            with pytest.raises(MCPError) as caught:
                await client.list_tools(cursor=good, cache_mode="bypass")
            assert caught.value.error.code == types.INVALID_PARAMS


@given(st.text(max_size=80))
def test_any_cursor_text_is_a_page_start_or_invalid_params(cursor: str) -> None:
    pages = Pages(_many(5), lambda tool: 1)
    try:
        start = pages.start(cursor)
    except MCPError as exc:
        assert exc.error.code == types.INVALID_PARAMS
    else:
        assert 0 < start < 5
