"""The largest APIs stay usable (issue 18): what a tool shows is bounded, the runtime still checks
the whole schema, and the parts left out are one question away.

The spec is bench/synthetic_spec.py's nested-bodies one (an e-signature API's shape: envelope,
recipients of five kinds, forty kinds of tab of fifty fields each), with few operations.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import jsonschema
import mcp_types
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from bench.synthetic_spec import nested_body_spec
from bridge.calls.http_tools import tools_from_catalogue
from bridge.calls.runtime import HttpRuntime
from bridge.cli import cli
from bridge.cli.costs import model_visible_tokens
from bridge.cli.tokens import load_counter
from bridge.contract.catalogue import Catalogue
from bridge.contract.result_shape import DEFAULT_MAX_BYTES
from bridge.contract.schema_bound import DEFAULT_INPUT_SCHEMA_BYTES, bounded_schema, compact_size, schema_at
from bridge.modes.codemode import SEARCH as CODE_SEARCH
from bridge.modes.codemode import STUB_BUDGET
from bridge.modes.discovery import DESCRIBE
from bridge.server.handlers import wire_data
from bridge.serving.assemble import build_bridge_server, build_registry
from bridge.serving.package import load_catalogue
from generator.generate import generate
from generator.options import GenerateOptions
from tests.bridge.fake_upstream import FakeUpstream
from tests.bridge.modes.codemode.harness import code_client

UPSTREAM = "http://upstream.test"
OPERATIONS = 12  # op0 writes an Envelope, op1 Recipients, op4 Document... (bench/synthetic_spec.py)


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("nested")
    spec = folder / "nested.json"
    spec.write_text(json.dumps(_document()), encoding="utf-8")
    generate(str(spec), folder / "pkg", GenerateOptions())
    return folder / "pkg"


def _document() -> dict[str, Any]:
    document = nested_body_spec(OPERATIONS)
    document["servers"] = [{"url": UPSTREAM}]
    return document


@asynccontextmanager
async def served(package: Path, mode: str = "tools") -> AsyncIterator[tuple[Client, FakeUpstream, Catalogue]]:
    catalogue = load_catalogue(package)
    fake = FakeUpstream(_document())
    fake.reply(200, json_body={"code": "ok", "message": "fine"})
    runtime = HttpRuntime.create(catalogue, environ={}, transport=fake.transport())
    async with runtime:
        registry = build_registry(catalogue, runtime, package)
        server = build_bridge_server(catalogue, registry, mode="discovery" if mode == "discovery" else "tools")
        async with Client(server) as client:
            yield client, fake, catalogue


def _text(result: mcp_types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))


_SAMPLES = {"string": "text", "integer": 7, "number": 1.5, "boolean": True}


def _value(schema: dict[str, Any]) -> Any:
    """A valid value of one of the synthetic spec's scalar fields."""
    if "enum" in schema:
        return schema["enum"][0]
    if schema.get("format") == "date-time":
        return "2026-01-02T03:04:05Z"
    return _SAMPLES[schema["type"]]


def _envelope(pool: dict[str, Any], wrong: str | None = None) -> dict[str, Any]:
    """An envelope with one signer holding one tab of kind 3; ``wrong``: a field of that tab given
    a list, which no scalar field accepts."""
    tab3, position, signer = pool["Tab3"]["properties"], pool["Position"]["properties"], pool["Signer"]["properties"]
    tab: dict[str, Any] = {"f0": _value(tab3["f0"]), "position": {"x": _value(position["x"])}}
    if wrong is not None:
        tab[wrong] = ["not", "a", "scalar"]
    envelope = pool["Envelope"]["properties"]
    return {
        "accountId": "a1",
        "e0": _value(envelope["e0"]),
        "recipients": {"signers": [{"r0": _value(signer["r0"]), "tabs": {"tab3s": [tab]}}]},
    }


# ----------------------------------------------------------------------------------- tools mode


@pytest.mark.anyio
async def test_every_shown_input_schema_is_within_the_bound_and_the_whole_one_is_not(package: Path) -> None:
    async with served(package) as (client, _, catalogue):
        listed = (await client.list_tools()).tools
    full = {entry.name: entry.input_schema for entry in catalogue.tools}
    assert max(compact_size(tool.input_schema) for tool in listed) <= DEFAULT_INPUT_SCHEMA_BYTES
    assert compact_size(full["op0"]) > 4 * DEFAULT_INPUT_SCHEMA_BYTES  # the envelope really is big
    shown = next(tool.input_schema for tool in listed if tool.name == "op0")
    signer = shown["properties"]["recipients"]["properties"]["signers"]["items"]
    assert signer["type"] == "object" and "error names any wrong one" in signer["description"]
    assert "properties" not in signer


@pytest.mark.anyio
async def test_a_wrong_deep_field_is_named_exactly_and_nothing_is_sent(package: Path) -> None:
    pool = _document()["components"]["schemas"]
    async with served(package) as (client, fake, _):
        wrong = await client.call_tool("op0", _envelope(pool, wrong="f1"))
        right = await client.call_tool("op0", _envelope(pool))
    assert wrong.is_error and _text(wrong).count("\n") == 1, _text(wrong)  # one problem, named exactly
    assert "recipients.signers.0.tabs.tab3s.0.f1" in _text(wrong)
    assert not right.is_error, _text(right)
    (sent,) = fake.requests
    assert json.loads(sent.body)["recipients"] == _envelope(pool)["recipients"]
    assert fake.violations == []


@pytest.mark.anyio
async def test_the_hint_counts_the_tools_list_payload_as_it_is_sent(package: Path) -> None:
    catalogue = load_catalogue(package)
    counter = load_counter()
    runtime = HttpRuntime.create(catalogue, environ={})
    sent = sum(counter.count_json(wire_data(tool)) for tool in tools_from_catalogue(catalogue, runtime))
    assert model_visible_tokens(catalogue, counter) == sent
    no_outputs = catalogue.model_copy(
        update={
            "tools": tuple(entry.__class__(**{**_fields(entry), "output_schema": None}) for entry in catalogue.tools)
        }
    )
    assert model_visible_tokens(no_outputs, counter) < sent  # output schemas are counted


def _fields(entry: Any) -> dict[str, Any]:
    return {name: getattr(entry, name) for name in entry.__dataclass_fields__}


def test_the_bound_is_an_option_and_zero_turns_it_off(tmp_path: Path) -> None:
    spec = tmp_path / "nested.json"
    spec.write_text(json.dumps(_document()), encoding="utf-8")
    small = CliRunner().invoke(
        cli, ["generate", str(spec), "-o", str(tmp_path / "a"), "--max-input-schema-bytes", "4000"]
    )
    off = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(tmp_path / "b"), "--max-input-schema-bytes", "0"])
    assert small.exit_code == 0 and off.exit_code == 0, small.output + off.output
    bounded = load_catalogue(tmp_path / "a").tools
    assert all(compact_size(e.advertised_input_schema or e.input_schema) <= 4000 for e in bounded)
    assert all(e.advertised_input_schema is None for e in load_catalogue(tmp_path / "b").tools)


# ------------------------------------------------------------------------------- discovery mode


async def _describe(client: Client, **args: Any) -> tuple[mcp_types.CallToolResult, dict[str, Any]]:
    result = await client.call_tool(DESCRIBE, args)
    return result, result.structured_content or {}


@pytest.mark.anyio
async def test_describe_operation_stays_within_the_result_budget_and_path_shows_a_part(package: Path) -> None:
    async with served(package, "discovery") as (client, _, _):
        result, whole = await _describe(client, name="op0")
        _, signers = await _describe(client, name="op0", path="recipients.signers")
        _, tabs = await _describe(client, name="op0", path="recipients.signers.tabs.tab3s")
        missing, _ = await _describe(client, name="op0", path="recipients.nobody")
    assert not result.is_error and len(_text(result).encode()) <= DEFAULT_MAX_BYTES
    signer = whole["inputSchema"]["properties"]["recipients"]["properties"]["signers"]["items"]
    assert f'{DESCRIBE}(name="op0", path="recipients.signers")' in signer["description"]
    assert set(signers["schema"]["items"]["properties"]) >= {"r0", "tabs"}
    assert compact_size(signers) <= DEFAULT_MAX_BYTES
    assert tabs["path"] == "recipients.signers.tabs.tab3s" and "f49" in json.dumps(tabs["schema"])
    assert missing.is_error and "signers" in _text(missing) and "carbonCopys" in _text(missing)


# ------------------------------------------------------------------------------------ code mode


@pytest.mark.anyio
async def test_a_code_mode_stub_stays_within_the_budget_and_names_the_types_it_leaves_out(package: Path) -> None:
    fake = FakeUpstream(_document())
    async with code_client(package, fake=fake, environ={}) as (client, _):
        found = await client.call_tool(CODE_SEARCH, {"name": "op0"})
        stub = (found.structured_content or {})["stub"]
        omitted = stub.split("# Not shown, to stay within the result budget: ", 1)[1].split(".\n", 1)[0]
        first = omitted.split(", ")[0]
        part = await client.call_tool(CODE_SEARCH, {"name": "op0", "path": first})
        unknown = await client.call_tool(CODE_SEARCH, {"name": "op0", "path": "NoSuchType"})
    assert len(stub) <= STUB_BUDGET + 4096 and "async def op0(" in stub
    assert f"class {first}" in (part.structured_content or {})["stub"]
    assert unknown.is_error and "NoSuchType" in _text(unknown)


# ----------------------------------------------------------------------- the bound as a property


def _schemas(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    scalar = st.sampled_from(
        [
            {"type": "string", "description": "A text field with a long description " * 3},
            {"type": "integer", "minimum": 0},
            {"type": "boolean"},
            {"type": "string", "enum": ["a", "b"]},
        ]
    )
    if depth == 0:
        return scalar
    child = _schemas(depth - 1)
    obj = st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), child, min_size=1, max_size=6).map(
        lambda props: {"type": "object", "properties": props, "additionalProperties": False}
    )
    return st.one_of(
        scalar,
        obj,
        child.map(lambda item: {"type": "array", "items": item}),
        st.lists(obj, min_size=2, max_size=2).map(lambda members: {"anyOf": members}),
    )


def _instance(schema: dict[str, Any], draw: Any) -> Any:
    if "anyOf" in schema:
        return _instance(draw(st.sampled_from(schema["anyOf"])), draw)
    kind = schema.get("type")
    if kind == "object":
        return {name: _instance(sub, draw) for name, sub in schema["properties"].items() if draw(st.booleans())}
    if kind == "array":
        return [_instance(schema["items"], draw) for _ in range(draw(st.integers(0, 2)))]
    if "enum" in schema:
        return draw(st.sampled_from(schema["enum"]))
    return {"string": "s", "integer": 3, "boolean": True}[kind]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.dictionaries(st.from_regex(r"[a-z]{1,8}", fullmatch=True), _schemas(4), min_size=1, max_size=8), st.data())
def test_a_bounded_schema_fits_and_accepts_everything_the_whole_one_does(
    properties: dict[str, Any], data: st.DataObject
) -> None:
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    limit = data.draw(st.integers(200, 4000), label="limit")
    shown = bounded_schema(schema, limit, lambda path: f"see {path}")
    if shown is None:
        assert compact_size(schema) <= limit
        return
    assert compact_size(shown) <= limit
    for _ in range(3):
        instance = _instance(schema, data.draw)
        jsonschema.validate(instance, schema)
        jsonschema.validate(instance, shown)  # only ever wider: the whole schema still decides


def test_refs_recursion_and_paths_through_items_and_members() -> None:
    node = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
    }
    schema = {
        "type": "object",
        "properties": {
            "tree": {"$ref": "#/$defs/Node"},
            "pick": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "string"}]},
        },
        "$defs": {"Node": node},
    }
    assert compact_size(schema) > 200
    shown = bounded_schema(schema, 200, lambda path: f"see {path}")
    assert shown is not None and compact_size(shown) <= 200 and "$defs" not in shown
    part, _ = schema_at(schema, "tree.children.children.name")
    assert part is not None and part.get("type") == "string"
    member, _ = schema_at(schema, "pick.children")
    assert member is not None and member.get("type") == "array"
    none, possible = schema_at(schema, "tree.nope")
    assert none is None and possible == ["name", "children"]
