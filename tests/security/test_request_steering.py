"""Unsteerable requests (P10-P17; test plan rows 1-10, 13): no argument chooses the host, the path
or the framing of the upstream request.

Every LB test runs the real bridge (generator -> catalogue -> tools -> MCP server, in-memory MCP
client) against a raw socket server on 127.0.0.1 and asserts on what that server received;
"0 upstream" means it recorded no request at all.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from typing import Any
from urllib.parse import parse_qsl, unquote

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.contract.catalogue import ToolEntry
from bridge.request import build as request_module
from bridge.request.base_url import origin_of, resolve_base_url
from bridge.request.build import build_request, check_prepared
from bridge.request.styles import has_dot_component, is_dot_segment
from bridge.serving.assemble import ServeOptions, build_runtime
from bridge.tools.errors import ConfigurationError, InvalidArgumentsError, UnsafeRequestError
from bridge.upstream.client import Upstream
from tests.security.fault_server import Fault, FaultServer
from tests.security.harness import ENV, SECRET, bridge_client, hardening_catalogue, result_text
from tests.security.operations import BASE, NASTY, all_operations, base_args, bound_env, string_args

pytestmark = pytest.mark.anyio


async def call(server: FaultServer, tool: str, args: dict[str, Any], **options: Any) -> tuple[bool, str]:
    with anyio.fail_after(10):
        async with bridge_client(server.url + "/v1", **options) as client:
            result = await client.call_tool(tool, args)
    return bool(result.is_error), result_text(result)


# ------------------------------------------------------------------------- rows 1-3: path values


@pytest.mark.parametrize(
    "value",
    ["..", ".", "", "../admin", "../../x", "a/../../b", "..\\admin", "..;x", "．．", "%c0%ae%c0%ae"],
)
async def test_dot_dot_path_argument_never_reaches_upstream(value: str) -> None:
    async with FaultServer(Fault.echo()) as server:
        is_error, text = await call(server, "getItem", {"id": value})
    # Refused by the request builder, or (the empty value) already by the schema's minLength.
    assert is_error and ('Argument "id"' in text or "\nid: " in text)
    assert server.attempts == []


@pytest.mark.parametrize("value", ["%2e%2e", "%2E%2E", ".%2E", "%2e", "..%2f", "..%2Fadmin", "%252e%252e", "%2e%2e%5c"])
async def test_percent_encoded_dot_segments_are_refused_not_resolved(value: str) -> None:
    async with FaultServer(Fault.echo()) as server:
        is_error, _ = await call(server, "getItem", {"id": value})
    assert is_error
    assert server.attempts == []


@pytest.mark.parametrize(
    ("value", "segment"),
    [
        ("a/b", "a%2Fb"),
        ("a\\b", "a%5Cb"),
        ("a?x=1", "a%3Fx%3D1"),
        ("a#f", "a%23f"),
        ("a;b", "a%3Bb"),
        ("a b", "a%20b"),
        ("ü", "%C3%BC"),
        ("%2fadmin", "%252fadmin"),
        ("...", "..."),
    ],
)
async def test_path_separators_stay_inside_one_encoded_segment(value: str, segment: str) -> None:
    async with FaultServer(Fault.echo()) as server:
        is_error, _ = await call(server, "getItem", {"id": value})
    assert not is_error
    assert [a.path for a in server.attempts] == [f"/v1/items/{segment}"]
    assert unquote(segment) == value


async def test_two_slots_in_one_segment_cannot_spell_a_dot_segment() -> None:
    async with FaultServer(Fault.echo()) as server:
        for args in ({"name": ".", "ext": "x"}, {"name": "a/", "ext": "/b"}, {"name": "x", "ext": ""}):
            is_error, _ = await call(server, "getFile", args)
            assert is_error, args
        assert server.attempts == []
        assert not (await call(server, "getFile", {"name": "report", "ext": "pdf"}))[0]
    assert [a.path for a in server.attempts] == ["/v1/files/report.pdf"]


# ------------------------------------------------------------------- row 4: segment invariant (HYP)


def _check_request(entry: ToolEntry, request: request_module.PreparedRequest) -> None:
    """The origin, the segment count and every literal segment are the template's."""
    url = httpx.URL(str(request.url))
    assert origin_of(url) == origin_of(BASE), url
    assert not url.userinfo and not url.fragment
    on_the_wire = httpx.Request(request.method, request.url, headers=list(request.headers))
    assert on_the_wire.url.host == BASE.host and on_the_wire.url.port == BASE.port
    segments = url.raw_path.decode("ascii").split("?", 1)[0].split("/")[1:]
    expected = request.template_segments
    assert (
        len(segments)
        == len(expected)
        == len(BASE.path.rstrip("/").split("/")[1:]) + len(entry.binding.path.split("/")[1:])
    )
    for actual, literal in zip(segments, expected, strict=True):
        if literal is not None:
            assert actual == literal
        else:  # a filled slot: never empty, never a dot segment, not even once decoded
            assert not is_dot_segment(actual) and not has_dot_component(actual), actual
    check_prepared(request, BASE)


@functools.cache
def _path_arg_operations() -> list[tuple[str, ToolEntry, str]]:
    ops = []
    for source, entry in all_operations():
        for param in entry.binding.params:
            if param.location == "path":
                ops.append((source, entry, param.arg))
    return ops


_TEXT = st.one_of(st.text(max_size=40), st.sampled_from(NASTY), st.text(alphabet="./\\%2eEfF;", max_size=12))


@pytest.mark.corpus
@settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_any_path_argument_keeps_segment_count_and_origin_over_golden_and_corpus(data: st.DataObject) -> None:
    ops = _path_arg_operations()
    assert len(ops) > 100  # the golden packages and the corpus really were loaded
    source, entry, arg = data.draw(st.sampled_from(ops), label="operation")
    value = data.draw(_TEXT, label="value")
    args = base_args(entry)
    assert args is not None
    args[arg] = value
    try:
        request = build_request(
            entry.binding, args, base_url=BASE, operation=f"{source}:{entry.operation}", bound=bound_env(entry.binding)
        )
    except InvalidArgumentsError:
        return
    _check_request(entry, request)
    param = next(p for p in entry.binding.params if p.arg == arg)
    template_segment = next(s for s in entry.binding.path.split("/") if "{" + param.wire + "}" in s)
    if param.style in ("simple", "") and template_segment == "{" + param.wire + "}" and param.content_type is None:
        index = entry.binding.path.split("/").index(template_segment)
        offset = len(BASE.path.rstrip("/").split("/")) - 1
        raw = request.path.split("/")[index + offset]
        assert unquote(raw) == value  # the value itself, one segment, nothing dropped


@pytest.mark.corpus
def test_nasty_path_values_never_change_segments_in_any_operation() -> None:
    """The deterministic half of row 4: every NASTY value in every path slot of every operation."""
    checked = refused = 0
    for source, entry, arg in _path_arg_operations():
        args = base_args(entry)
        assert args is not None
        for value in NASTY:
            try:
                request = build_request(
                    entry.binding, {**args, arg: value}, base_url=BASE, operation=source, bound=bound_env(entry.binding)
                )
            except InvalidArgumentsError:
                refused += 1
                continue
            _check_request(entry, request)
            checked += 1
    assert checked > 100 and refused > 100


# ------------------------------------------------------ row 5: absolute URLs in any argument (HYP+LB)


@functools.cache
def _string_arguments() -> list[tuple[str, ToolEntry, str]]:
    return [(source, entry, arg) for source, entry in all_operations() for arg in string_args(entry)]


@pytest.mark.corpus
@settings(max_examples=250, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_no_string_argument_of_any_tool_changes_the_host(data: st.DataObject) -> None:
    source, entry, arg = data.draw(st.sampled_from(_string_arguments()), label="argument")
    value = data.draw(_TEXT, label="value")
    args = base_args(entry)
    assert args is not None
    args[arg] = value
    try:
        request = build_request(entry.binding, args, base_url=BASE, operation=source, bound=bound_env(entry.binding))
    except InvalidArgumentsError:
        return
    _check_request(entry, request)
    for name, header_value in request.headers:
        assert "\r" not in header_value and "\n" not in header_value and name.lower() != "host"


@pytest.mark.parametrize("value", ["http://127.0.0.1:{other}/x", "//127.0.0.1:{other}/x", "http://169.254.169.254/"])
async def test_url_shaped_arguments_never_reach_another_host(value: str) -> None:
    async with FaultServer(Fault.echo()) as server, FaultServer(Fault.echo()) as other:
        text = value.format(other=other.port)
        calls: list[tuple[str, dict[str, Any]]] = [
            ("getItem", {"id": text, "q": text, "X-Trace": text, "session": text}),
            ("listItems", {"q": text, "tags": [text], "filter": {text: text}}),
            ("createItem", {"name": text, "note": text}),
            ("replaceItem", {"id": "1", "name": text}),
        ]
        for tool, args in calls:
            is_error, _ = await call(server, tool, args)
            assert not is_error, tool
        assert other.attempts == []
    assert server.count == len(calls)
    for attempt in server.attempts:
        assert attempt.header("host") == f"127.0.0.1:{server.port}"
        assert attempt.path.startswith("/v1/items")


# -------------------------------------------------------------------------- row 6: server variables


def test_server_variables_outside_the_enum_are_refused() -> None:
    servers = hardening_catalogue().servers
    default = resolve_base_url(servers, override=None, variables={})
    assert str(default) == "https://acme.api.example/v1"
    assert str(resolve_base_url(servers, override=None, variables={"tenant": "globex"})).startswith("https://globex.")
    for bad in ("evil.example/", "acme.evil.example#", "127.0.0.1:1", "acme@evil"):
        with pytest.raises(ConfigurationError, match="not allowed"):
            resolve_base_url(servers, override=None, variables={"tenant": bad})
    with pytest.raises(ConfigurationError, match="Unknown server variable"):
        resolve_base_url(servers, override=None, variables={"region": "x"})
    with pytest.raises(ConfigurationError):
        build_runtime(hardening_catalogue(), ServeOptions(server_variables={"tenant": "evil"}), environ={})


async def test_a_tool_argument_named_like_a_server_variable_cannot_pick_the_host() -> None:
    async with FaultServer(Fault.echo()) as server:
        is_error, text = await call(server, "getItem", {"id": "1", "tenant": "evil.example"})
        assert is_error and "tenant" in text
        assert server.attempts == []
    request = build_request(hardening_catalogue().tools[0].binding, {"id": "1", "tenant": "evil"}, base_url=BASE)
    assert request.url.host == BASE.host


# ------------------------------------------------------------------------------ row 7: header CRLF


@pytest.mark.parametrize("value", ["a\r\nX-Injected: 1", "a\nX-Injected: 1", "a\rb", "a\x00b", "a\x7fb", "é", "a\x1bb"])
async def test_header_argument_with_control_characters_is_refused_before_sending(value: str) -> None:
    async with FaultServer(Fault.echo()) as server:
        is_error, text = await call(server, "getItem", {"id": "1", "X-Trace": value})
    assert is_error and "X-Trace" in text
    assert server.attempts == []


async def test_a_prepared_request_altered_after_building_is_refused_by_upstream_send() -> None:
    """Defence in depth: even if the builder's checks were bypassed, Upstream.send refuses."""
    entry = hardening_catalogue().tools[0]
    async with FaultServer(Fault.echo()) as server:
        base = httpx.URL(server.url + "/v1")
        good = build_request(entry.binding, {"id": "1"}, base_url=base)
        tampered = [
            dataclasses.replace(good, headers=(*good.headers, ("X-Trace", "a\r\nX-Injected: 1"))),
            dataclasses.replace(good, headers=(*good.headers, ("Host", "evil.example"))),
            dataclasses.replace(good, headers=(*good.headers, ("Transfer-Encoding", "chunked"))),
            dataclasses.replace(good, headers=(*good.headers, ("X-Forwarded-For", "10.0.0.1"))),
            dataclasses.replace(good, url=httpx.URL(f"http://127.0.0.1:{server.port}/v1/admin")),
            dataclasses.replace(good, url=httpx.URL("http://169.254.169.254/v1/items/1")),
            dataclasses.replace(good, path="/v1/items/1/../../admin"),
        ]
        # Changed in place, past the frozen dataclass (the URL proof made at build time must not
        # vouch for it): the URL is proved again.
        in_place = build_request(entry.binding, {"id": "1"}, base_url=base)
        object.__setattr__(in_place, "url", httpx.URL(f"http://127.0.0.1:{server.port}/v1/admin"))
        tampered.append(in_place)
        async with Upstream(base) as upstream:
            for request in tampered:
                with pytest.raises(UnsafeRequestError, match="nothing was sent"):
                    await upstream.send(request)
            assert server.attempts == []
            await upstream.send(good)
    assert server.count == 1


def test_path_check_after_building_catches_an_encoding_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutation check: with path encoding switched off, the post-build check still refuses."""
    entry = hardening_catalogue().tools[0]
    monkeypatch.setattr(request_module, "serialize_path", lambda param, value: str(value))
    for value in ("a/b", "x?admin=1", "x#y", "../admin", "a/../../b"):
        with pytest.raises((UnsafeRequestError, InvalidArgumentsError)):
            build_request(entry.binding, {"id": value}, base_url=BASE)
    with pytest.raises(UnsafeRequestError):
        build_request(entry.binding, {"id": "a/b"}, base_url=BASE)


# ---------------------------------------------------------------------------- row 8: header deny-list


async def test_forbidden_header_parameters_are_not_arguments_and_host_is_the_upstream() -> None:
    forbidden = {
        "Host": "evil.example",
        "X-Forwarded-For": "10.0.0.1",
        "Transfer-Encoding": "chunked",
        "Content-Length": "5",
        "Cookie": "session=CANARY",
        "Connection": "keep-alive, X-API-Key",
    }
    async with FaultServer(Fault.echo()) as server:
        refused, text = await call(server, "getItem", {"id": "1", "X-Trace": "t-1", **forbidden})
        assert refused and "Unrecognized keys" in text
        assert server.attempts == []
        ok, _ = await call(server, "getItem", {"id": "1", "X-Trace": "t-1"})
        assert not ok
        undeclared, text = await call(server, "getItem", {"id": "1", "X-Foo": "bar"})
        assert undeclared and "X-Foo" in text
    (attempt,) = server.attempts
    names = [name.lower() for name, _ in attempt.headers]
    assert attempt.header("host") == f"127.0.0.1:{server.port}"
    assert attempt.header("x-trace") == "t-1"
    assert attempt.header("x-api-key") == SECRET
    assert "x-forwarded-for" not in names and "transfer-encoding" not in names and "content-length" not in names
    assert "cookie" not in names and "x-foo" not in names
    assert "CANARY" not in json.dumps(attempt.headers) and "evil" not in json.dumps(attempt.headers)


# ------------------------------------------------------------------------------ row 9: query values


async def test_query_values_cannot_add_parameters_or_fragments() -> None:
    async with FaultServer(Fault.echo()) as server:
        assert not (await call(server, "getItem", {"id": "1", "q": "a&admin=true#x"}))[0]
        assert not (await call(server, "getItem", {"id": "1", "q": "1\r\n2"}))[0]
        args = {"tags": ["a&b", "c=d", "#e"], "filter": {"k&x": "v#", "api_key": "mine"}, "q": "?api_key=x"}
        assert not (await call(server, "listItems", args))[0]
    first, second, third = server.attempts
    assert parse_qsl(first.query) == [("q", "a&admin=true#x"), ("api_key", "QSECRET-canary-19af")]
    assert parse_qsl(second.query)[0] == ("q", "1\r\n2")
    pairs = parse_qsl(third.query)
    assert [k for k, _ in pairs].count("api_key") == 1 and ("api_key", "QSECRET-canary-19af") in pairs
    assert ("tags", "a&b") in pairs and ("tags", "c=d") in pairs and ("tags", "#e") in pairs
    assert ("filter[k&x]", "v#") in pairs and ("q", "?api_key=x") in pairs
    assert "#" not in third.target


# ------------------------------------------------------------------ row 10: invalid arguments, 0 sent


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("getItem", {"id": "1", "extra": "x"}),
        ("getItem", {"id": 5}),
        ("getItem", {}),
        ("listItems", {"tags": "not-an-array"}),
        ("createItem", {"name": {"nested": True}}),
    ],
)
async def test_invalid_arguments_are_a_tool_error_and_nothing_is_sent(tool: str, args: dict[str, Any]) -> None:
    async with FaultServer(Fault.echo()) as server:
        is_error, text = await call(server, tool, args)
    assert is_error and "Invalid arguments" in text
    assert server.attempts == []


# ------------------------------------------------------------------- row 13: no token passthrough


async def test_client_tokens_in_the_mcp_request_are_never_forwarded_upstream() -> None:
    meta = {"authorization": "Bearer CLIENT-CANARY", "cookie": "s=CLIENT-CANARY", "headers": {"x": "CLIENT-CANARY"}}
    async with FaultServer(Fault.echo()) as server:
        async with bridge_client(server.url + "/v1") as client:
            result = await client.call_tool("getItem", {"id": "1"}, meta=meta)  # type: ignore[arg-type]
    assert not result.is_error
    (attempt,) = server.attempts
    assert "CLIENT-CANARY" not in json.dumps(attempt.headers) + attempt.target
    assert attempt.header("x-api-key") == SECRET and attempt.header("authorization") is None


def test_the_environment_is_the_only_source_of_upstream_credentials() -> None:
    assert set(ENV) == {"HARDENING_KEY_API_KEY", "HARDENING_QKEY_API_KEY"}
    catalogue = hardening_catalogue()
    for entry in catalogue.tools:
        properties = entry.input_schema.get("properties", {})
        assert "X-API-Key" not in properties and "api_key" not in properties
