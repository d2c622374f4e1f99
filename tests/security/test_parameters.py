"""Parameter names the model cannot pick (P11, P15): one owner per query or cookie name, credential
slots never arguments, path templates with a fragment or literal query pairs.

The properties run over every operation of the golden packages and of the corpus
(``tests/security/operations.py``); build_request gets values no schema would allow (objects for
string parameters too), so they prove the runtime's own check, not the validator's.
"""

from __future__ import annotations

import functools
from typing import Any
from urllib.parse import quote, unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.contract.catalogue import HttpBinding, ParamBinding, ToolEntry
from bridge.contract.path_template import split_template
from bridge.request.build import PreparedRequest, build_request
from bridge.request.styles import serialize_cookie, serialize_query
from bridge.tools.errors import InvalidArgumentsError
from tests.security.operations import BASE, all_apis, base_args, bound_env

Slots = frozenset[tuple[str, str]]


# ------------------------------------------------------------------ P15: one owner per wire name


@functools.cache
def _operations_with_names() -> list[tuple[str, Slots, ToolEntry]]:
    found = []
    for source, slots, tools in all_apis():
        for entry in tools:
            if base_args(entry) is None:
                continue
            if any(p.location in ("query", "cookie") and p.bound is None for p in entry.binding.params):
                found.append((source, slots, entry))
    return found


def _own(param: ParamBinding) -> str:
    return param.wire if param.location == "cookie" else quote(param.wire, safe="")


def _owner(binding: HttpBinding, location: str, name: str) -> ParamBinding | None:
    params = [p for p in binding.params if p.location == location]
    exact = [p for p in params if name == _own(p)]
    deep = [p for p in params if p.style == "deepObject" and name.startswith(_own(p) + "[")]
    return (exact or deep or [None])[0]


def _check_names(entry: ToolEntry, slots: Slots, request: PreparedRequest, args: dict[str, Any]) -> None:
    """No name the operation does not declare (beyond allowed members), none declared twice."""
    binding = entry.binding
    literal = [quote(name, safe="") for name, _ in split_template(binding.path)[1]]
    for location, pairs, serialize in (
        ("query", request.query, serialize_query),
        ("cookie", request.cookies, serialize_cookie),
    ):
        params = [p for p in binding.params if p.location == location]
        declared = {p.wire.lower() for p in params} | {unquote(n).lower() for n in literal if location == "query"}
        forbidden = declared | {name.lower() for loc, name in slots if loc == location}
        members = {m for p in params for m in p.members}
        free = any(p.free_members for p in params)
        seen_members: set[str] = set()
        for name, _ in pairs:
            owner = _owner(binding, location, name)
            if owner is not None or (location == "query" and name in literal):
                continue
            member = unquote(name)
            assert member.lower() not in forbidden, (entry.operation, name)
            assert free or member in members, (entry.operation, name)
            assert member.lower() not in seen_members, (entry.operation, name)  # two objects, one name
            seen_members.add(member.lower())
        # Each declared name carries exactly the pairs its own parameter makes (or the template's).
        for param in params:
            if param.bound is not None:
                continue
            own_pairs = [pair for pair in serialize(param, args.get(param.arg)) if pair[0] == _own(param)]
            fixed = literal.count(_own(param)) if location == "query" else 0
            assert [pair for pair in pairs if pair[0] == _own(param)] == ([] if fixed else own_pairs), entry.operation
            assert sum(1 for name, _ in pairs if name.lower() == _own(param).lower()) == len(own_pairs) + fixed


def _member_names(entry: ToolEntry, slots: Slots) -> st.SearchStrategy[str]:
    names = [p.wire for p in entry.binding.params] + [name for _, name in slots]
    names += [p.wire.upper() for p in entry.binding.params] + [m for p in entry.binding.params for m in p.members]
    names += ["admin", "API_KEY", "session", "limit", "limit[x]", "a&b=c"]
    return st.one_of(st.sampled_from(names), st.text(max_size=8))


def _value(names: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    scalar = st.one_of(st.text(max_size=6), st.integers(-5, 1000), st.booleans())
    objects = st.dictionaries(names, scalar, max_size=4)
    return st.one_of(
        st.none(),
        scalar,
        objects,
        st.lists(scalar, max_size=3),
        st.lists(objects, max_size=2),
        st.dictionaries(names, objects, max_size=2),
    )


@pytest.mark.corpus
@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_no_argument_value_adds_a_query_or_cookie_name_the_operation_does_not_declare(data: st.DataObject) -> None:
    ops = _operations_with_names()
    assert len(ops) > 150  # the golden packages and the corpus really were loaded
    source, slots, entry = data.draw(st.sampled_from(ops), label="operation")
    args = base_args(entry)
    assert args is not None
    names = _member_names(entry, slots)
    for param in entry.binding.params:
        if param.location in ("query", "cookie") and param.bound is None and data.draw(st.booleans()):
            args[param.arg] = data.draw(_value(names), label=param.arg)
    try:
        request = build_request(entry.binding, args, base_url=BASE, operation=source, bound=bound_env(entry.binding))
    except InvalidArgumentsError:
        return
    _check_names(entry, slots, request, args)


def _binding(*params: ParamBinding, path: str = "/items") -> HttpBinding:
    return HttpBinding(method="GET", path=path, params=params)


def _query(wire: str, **options: Any) -> ParamBinding:
    options.setdefault("style", "form")
    options.setdefault("explode", True)
    return ParamBinding(arg=wire, wire=wire, location="query", **options)


LIMIT = _query("limit")
FILTER = _query("filter", members=("color", "size"))
EXTRA = _query("extra", free_members=True, reserved=("api_key",))
PREFS = ParamBinding(arg="prefs", wire="prefs", location="cookie", style="form", explode=True, members=("theme",))
SESSION = ParamBinding(arg="sid", wire="sid", location="cookie", style="form", explode=True)
DEEP = _query("deep", style="deepObject")
NAMES = _binding(LIMIT, FILTER, EXTRA, PREFS, SESSION, DEEP, _query("deep[status]"))


@pytest.mark.parametrize(
    ("args", "why"),
    [
        ({"filter": {"limit": 1000}, "limit": 10}, "another parameter's name, placed first"),
        ({"filter": {"LIMIT": 1000}}, "another parameter's name in another case"),
        ({"filter": {"admin": "true"}}, "not a declared member"),
        ({"extra": {"limit": 1000}}, "free keys, but another parameter's name"),
        ({"extra": {"api_key": "mine"}}, "free keys, but a credential slot"),
        ({"extra": {"filter": "x"}}, "free keys, but another object parameter's name"),
        ({"extra": {"color": "x"}, "filter": {"color": "y"}}, "one member name from two objects"),
        ({"limit": {"admin": "true"}}, "an object for a parameter that declares no members"),
        ({"prefs": {"session": "evil"}}, "a cookie member that is not declared"),
        ({"prefs": {"sid": "evil"}}, "a cookie member named like another cookie"),
        ({"sid": {"admin": "1"}}, "an object for a plain cookie"),
        ({"limit": [{"admin": 1}]}, "an array of objects is JSON under its own name (allowed)"),
        ({"deep": {"status": "x"}}, "a deepObject member that spells a declared name"),
        ({"deep": {"other": "x"}}, "a deepObject member under its own prefix (allowed)"),
    ],
)
def test_object_members_never_take_another_name(args: dict[str, Any], why: str) -> None:
    allowed = why.endswith("(allowed)")
    try:
        request = build_request(NAMES, args, base_url=BASE)
    except InvalidArgumentsError:
        assert not allowed, why
        return
    assert allowed, why
    assert [name for name, _ in request.query] in (["limit"], ["deep[other]"])


def test_declared_and_free_members_are_sent_as_names_of_their_own() -> None:
    request = build_request(
        NAMES,
        {"limit": 10, "filter": {"color": "red"}, "extra": {"q": "x"}, "prefs": {"theme": "dark"}},
        base_url=BASE,
    )
    assert request.query == (("limit", "10"), ("color", "red"), ("q", "x"))
    assert request.cookies == (("theme", "dark"),)


@pytest.mark.parametrize(
    ("param", "value", "names"),
    [
        (_query("f", style="deepObject", members=()), {"limit": 1, "a": {"b": 2}}, ["f[limit]", "f[a][b]"]),
        (_query("f", style="pipeDelimited", explode=False), {"limit": 1}, ["f"]),
        (_query("f", style="spaceDelimited", explode=False), {"limit": 1}, ["f"]),
        (_query("f", explode=False), {"limit": 1}, ["f"]),
        (_query("f", content_type="application/json"), {"limit": 1}, ["f"]),
        (_query("f"), [{"limit": 1}, {"limit": 2}], ["f", "f"]),
    ],
)
def test_other_styles_keep_object_members_under_their_own_name(
    param: ParamBinding, value: Any, names: list[str]
) -> None:
    request = build_request(_binding(param, LIMIT), {"f": value}, base_url=BASE)
    assert [unquote(name) for name, _ in request.query] == names


def test_header_objects_stay_one_header() -> None:
    header = ParamBinding(arg="x", wire="X-Flags", location="header", style="simple", explode=True)
    request = build_request(_binding(header), {"x": {"limit": 1, "Host": "evil"}}, base_url=BASE)
    assert [name for name, _ in request.headers] == ["Accept", "X-Flags"]


# ------------------------------------------------------------------ P11: credential slots


@pytest.mark.corpus
def test_no_tool_argument_binds_to_any_api_key_slot_over_golden_and_corpus() -> None:
    checked = 0
    for source, slots, tools in all_apis():
        for entry in tools:
            properties = entry.input_schema.get("properties", {})
            for param in entry.binding.params:
                key = param.wire.lower() if param.location == "header" else param.wire
                if param.location == "path" or param.bound is not None:
                    continue
                checked += 1
                assert (param.location, key) not in slots, (source, entry.operation, param.wire)
                assert param.arg in properties  # every other parameter is an argument
    assert checked > 500


@pytest.mark.corpus
def test_the_corpus_really_declares_slot_named_parameters() -> None:
    """The property above would be empty without specs like Swagger's petstore (deletePet's api_key)."""
    from generator.load.spec import load_spec
    from tests.node_tools import oas_examples

    declared = 0
    for spec in oas_examples():
        if spec.name != "petstore.json":
            continue
        document = load_spec(str(spec), validate=False).document
        for item in document.get("paths", {}).values():
            for op in item.values():
                for param in op.get("parameters", []) if isinstance(op, dict) else []:
                    if isinstance(param, dict) and (param.get("in"), param.get("name")) == ("header", "api_key"):
                        declared += 1
    assert declared >= 1


# ------------------------------------------------------------------ path templates


@pytest.mark.parametrize(
    ("template", "path", "query"),
    [
        ("/web_links/{id}#get_shared_link", "/base/web_links/7", ()),
        ("/web_links/{id}#", "/base/web_links/7", ()),
        (
            "/?Action=DescribeThings&Version=2016-11-15",
            "/base/",
            (("Action", "DescribeThings"), ("Version", "2016-11-15")),
        ),
        ("/{id}?uploads", "/base/7", (("uploads", ""),)),
        ("/{id}?uploads#frag", "/base/7", (("uploads", ""),)),
        ("/x?a=b%20c&d=%26", "/base/x", (("a", "b%20c"), ("d", "%26"))),
    ],
)
def test_a_template_fragment_is_dropped_and_its_literal_query_is_sent_as_pairs(
    template: str, path: str, query: tuple[tuple[str, str], ...]
) -> None:
    params = (ParamBinding(arg="id", wire="id", location="path", style="simple", explode=False, required=True),)
    request = build_request(HttpBinding(method="GET", path=template, params=params), {"id": "7"}, base_url=BASE)
    assert request.path == path and request.query == query
    assert "#" not in str(request.url) and "%23" not in request.path and "%3F" not in request.path


def test_a_literal_query_pair_cannot_be_repeated_or_shadowed_by_arguments() -> None:
    binding = _binding(_query("Action"), _query("extra", free_members=True), path="/?Action=Describe")
    request = build_request(binding, {"Action": "Delete"}, base_url=BASE)
    assert request.query == (("Action", "Describe"),)
    with pytest.raises(InvalidArgumentsError):
        build_request(binding, {"extra": {"action": "Delete"}}, base_url=BASE)


@pytest.mark.corpus
def test_templates_with_a_fragment_or_query_over_golden_and_corpus_send_neither_encoded() -> None:
    checked = 0
    for source, _, tools in all_apis():
        for entry in tools:
            if "#" not in entry.binding.path and "?" not in entry.binding.path:
                continue
            args = base_args(entry)
            assert args is not None, (source, entry.operation)
            request = build_request(entry.binding, args, base_url=BASE)
            assert "%23" not in request.path and "%3F" not in request.path and "#" not in str(request.url)
            literal = split_template(entry.binding.path)[1]
            assert request.query[: len(literal)] == tuple((quote(k, safe=""), quote(v, safe="")) for k, v in literal)
            checked += 1
    assert checked >= 4  # at least the golden parameter_names cases


# ------------------------------------------------------------------ end to end (golden parameter_names)


def test_fragment_and_literal_query_templates_generate_without_warnings_and_with_distinct_names() -> None:
    from generator.generate import build_api
    from generator.issues import Level
    from generator.options import GenerateOptions
    from tests.golden import spec_path

    _, api = build_api(str(spec_path("parameter_names")), GenerateOptions())
    # The one warning: the unbound `token` header is left out (a credential is never an argument).
    (issue,) = [issue for issue in api.issues if issue.level is not Level.NOTE]
    assert issue.where == "credentials" and ": token (header) in 1 operation." in issue.detail
    names = {op.path: op.tool_name for op in api.operations if "#" in op.path}
    assert len(set(names.values())) == len(names) == 3


@pytest.mark.anyio
async def test_the_served_package_refuses_foreign_members_before_any_request_and_sends_templates_cleanly() -> None:
    from mcp import Client

    from bridge.calls.runtime import HttpRuntime
    from bridge.serving.assemble import build_bridge_server, build_registry
    from bridge.serving.package import load_catalogue
    from tests.bridge.fake_upstream import FakeUpstream
    from tests.security.operations import ROOT

    package = ROOT / "generated" / "parameter_names"
    catalogue = load_catalogue(package)
    fake = FakeUpstream()
    fake.reply(json_body=[{"id": "1"}])
    environ = {"PARAMETER_NAMES_HEADER_KEY_API_KEY": "K"}
    runtime = HttpRuntime.create(catalogue, base_url="http://up.test/v1", environ=environ, transport=fake.transport())
    calls = [
        ("listItems", {"limit": 10, "filter": {"limit": 1000}}),
        ("listItems", {"filter": {"admin": "true"}}),
        ("listItems", {"extra": {"api_key": "mine"}}),
        ("listItems", {"extra": {"LIMIT": "1000"}}),
        ("listItems", {"prefs": {"session": "evil"}}),
        ("listItems", {"api_key": "mine"}),
        ("deleteItem", {"id": "1", "x-api-key": "mine"}),
    ]
    async with runtime:
        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, package))
        async with Client(server) as client:
            refused = [(await client.call_tool(tool, args)).is_error for tool, args in calls]
            assert refused == [True] * len(calls) and fake.requests == []
            good = {"limit": 10, "filter": {"color": "red"}, "extra": {"q": "x"}, "prefs": {"theme": "dark"}}
            assert not (await client.call_tool("listItems", good)).is_error
            shared = {"id": "7"}  # its one-value `fields` is a constant the bridge sends
            assert not (await client.call_tool("get_web_links_id_get_shared_link", shared)).is_error
            assert not (await client.call_tool("DescribeThings", {"MaxResults": 3})).is_error
    listed, link, things = fake.requests
    assert listed.target == "/v1/items?limit=10&color=red&q=x" and listed.cookies == {"theme": "dark"}
    assert link.target == "/v1/web_links/7?fields=shared_link"
    assert things.target == "/v1/?Action=DescribeThings&Version=2016-11-15&MaxResults=3"


# ------------------------------------------------------------------ the generator's half: schemas


def _object_param(schema: dict[str, Any], **extra: Any) -> tuple[dict[str, Any], ParamBinding]:
    import yaml

    from generator.emit.catalogue import http_binding
    from generator.options import GenerateOptions
    from generator.parse.api import parse_api

    document = yaml.safe_load("""
openapi: 3.0.3
info: {title: T, version: "1"}
components:
  securitySchemes:
    key: {type: apiKey, in: query, name: api_key}
paths:
  /items:
    get:
      parameters:
        - {name: limit, in: query, schema: {type: integer, maximum: 50}}
      responses: {"200": {description: ok}}
""")
    document["paths"]["/items"]["get"]["parameters"].append({"name": "obj", "in": "query", "schema": schema, **extra})
    api = parse_api(document, options=GenerateOptions(), source_name="t.yaml")
    (op,) = api.operations
    (param,) = [p for p in http_binding(op).params if p.wire == "obj"]
    return op.arguments["properties"]["obj"], param


OBJECT = {"type": "object", "properties": {"color": {"type": "string"}, "limit": {"type": "integer"}}}
NOT_OTHERS = {"not": {"enum": ["api_key", "limit"]}}


@pytest.mark.parametrize(
    ("schema", "extra", "members", "free", "names"),
    [
        ({**OBJECT, "required": ["limit", "color"]}, {}, ("color",), False, None),
        ({**OBJECT, "nullable": True}, {}, ("color",), False, None),
        ({**OBJECT, "additionalProperties": True}, {}, (), True, NOT_OTHERS),
        ({"type": "object", "additionalProperties": {"type": "string"}}, {}, (), True, NOT_OTHERS),
        ({"type": "object"}, {}, (), True, NOT_OTHERS),
        ({"allOf": [OBJECT]}, {}, (), True, NOT_OTHERS),
        ({}, {}, (), True, NOT_OTHERS),
        ({"type": "string"}, {}, (), False, None),
        ({"type": "array", "items": OBJECT}, {}, (), False, None),
        (OBJECT, {"style": "deepObject"}, (), False, None),
        (OBJECT, {"explode": False}, (), False, None),
        (OBJECT, {"style": "pipeDelimited", "explode": False}, (), False, None),
    ],
)
def test_object_parameter_schemas_allow_exactly_the_members_the_runtime_sends(
    schema: dict[str, Any], extra: dict[str, Any], members: tuple[str, ...], free: bool, names: Any
) -> None:
    arg_schema, param = _object_param(schema, **extra)
    assert (param.members, param.free_members) == (members, free)
    assert arg_schema.get("propertyNames") == names
    if members:
        assert arg_schema["additionalProperties"] is False and set(arg_schema["properties"]) == set(members)
        assert "limit" not in arg_schema.get("required", [])
    assert param.reserved == (("api_key",) if free else ())


# ----------------------------------------------------------------------- near-miss names (P15)

_CASES = st.sampled_from([str.lower, str.upper, str.title, lambda s: s.swapcase()])
_EDGES = st.sampled_from(
    ["", " ", "  ", "\t", "\n", "\r", "\x00", "\x0b", "\x1f", "\x7f", "\u00a0", "\u200b", "\u3000"]
)
_SUFFIX = st.sampled_from(["", "[]", "[0]", "[x]", "[][]", " []", "\x00", "\x00junk", "\x00[]"])


def _fullwidth(name: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in name)


@st.composite
def _near_miss(draw: st.DrawFn, name: str) -> str:
    """``name`` as a server that cuts or normalises names may still read it."""
    spelled = draw(_CASES)(name)
    if draw(st.booleans()):
        spelled = spelled.replace("_", draw(st.sampled_from(["_", ".", " "])))
    if draw(st.booleans()):
        spelled = _fullwidth(spelled)
    return draw(_EDGES) + spelled + draw(_EDGES) + draw(_SUFFIX)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), target=st.sampled_from(["api_key", "limit", "filter", "sid"]))
def test_a_free_key_a_server_may_read_as_a_slot_or_another_parameter_is_refused(
    data: st.DataObject, target: str
) -> None:
    name = data.draw(_near_miss(target), label="name")
    where = "prefs" if target == "sid" else "extra"
    with pytest.raises(InvalidArgumentsError):
        build_request(NAMES, {where: {name: "x"}}, base_url=BASE)


@pytest.mark.parametrize("name", ["api_keys", "limits", "lim it", "q", "api_key_id", "keys"])
def test_free_keys_that_are_only_alike_are_sent(name: str) -> None:
    request = build_request(NAMES, {"extra": {name: "x"}}, base_url=BASE)
    assert [unquote(n) for n, _ in request.query] == [name]


@pytest.mark.parametrize("name", ["xapi_key", "api-key", "api_key_2", "[api_key]", "access_token", "X-Amz-Signature"])
def test_free_keys_named_like_any_credential_are_refused(name: str) -> None:
    with pytest.raises(InvalidArgumentsError):
        build_request(NAMES, {"extra": {name: "x"}}, base_url=BASE)


NEAR_MISS_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Near", "version": "1"},
    "servers": [{"url": "https://near.example/v1"}],
    "security": [{"key": []}],
    "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": "api_key"}}},
    "paths": {
        "/search": {
            "get": {
                "operationId": "search",
                "parameters": [
                    {"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 50}},
                    {
                        "name": "extra",
                        "in": "query",
                        "style": "form",
                        "explode": True,
                        "schema": {"type": "object", "additionalProperties": {"type": "string"}},
                    },
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


@pytest.mark.anyio
@pytest.mark.parametrize(
    "name",
    ["api_key[]", "api_key ", "api_key\x00", "API_KEY", " api_key", "api_key[0]", "api.key", "limit[]", "LIMIT\t"],
)
async def test_the_bridge_never_sends_a_free_key_a_server_may_read_as_the_credential(name: str) -> None:
    from tests.security.fault_server import FaultServer
    from tests.security.harness import bridge_client, catalogue_of

    environ = {"NEAR_KEY_API_KEY": "near-secret-0123456789"}
    async with FaultServer() as server:
        async with bridge_client(
            server.url + "/v1", catalogue=catalogue_of(NEAR_MISS_SPEC, "near"), environ=environ
        ) as c:
            refused = await c.call_tool("search", {"extra": {name: "mine"}})
            fine = await c.call_tool("search", {"extra": {"q": "x"}, "limit": 5})
    assert refused.is_error and "cannot have the member" in refused.content[0].text  # type: ignore[union-attr]
    assert not fine.is_error
    assert len(server.attempts) == 1 and "q=x" in server.attempts[0].target
