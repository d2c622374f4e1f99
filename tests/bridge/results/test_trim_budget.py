"""Trimming is bounded (P29): what it emits never exceeds the budget, its work grows about
linearly with the body, and a big body is trimmed off the event loop so other calls go on."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from mcp import Client

import bridge.results.tool_result
from bridge.contract.formats import FORMAT_CHECKER
from bridge.results.trim import MARKER_KEY, MIN_BYTES, TrimSettings, advertised_schema, trim_result
from bridge.results.trim_budget import Fitter
from bridge.results.trim_walk import json_size, measure

# ------------------------------------------------------------------------------ shapes

# Characters whose JSON bytes differ from their count: multi-byte, escaped, astral, a lone surrogate.
ODD = ["a", "é", "€", "😀", '"', "\\", "\n", "\x01", "\ud800", " "]

leaves = st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.floats(allow_nan=False) | st.text(max_size=8)
long_strings = st.builds(lambda c, n: c * n, st.sampled_from(ODD), st.integers(0, 3000))


def _wide(n: int, c: str) -> dict[str, Any]:
    return {f"field_{c}_{i}": (i if i % 3 else f"{c * (i % 9)}v{i}") for i in range(n)}


def _map(n: int, c: str) -> dict[str, Any]:
    return {"items": {f"id-{c}{i}": {"id": i, "name": c * (i % 7), "tags": ["x", c][: i % 3]} for i in range(n)}}


def _deep(depth: int, c: str) -> Any:
    value: Any = {"leaf": [c * 40] * 5}
    for level in range(depth):
        value = {"level": level, "child": value, "pad": c * (level % 50), "list": list(range(level % 7))}
    return value


def _objects(n: int, c: str) -> dict[str, Any]:
    return {"result": [{"id": i, "body": c * (i % 400), "owner": {"login": c * 5, "id": i}} for i in range(n)]}


def _counts(most: int) -> st.SearchStrategy[int]:
    return st.sampled_from([0, 1, 2, most // 2, most]) | st.integers(0, most)


wide = st.builds(_wide, _counts(3000), st.sampled_from(ODD))
maps = st.builds(_map, _counts(3000), st.sampled_from(ODD))
deep = st.builds(_deep, _counts(300), st.sampled_from(ODD))
objects = st.builds(_objects, _counts(600), st.sampled_from(ODD))
mixed = st.recursive(
    leaves | long_strings,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=6), inner, max_size=6),
    max_leaves=40,
)
nested = st.dictionaries(st.text(max_size=4), wide | maps | deep, max_size=3)
shapes = st.one_of(wide, maps, deep, objects, mixed, nested)
trim_settings = st.builds(
    TrimSettings,
    max_bytes=st.sampled_from([1024, 2048, 4096, 24 * 1024]),
    max_items=st.sampled_from([None, 1, 5, 100]),
    max_string=st.sampled_from([None, 256, 1000]),
    drop_empty=st.booleans(),
)


def _schema_of(value: Any) -> dict[str, Any]:
    """A strict schema that ``value`` satisfies (required members, exact lengths, closed objects)."""
    if isinstance(value, dict):
        if len(value) > 20:  # map-shaped
            return {"type": "object", "minProperties": len(value), "additionalProperties": _one_of(value.values())}
        return {
            "type": "object",
            "properties": {k: _schema_of(v) for k, v in value.items()},
            "required": list(value),
            "additionalProperties": False,
        }
    if isinstance(value, list):
        return {"type": "array", "minItems": len(value), "items": _one_of(value)}
    if isinstance(value, str):
        return {"type": "string", "minLength": len(value), "maxLength": len(value)}
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer", "minimum": value, "maximum": value}
    if isinstance(value, float):
        return {"type": "number"}
    return {"type": "null"}


def _one_of(values: Any) -> dict[str, Any]:
    distinct: dict[str, dict[str, Any]] = {}
    for item in values:
        schema = _schema_of(item)
        distinct.setdefault(json.dumps(schema, sort_keys=True), schema)
        if len(distinct) > 8:
            return {}
    return {"anyOf": list(distinct.values())} if distinct else {}


# ------------------------------------------------------------------------------ the budget


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
@given(value=shapes, trim=trim_settings, depth=st.integers(0, 3), wrap=st.booleans())
def test_emitted_bytes_never_exceed_the_budget_and_match_the_advertised_schema(
    value: Any, trim: TrimSettings, depth: int, wrap: bool
) -> None:
    wrapped = wrap or not isinstance(value, dict)
    root = {"result": value} if wrapped else value
    schema = _schema_of(root)
    advertised = advertised_schema(schema, depth=depth, wrapped=wrapped)
    trimmed = trim_result(root, trim, wrapped=wrapped, paging=("page",), fields_arg="fields")
    assert trim.max_bytes is not None
    assert json_size(trimmed.value) <= trim.max_bytes
    errors = list(Draft202012Validator(advertised, format_checker=FORMAT_CHECKER).iter_errors(trimmed.value))
    assert errors == [], f"{errors[0].message} at {list(errors[0].absolute_path)}"
    assert trimmed.value.get(MARKER_KEY, []) == trimmed.notes
    if not trimmed.cut:  # nothing was cut: what the same caps give without a budget (empties dropped, no more)
        unbudgeted = trim_result(root, replace(trim, max_bytes=None), wrapped=wrapped, paging=("page",))
        assert trimmed.value == unbudgeted.value


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=300),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=3), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    own=_JSON,
    rest=st.dictionaries(st.sampled_from(["a", "b", "result"]), _JSON, max_size=3),
    budget=st.integers(1, 3000),
)
@example(
    own=[None, None],
    rest={"a": [], "result": {"a": {"name": "x" * 2000, MARKER_KEY: "x" * 200, "result": ["é" * 2500]}}},
    budget=1,
)
def test_an_upstream_marker_member_is_replaced_by_the_notes_whatever_it_holds(own: Any, rest: Any, budget: int) -> None:
    # The upstream's own `_truncated` (arrays and strings the fitter could cut) is left out when
    # the notes take its place: the cuts inside it die with it (a KeyError crashed the call).
    root = {**rest, MARKER_KEY: own}
    limits = TrimSettings(max_bytes=budget, max_items=None, max_string=None, drop_empty=False)
    trimmed = trim_result(root, limits)
    assert json_size(trimmed.value) <= max(budget, MIN_BYTES)  # budgets under the floor are the floor
    if trimmed.cut:
        assert trimmed.value[MARKER_KEY] == trimmed.notes


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(value=shapes, target=st.integers(0, 30_000), trim=trim_settings, keep=st.booleans())
def test_the_fitter_knows_the_exact_size_after_every_cut(
    value: Any, target: int, trim: TrimSettings, keep: bool
) -> None:
    root = value if isinstance(value, dict) else {"result": value}
    kept = frozenset({"result"}) if keep else frozenset()
    trim = trim.normalised()
    tree = measure(root, max_items=trim.max_items, max_string=trim.max_string, drop_empty=trim.drop_empty, keep=kept)
    assert tree.total == json_size(tree.value)
    fitter = Fitter(tree, kept)
    fitter.fit(target)
    assert fitter.total == json_size(tree.value)
    assert fitter.total <= max(target, 2)  # down to {} if it must
    fitter.fit(target // 2)  # fitting again continues from there
    assert fitter.total == json_size(tree.value) <= max(target // 2, 2)


def test_notes_of_sixty_thousand_omissions_are_short() -> None:
    data = {f"{'k' * 300}{i}": i for i in range(60_000)}
    trimmed = trim_result(data, TrimSettings(), fields_arg="fields")
    assert json_size(trimmed.value) <= TrimSettings().max_bytes  # type: ignore[operator]
    assert json_size(trimmed.notes) < 1024
    assert any("left out" in note and "members" in note for note in trimmed.notes)


def test_a_map_larger_than_the_budget_keeps_some_of_its_members() -> None:
    data = {"total": 5000, "items": {f"id{i}": {"name": f"n{i}"} for i in range(5000)}}
    trimmed = trim_result(data, TrimSettings(max_bytes=4096))
    assert trimmed.value["total"] == 5000
    assert 0 < len(trimmed.value["items"]) < 5000
    assert any(note.startswith("items: left out") for note in trimmed.notes)


# ------------------------------------------------------------------------------ linear work


class _TooMuchWork(Exception):
    pass


def _calls(work: Callable[[], Any], limit: int) -> int:
    """Function calls (Python and C) made by ``work``: a count of operations, not a timing."""
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1
            if count > limit:
                raise _TooMuchWork

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return count


SCALING_SHAPES: dict[str, Callable[[int], dict[str, Any]]] = {
    "wide": lambda n: {f"field_{i:06d}": i for i in range(n)},
    "map": lambda n: {"items": {f"k{i}": {"id": i, "name": f"n{i}"} for i in range(n // 2)}},
    "many small arrays": lambda n: {f"a{i}": [i, i + 1] for i in range(n // 2)},
    "long strings": lambda n: {f"s{i}": "é" * 300 for i in range(n // 20)},
    "objects in a list": lambda n: {"result": [{"id": i, "tags": ["a", "b"]} for i in range(n // 3)]},
}


@pytest.mark.parametrize("shape", sorted(SCALING_SHAPES))
def test_trimming_sixty_thousand_members_takes_linear_work(shape: str) -> None:
    build = SCALING_SHAPES[shape]
    settings_ = TrimSettings(max_items=None, max_string=None)
    small, big = build(15_000), build(60_000)
    per_member = 80  # generous: the work is about a dozen calls a member
    work_small = _calls(lambda: trim_result(small, settings_), per_member * 15_000)
    work_big = _calls(lambda: trim_result(big, settings_), per_member * 60_000)
    assert work_big < 5 * work_small  # n -> 4n: about 4 times the work, never 16
    assert json_size(trim_result(big, settings_).value) <= settings_.max_bytes  # type: ignore[operator]


# ------------------------------------------------------------------------------ the event loop

BIG_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Big", "version": "1"},
    "servers": [{"url": "http://upstream.test"}],
    "paths": {
        "/big": {
            "get": {
                "operationId": "getBig",
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "additionalProperties": {"type": "string"}}
                            }
                        },
                    }
                },
            }
        },
        "/quick": {
            "get": {
                "operationId": "getQuick",
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}
                            }
                        },
                    }
                },
            }
        },
    },
}


@pytest.mark.anyio
async def test_a_quick_call_finishes_while_a_huge_answer_is_being_trimmed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bridge.calls.http_tools import tools_from_catalogue
    from bridge.calls.runtime import HttpRuntime
    from bridge.server.handlers import build_server
    from bridge.tools.registry import ToolRegistry
    from generator.generate import build_catalogue
    from generator.options import GenerateOptions
    from tests.bridge.fake_upstream import FakeUpstream, make_reply

    spec = tmp_path / "big.json"
    spec.write_text(json.dumps(BIG_SPEC), encoding="utf-8")
    catalogue, _ = build_catalogue(str(spec), GenerateOptions())
    fake = FakeUpstream(BIG_SPEC)
    big = {f"m{i:05d}": f"vä {i}" for i in range(40_000)}  # 0.8 MB: under the 1 MiB body cap
    raw = json.dumps(big, ensure_ascii=False, separators=(",", ":"))
    fake.route("GET", "/big", make_reply(200, body=raw, content_type="application/json"))
    fake.route("GET", "/quick", make_reply(200, json_body={"ok": True}))

    # The big answer's trimming waits (in whatever thread runs it) until the quick call is done:
    # on the event loop that wait would hold the quick call back, so the big call would end first.
    trimming_big = anyio.Event()
    quick_done = threading.Event()
    on_loop: list[bool] = []
    real_trim = bridge.results.tool_result.trim_result

    def gated_trim(value: Any, *args: Any, **kwargs: Any) -> Any:
        if len(value) > 1000:
            on_loop.append(threading.current_thread() is threading.main_thread())
            if not on_loop[-1]:
                anyio.from_thread.run_sync(trimming_big.set)
                quick_done.wait(timeout=10)
            else:
                trimming_big.set()
        return real_trim(value, *args, **kwargs)

    monkeypatch.setattr(bridge.results.tool_result, "trim_result", gated_trim)
    runtime = HttpRuntime.create(catalogue, environ={}, transport=fake.transport())
    server = build_server(ToolRegistry(tools_from_catalogue(catalogue, runtime)), name="big", version="1")
    finished: list[str] = []
    results: dict[str, types.CallToolResult] = {}

    async def call(name: str) -> None:
        results[name] = await client.call_tool(name, {})
        finished.append(name)

    with anyio.fail_after(30):
        async with runtime, Client(server) as client, anyio.create_task_group() as tg:
            tg.start_soon(call, "getBig")
            await trimming_big.wait()
            await call("getQuick")
            quick_done.set()
    assert on_loop == [False]
    assert finished == ["getQuick", "getBig"]
    answer = results["getBig"]
    assert answer.structured_content is not None and not answer.is_error
    text = answer.content[0]
    assert isinstance(text, types.TextContent)
    budget = TrimSettings().max_bytes
    assert budget is not None
    assert json_size(answer.structured_content) <= budget
    assert len(text.text.encode("utf-8")) <= budget
    assert any("left out" in note for note in answer.structured_content[MARKER_KEY])


def test_an_array_far_over_the_budget_is_read_only_up_to_it() -> None:
    settings_ = TrimSettings(max_items=None)
    short = {"result": [{"id": i, "tags": ["a", "b"]} for i in range(10_000)]}
    long = {"result": [{"id": i, "tags": ["a", "b"]} for i in range(400_000)]}
    work_short = _calls(lambda: trim_result(short, settings_, wrapped=True), 2_000_000)
    work_long = _calls(lambda: trim_result(long, settings_, wrapped=True), 2_000_000)
    assert work_long < 2 * work_short  # only the items that can still fit are walked
    trimmed = trim_result(long, settings_, wrapped=True, paging=("page",))
    assert json_size(trimmed.value) <= settings_.max_bytes  # type: ignore[operator]
    assert trimmed.notes[0].startswith("result: kept the first ")
    assert trimmed.notes[0].endswith(" of 400000 items")
