"""Argument values the wire cannot carry are tool errors naming the argument, and nothing is sent.

NaN and Infinity (which JSON lacks, but the SDK's parser accepts) anywhere in any argument, and
path/query/header/cookie values over their size limit (``bridge.request.sendable``), through the real
bridge behind the in-memory MCP client, against the loopback fault server.
"""

from __future__ import annotations

import functools
import json
import math
import tempfile
from pathlib import Path
from types import MappingProxyType
from typing import Any

import anyio
import mcp_types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.contract.catalogue import Catalogue
from bridge.request.build import build_request
from bridge.request.sendable import LIMITS, MAX_URL_BYTES
from bridge.tools.errors import InvalidArgumentsError
from tests.security.fault_server import Fault, FaultServer
from tests.security.harness import bridge_client, call_raw, result_text

pytestmark = pytest.mark.anyio

NAN, INF = math.nan, math.inf
_TEXT = {"type": "string"}
SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Values", "version": "1.0"},
    "servers": [{"url": "https://api.example/v1"}],
    "paths": {
        "/things/{id}/{sub}": {
            "post": {
                "operationId": "putThing",
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": _TEXT},
                    {"name": "sub", "in": "path", "required": True, "schema": _TEXT},
                    {"name": "n", "in": "query", "schema": {"type": "number"}},
                    {"name": "q", "in": "query", "schema": _TEXT},
                    {"name": "r", "in": "query", "schema": _TEXT},
                    {"name": "tags", "in": "query", "schema": {"type": "array", "items": {"type": "number"}}},
                    {"name": "meta", "in": "query", "content": {"application/json": {"schema": {"type": "object"}}}},
                    {"name": "X-N", "in": "header", "schema": {"type": "number"}},
                    {"name": "X-T", "in": "header", "schema": _TEXT},
                    {"name": "pref", "in": "cookie", "schema": _TEXT},
                ],
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {"data": {"type": "object"}, "price": {"type": "number"}},
                            }
                        }
                    }
                },
                "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {}}}}},
            }
        }
    },
}
BASE = {"id": "1", "sub": "2"}


@functools.cache
def values_catalogue() -> Catalogue:
    from generator.generate import build_catalogue
    from generator.options import GenerateOptions

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "values.json"
        path.write_text(json.dumps(SPEC))
        catalogue, _ = build_catalogue(str(path), GenerateOptions(name="values"))
    return catalogue


async def call_each(calls: list[dict[str, Any]], *, raw: bool) -> tuple[list[mcp_types.CallToolResult], int]:
    """Each call's result, and how many requests reached the upstream."""
    results = []
    async with FaultServer(Fault.echo()) as server:
        async with bridge_client(
            server.url + "/v1", catalogue=values_catalogue(), environ={}, mode="legacy" if raw else "auto"
        ) as client:
            with anyio.fail_after(20):
                for args in calls:
                    if raw:
                        results.append(await call_raw(client, "putThing", {**BASE, **args}))
                    else:
                        results.append(await client.call_tool("putThing", {**BASE, **args}))
    return results, server.count


# --------------------------------------------------------------------------- NaN and Infinity

NON_FINITE = [
    ({"data": {"x": NAN}}, "data.x"),
    ({"data": {"a": [1, {"b": INF}]}}, "data.a.1.b"),
    ({"data": {"deep": {"er": {"still": [[-INF]]}}}}, "data.deep.er.still.0.0"),
    ({"price": NAN}, "price"),
    ({"price": -INF}, "price"),
    ({"n": INF}, "n"),
    ({"tags": [1, NAN]}, "tags.1"),
    ({"meta": {"k": NAN}}, "meta.k"),
    ({"meta": {"list": [0.5, INF]}}, "meta.list.1"),
    ({"X-N": NAN}, "X-N"),
]


async def test_nan_or_infinity_in_any_argument_is_a_tool_error_naming_the_field() -> None:
    results, sent = await call_each([args for args, _ in NON_FINITE], raw=True)
    assert sent == 0
    for (args, field), result in zip(NON_FINITE, results, strict=True):
        text = result_text(result)
        assert result.is_error, args
        assert f'"{field}"' in text, (args, text)
        assert "unexpectedly" not in text


async def test_finite_numbers_next_to_the_refused_ones_still_go_through() -> None:
    results, sent = await call_each([{"data": {"x": 1.5, "y": [0, -2.25]}, "price": 0.0, "n": 1e300}], raw=True)
    assert sent == 1 and not results[0].is_error


def test_the_sdk_parser_really_lets_nan_in() -> None:
    """Why the check exists: a stdio or HTTP client's non-standard JSON reaches the tool as floats."""
    line = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":NaN,"b":-Infinity}}}'
    arguments = mcp_types.JSONRPCRequest.model_validate_json(line).params["arguments"]  # type: ignore[index]
    assert math.isnan(arguments["a"]) and arguments["b"] == -INF


_JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
)
_JSON = st.recursive(
    _JSON_LEAF,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text("abc", min_size=1, max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


def _plant(value: Any, bad: float, choices: list[int]) -> tuple[Any, list[str]]:
    """``value`` with ``bad`` put somewhere inside it (guided by ``choices``), and the path to it."""
    if isinstance(value, dict) and value and choices:
        key = sorted(value)[choices[0] % len(value)]
        inner, path = _plant(value[key], bad, choices[1:])
        return {**value, key: inner}, [key, *path]
    if isinstance(value, list) and value and choices:
        index = choices[0] % len(value)
        inner, path = _plant(value[index], bad, choices[1:])
        return [*value[:index], inner, *value[index + 1 :]], [str(index), *path]
    return bad, []


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    argument=st.sampled_from(["data", "meta"]),
    value=st.dictionaries(st.text("xyz", min_size=1, max_size=3), _JSON, min_size=1, max_size=3),
    bad=st.sampled_from([NAN, INF, -INF]),
    choices=st.lists(st.integers(0, 10), max_size=6),
)
def test_a_non_finite_number_anywhere_is_refused_with_its_path_before_a_request_exists(
    argument: str, value: dict[str, Any], bad: float, choices: list[int]
) -> None:
    planted, path = _plant(value, bad, choices)
    entry = values_catalogue().tools[0]
    with pytest.raises(InvalidArgumentsError) as info:
        build_request(entry.binding, {**BASE, argument: planted}, base_url="https://api.example/v1")
    assert f'"{".".join([argument, *path])}"' in str(info.value)


# ------------------------------------------------------------------------------------ sizes

TOO_LONG = [
    ({"id": "x" * 10_000_000}, "id"),
    ({"id": "x" * (LIMITS["path"] + 1)}, "id"),
    ({"sub": "é" * (LIMITS["path"] // 2 + 1)}, "sub"),  # two UTF-8 bytes each
    ({"q": "y" * 10_000_000}, "q"),
    ({"q": "y" * (LIMITS["query"] + 1)}, "q"),
    ({"meta": {"k": "v" * LIMITS["query"]}}, "meta"),
    ({"X-T": "z" * (LIMITS["header"] + 1)}, "X-T"),
    ({"pref": "c" * (LIMITS["cookie"] + 1)}, "pref"),
]


async def test_an_oversized_path_query_header_or_cookie_value_is_a_tool_error_naming_the_argument() -> None:
    results, sent = await call_each([args for args, _ in TOO_LONG], raw=False)
    assert sent == 0
    for (_, name), result in zip(TOO_LONG, results, strict=True):
        text = result_text(result)
        assert result.is_error and f'"{name}"' in text, (name, text[:200])
        assert "would not match" not in text


async def test_values_under_every_limit_together_make_a_url_too_long_and_are_refused_naming_them() -> None:
    near = LIMITS["query"] - 10
    args = {
        "id": "é" * (LIMITS["path"] // 2 - 1),
        "sub": "é" * (LIMITS["path"] // 2 - 1),
        "q": "y" * near,
        "r": "%" * near,
    }
    results, sent = await call_each([args], raw=False)
    assert sent == 0
    text = result_text(results[0])
    assert results[0].is_error and all(f'"{name}"' in text for name in ("id", "sub", "q", "r")), text[:300]
    assert f"{MAX_URL_BYTES:,}" in text


async def test_values_at_the_limit_are_sent() -> None:
    at_limit = {"id": "x" * LIMITS["path"], "X-T": "z" * 4096}
    results, sent = await call_each([at_limit], raw=False)
    assert sent == 1 and not results[0].is_error


def _nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": [value]}
    return value


@pytest.mark.parametrize(
    "value",
    [
        _nested(200, NAN),  # deeper than any path worth printing: named down to the cut
        MappingProxyType({"x": (1.0, INF)}),  # hand-built arguments (hooks) need not be dicts and lists
        [_nested(3, 1.0), _nested(100, 2.0), {"k": -INF}],
    ],
)
def test_non_finite_numbers_are_found_in_any_shape_and_depth(value: Any) -> None:
    entry = values_catalogue().tools[0]
    with pytest.raises(InvalidArgumentsError) as info:
        build_request(entry.binding, {**BASE, "data": value}, base_url="https://api.example/v1")
    assert '"data.' in str(info.value)


def test_deep_finite_values_are_not_refused() -> None:
    entry = values_catalogue().tools[0]
    request = build_request(entry.binding, {**BASE, "data": _nested(200, 1.5)}, base_url="https://api.example/v1")
    assert request.content is not None


_SLOTS = {"id": "path", "q": "query", "X-T": "header", "pref": "cookie"}


@settings(max_examples=120, deadline=None, derandomize=True)
@given(
    arg=st.sampled_from(sorted(_SLOTS)),
    char=st.sampled_from(["x", "é", "€", "😀", "%", "/"]),
    slack=st.integers(-8, 8),
)
def test_a_value_is_refused_exactly_when_its_bytes_pass_its_locations_limit(arg: str, char: str, slack: int) -> None:
    """Also: one value under its limit always fits the URL, however its characters encode."""
    if _SLOTS[arg] == "header":
        char = "x" if not char.isascii() else char  # header values are visible ASCII anyway
    limit = LIMITS[_SLOTS[arg]]
    width = len(char.encode())
    value = char * (limit // width + slack)
    entry = values_catalogue().tools[0]
    args = {**BASE, arg: value}
    if len(value.encode()) > limit:
        with pytest.raises(InvalidArgumentsError) as info:
            build_request(entry.binding, args, base_url="https://api.example/v1")
        assert f'"{arg}"' in str(info.value) and f"{limit:,}" in str(info.value)
    else:
        build_request(entry.binding, args, base_url="https://api.example/v1")
