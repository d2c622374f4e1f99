"""Discovery mode: three tools reach and call every operation, exactly as the operation's own tool."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types
import pytest
from mcp import Client

from bridge.calls.runtime import HttpRuntime
from bridge.contract.catalogue import OPERATION_META_KEY, Catalogue, ToolEntry
from bridge.modes.discovery import ANNOTATIONS_META_KEY, CALL, DESCRIBE, SEARCH
from bridge.serving.assemble import build_bridge_server, build_registry
from bridge.serving.package import load_catalogue
from generator.generate import generate
from generator.load.spec import load_spec
from generator.options import GenerateOptions
from tests.bridge.fake_upstream import FakeUpstream, Recorded, Reply, make_reply
from tests.golden import GENERATED_DIR, GOLDEN_SPECS, spec_path

pytestmark = pytest.mark.anyio

UPSTREAM = "http://upstream.test"


def _environ(catalogue: Catalogue) -> dict[str, str]:
    # Every credential but certificate files (a mutualTLS scheme stays unset: its calls fail alike).
    return {
        var.name: "test-credential"
        for scheme in catalogue.security_schemes.values()
        for var in scheme.env
        if var.role not in ("cert_file", "key_file", "key_password")
    }


def _value(schema: Any, root: dict[str, Any]) -> Any:
    """A small valid value for an input schema (the subset golden specs use)."""
    if not isinstance(schema, dict):
        return "x"
    if "$ref" in schema:
        return _value(root["$defs"][schema["$ref"].rsplit("/", 1)[-1]], root)
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return _value(schema[key][0], root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return next(v for v in schema["enum"] if v is not None)
    kind = schema.get("type", "string")
    kind = next(k for k in kind if k != "null") if isinstance(kind, list) else kind
    if kind == "integer" or kind == "number":
        return max(int(schema.get("minimum", 1)), 1)
    if kind == "boolean":
        return True
    if kind == "array":
        return [_value(schema.get("items", {}), root)] * max(int(schema.get("minItems", 1)), 1)
    if kind == "object":
        properties = schema.get("properties", {})
        names = [*schema.get("required", []), *properties]
        return {name: _value(properties.get(name, {}), root) for name in dict.fromkeys(names)}
    fmt = schema.get("format")
    if fmt == "uuid":
        return "123e4567-e89b-12d3-a456-426614174000"
    if fmt in ("date-time", "date"):
        return "2024-05-06T07:08:09Z" if fmt == "date-time" else "2024-05-06"
    if data_uri := re.match(r"\^data:([a-z0-9.+-]+)/", schema.get("pattern", "")):
        return f"data:{data_uri.group(1)}/x;base64,eA=="  # a binary body of a wildcard type (image/*)
    if schema.get("contentEncoding") == "base64" or fmt in ("byte", "binary"):
        return "eA=="
    return "abcd" * max(int(schema.get("minLength", 1)), 1)  # also valid base64 (file arguments)


def _arguments(input_schema: dict[str, Any]) -> dict[str, Any]:
    properties = input_schema.get("properties", {})
    return {name: _value(properties[name], input_schema) for name in input_schema.get("required", [])}


def _reply_for(catalogue: Catalogue) -> Any:
    """A body each operation's advertised output schema accepts."""
    by_path = {}
    for entry in catalogue.tools:
        body: Any = {}
        if entry.binding.wrap_output and entry.output_schema is not None:
            kind = entry.output_schema.get("properties", {}).get("result", {}).get("type")
            body = {"string": "x", "integer": 1, "number": 1, "boolean": True}.get(str(kind), [])
        by_path[entry.binding.method, entry.binding.path] = body

    def answer(request: Recorded) -> Reply:
        for (method, path), body in by_path.items():
            segments = path.strip("/").split("/")
            got = request.raw_path.strip("/").split("/")
            if method == request.method and len(segments) <= len(got):
                tail = got[len(got) - len(segments) :]
                if all(s.startswith("{") or s == g for s, g in zip(segments, tail, strict=True)):
                    return make_reply(200, json_body=body) if body != {} else make_reply(200, json_body={"ok": 1})
        return make_reply(200, json_body={"ok": 1})

    return answer


@asynccontextmanager
async def _served(name: str, *, mode: str) -> AsyncIterator[tuple[Client, FakeUpstream, Catalogue]]:
    package = GENERATED_DIR / name
    catalogue = load_catalogue(package)
    document = dict(load_spec(str(spec_path(name))).document)
    document["servers"] = [{"url": UPSTREAM}]
    fake = FakeUpstream(document)
    fake.handler(_reply_for(catalogue))
    runtime = HttpRuntime.create(catalogue, base_url=UPSTREAM, environ=_environ(catalogue), transport=fake.transport())
    async with runtime:
        registry = build_registry(catalogue, runtime, package)
        server = build_bridge_server(catalogue, registry, mode="discovery" if mode == "discovery" else "tools")
        async with Client(server) as client:
            yield client, fake, catalogue


def _needs_certificate(entry: ToolEntry, catalogue: Catalogue) -> bool:
    schemes = catalogue.security_schemes
    return bool(entry.binding.security) and all(
        any(schemes[use.scheme].type == "mutualTLS" for use in alternative) for alternative in entry.binding.security
    )


def _request_key(request: Recorded) -> tuple[Any, ...]:
    content_type = request.header("content-type") or ""
    body = b"<multipart>" if content_type.startswith("multipart/") else request.body
    return (request.method, request.raw_path, request.query, body)


def _structured(result: mcp_types.CallToolResult) -> Any:
    return result.structured_content


async def test_discovery_lists_exactly_three_tools_with_honest_annotations() -> None:
    async with _served("petstore", mode="discovery") as (client, _, _catalogue):
        listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert sorted(tools) == sorted([SEARCH, DESCRIBE, CALL])
    for name in (SEARCH, DESCRIBE):
        hints = tools[name].annotations
        assert hints is not None and hints.read_only_hint is True and hints.destructive_hint is False
    call = tools[CALL].annotations
    assert call is not None
    assert (call.read_only_hint, call.destructive_hint, call.idempotent_hint) == (False, True, False)


@pytest.mark.parametrize("name", sorted(GOLDEN_SPECS))
async def test_discovery_reaches_and_calls_every_operation_like_its_own_tool(name: str) -> None:
    outcomes: dict[str, list[Any]] = {"tools": [], "discovery": []}
    requests: dict[str, list[Any]] = {"tools": [], "discovery": []}
    for mode in ("tools", "discovery"):
        async with _served(name, mode=mode) as (client, fake, catalogue):
            for entry in catalogue.tools:
                if _needs_certificate(entry, catalogue):
                    continue  # (tests/test_mutual_tls.py calls those against a real TLS upstream)
                arguments = _arguments(entry.input_schema)
                if mode == "tools":
                    result = await client.call_tool(entry.name, arguments)
                else:
                    found = await client.call_tool(SEARCH, {"query": entry.name})
                    assert found.structured_content is not None
                    assert found.structured_content["operations"][0]["name"] == entry.name
                    described = await client.call_tool(DESCRIBE, {"name": entry.name})
                    assert described.structured_content is not None, described
                    assert described.structured_content["inputSchema"] == entry.input_schema
                    assert described.structured_content["annotations"] == dataclasses.asdict(entry.annotations)
                    assert described.structured_content.get("outputSchema") == entry.output_schema
                    result = await client.call_tool(CALL, {"name": entry.name, "arguments": arguments})
                    meta = result.meta or {}
                    assert meta[OPERATION_META_KEY] == entry.operation
                    assert meta[ANNOTATIONS_META_KEY] == dataclasses.asdict(entry.annotations)
                outcomes[mode].append((entry.name, result.is_error, _structured(result)))
            requests[mode] = [_request_key(r) for r in fake.requests]
    assert outcomes["discovery"] == outcomes["tools"]
    assert requests["discovery"] == requests["tools"]
    assert len(requests["tools"]) == len(outcomes["tools"])
    assert not any(is_error for _, is_error, _ in outcomes["tools"]), outcomes["tools"]


async def test_call_operation_validates_arguments_exactly_like_the_tool() -> None:
    messages = {}
    for mode in ("tools", "discovery"):
        async with _served("petstore", mode=mode) as (client, fake, _):
            bad = {"petId": 0, "extra": 1}
            if mode == "tools":
                result = await client.call_tool("getPet", bad)
            else:
                result = await client.call_tool(CALL, {"name": "getPet", "arguments": bad})
            assert result.is_error
            assert fake.requests == []
            messages[mode] = "".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))
    assert messages["discovery"] == messages["tools"]
    assert 'Invalid arguments for tool "getPet"' in messages["tools"]


async def test_unknown_operation_is_an_error_that_points_to_search() -> None:
    async with _served("petstore", mode="discovery") as (client, fake, _):
        result = await client.call_tool(CALL, {"name": "getPets", "arguments": {}})
    assert result.is_error
    text = "".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))
    assert 'Unknown operation "getPets"' in text and SEARCH in text
    assert fake.requests == []


async def test_search_ranks_by_words_in_summary_and_path_and_pages() -> None:
    async with _served("petstore", mode="discovery") as (client, _, _catalogue):
        found = await client.call_tool(SEARCH, {"query": "delete pet"})
        everything = await client.call_tool(SEARCH, {"query": "", "limit": 4})
        rest = await client.call_tool(SEARCH, {"query": "", "limit": 4, "offset": 4})
    assert found.structured_content is not None
    assert found.structured_content["operations"][0]["name"] == "deletePet"
    assert found.structured_content["operations"][0]["annotations"]["destructiveHint"] is True
    assert everything.structured_content is not None and rest.structured_content is not None
    assert everything.structured_content["next_offset"] == 4
    names = [op["name"] for op in everything.structured_content["operations"] + rest.structured_content["operations"]]
    assert len(names) == 6 == len(set(names))


async def test_call_operation_is_read_only_when_every_operation_is(tmp_path: Any) -> None:
    package = tmp_path / "ro"
    generate(str(spec_path("petstore")), package, GenerateOptions(read_only=True, mode="discovery"))
    catalogue = load_catalogue(package)
    assert catalogue.mode == "discovery"
    runtime = HttpRuntime.create(catalogue, base_url=UPSTREAM, environ={})
    async with runtime:
        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, package))
        async with Client(server) as client:
            listed = await client.list_tools()
    call = next(tool for tool in listed.tools if tool.name == CALL)
    assert call.annotations is not None
    assert (call.annotations.read_only_hint, call.annotations.destructive_hint) == (True, False)


async def test_shared_argument_descriptions_come_back_in_describe() -> None:
    async with _served("petstore", mode="discovery") as (client, _, catalogue):
        assert catalogue.shared_arguments == {}
        described = await client.call_tool(DESCRIBE, {"name": "listPets"})
    assert described.structured_content is not None
    assert json.dumps(described.structured_content["inputSchema"])


def test_serving_without_output_schemas_strips_them_from_every_tool() -> None:
    from bridge.serving.assemble import without_output_schemas

    catalogue = without_output_schemas(load_catalogue(GENERATED_DIR / "petstore"))
    assert all(entry.output_schema is None for entry in catalogue.tools)


@pytest.mark.parametrize("spelling", ["GET /pets/{petId}", "get   /pets/{petId}", " GET /PETS/{petid} "])
async def test_describe_and_call_take_an_operation_as_method_and_path(spelling: str) -> None:
    async with _served("petstore", mode="discovery") as (client, _, _catalogue):
        described = await client.call_tool(DESCRIBE, {"name": spelling})
        unknown = await client.call_tool(DESCRIBE, {"name": "GET /no/such/path"})
    assert described.structured_content is not None and described.structured_content["name"] == "getPet"
    assert unknown.is_error and "Unknown operation" in unknown.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["discovery", "code"])
async def test_a_server_answers_before_its_search_index_is_built_and_search_waits_for_it(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Graph's 11,422 operations take seconds to index: start-up and tools/list never wait for it."""
    import threading

    import bridge.modes.discovery as discovery_module
    from bridge.modes.search import SearchIndex

    release, started = threading.Event(), threading.Event()

    class SlowIndex(SearchIndex):
        def __init__(self, entries: Any) -> None:
            started.set()
            assert release.wait(60)  # bounded: a test that never releases fails instead of hanging
            super().__init__(entries)

    monkeypatch.setattr(discovery_module, "SearchIndex", SlowIndex)
    catalogue = load_catalogue(GENERATED_DIR / "petstore")
    runtime = HttpRuntime.create(catalogue, base_url=UPSTREAM, environ=_environ(catalogue))
    async with runtime:
        registry = build_registry(catalogue, runtime, GENERATED_DIR / "petstore")
        server = build_bridge_server(catalogue, registry, mode=mode, runtime=runtime)  # type: ignore[arg-type]
        with anyio.fail_after(60):
            async with Client(server) as client:
                assert started.wait(60)
                listed = await client.list_tools()  # answered while the index is still being built
                assert SEARCH in [tool.name for tool in listed.tools]
                async with anyio.create_task_group() as group:
                    group.start_soon(anyio.to_thread.run_sync, release.set)
                    found = await client.call_tool(SEARCH, {"query": "delete pet"})
    assert found.structured_content is not None
    assert found.structured_content["operations"][0]["name"] == "deletePet"
