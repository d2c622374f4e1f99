"""Every result parses in both official clients, however deep the data (P41, P29).

The official Python client's JSON parser stops at about 200 levels of the whole message; a
program's value nested 100,000 deep, or an upstream answer nested as deep as the bridge's own
parser allows, must still reach the client as a result it can read, with a note saying what was
emptied. Real ``serve`` subprocesses over streamable HTTP, the Python SDK client and the
TypeScript SDK client (pinned in tests/node).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from bridge.contract.result_shape import MAX_RESULT_DEPTH
from tests.e2e.conftest import Upstream, http_bridge
from tests.e2e.test_ts_client import run_ts_client, ts_client  # noqa: F401 (the fixture)

pytestmark = pytest.mark.anyio

DEEP_PROGRAM = "x = []\nfor i in range(100_000):\n    x = [x]\nx"
NOTE = f"nested deeper than {MAX_RESULT_DEPTH} levels"


def _depth(value: Any) -> int:
    depth = 0
    while isinstance(value, list | dict) and value:
        value = value[0] if isinstance(value, list) else value[next(iter(value))]
        depth += 1
    return depth


def _nested(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


def _assert_cut(structured: dict[str, Any], member: str) -> None:
    assert _depth(structured[member]) <= MAX_RESULT_DEPTH
    assert any(NOTE in note for note in structured["_truncated"]), structured["_truncated"]


async def test_a_program_value_nested_100000_deep_parses_in_both_official_clients(
    upstream: Upstream,
    tmp_path: Path,
    ts_client: Path,  # noqa: F811
) -> None:
    async with http_bridge(upstream, tmp_path, "--mode", "code") as bridge:
        with anyio.fail_after(60):
            async with Client(bridge.url) as client:
                result = await client.call_tool("run_code", {"code": DEEP_PROGRAM})
        assert not result.is_error, result
        assert result.structured_content is not None
        _assert_cut(result.structured_content, "result")
        summary = await run_ts_client(
            ts_client, "http", bridge.url, tool="run_code", arguments={"code": DEEP_PROGRAM}, env={}
        )
    assert summary["isError"] is False
    assert summary["structuredContent"] == result.structured_content


@pytest.mark.parametrize("levels", [150, 900])
async def test_an_upstream_answer_nested_deep_parses_in_both_official_clients(
    upstream: Upstream,
    tmp_path: Path,
    ts_client: Path,  # noqa: F811
    levels: int,
) -> None:
    upstream.store.pets[7] = {"id": 7, "name": "Deep", "status": "available", "family": _nested(levels)}
    async with http_bridge(upstream, tmp_path) as bridge:
        with anyio.fail_after(60):
            async with Client(bridge.url) as client:
                result = await client.call_tool("getPet", {"petId": 7})
        assert not result.is_error, result
        assert result.structured_content is not None
        assert result.structured_content["name"] == "Deep"
        _assert_cut(result.structured_content, "family")
        summary = await run_ts_client(ts_client, "http", bridge.url, tool="getPet", arguments={"petId": 7}, env={})
    assert summary["isError"] is False
    assert summary["structuredContent"] == result.structured_content
