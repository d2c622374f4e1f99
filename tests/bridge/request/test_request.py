"""Request building: exact wire form per OpenAPI, checked by the fake upstream's openapi-core validation."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.contract.catalogue import BodyBinding, BodyField, HttpBinding, ParamBinding, ServerSpec, ServerVariable
from bridge.request.base_url import resolve_base_url
from bridge.request.build import build_request
from bridge.secrets.credentials import CredentialParts
from bridge.tools.errors import ConfigurationError, InvalidArgumentsError, UnsafeRequestError
from bridge.upstream.client import Upstream
from tests.bridge.fake_upstream import BASE_URL, FakeUpstream, binding_from_spec

API = f"{BASE_URL}/api"
OK = {"200": {"description": "ok"}}
STRING: dict[str, Any] = {"type": "string"}
ARRAY: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
OBJECT: dict[str, Any] = {"type": "object", "properties": {"R": {"type": "integer"}, "G": {"type": "integer"}}}
KINDS = {"prim": (STRING, "blue"), "arr": (ARRAY, ["blue", "black"]), "obj": (OBJECT, {"R": 100, "G": 200})}


def _param(name: str, location: str, style: str, explode: bool, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "in": location,
        "style": style,
        "explode": explode,
        "schema": schema,
        "required": True,
    } | extra


def _styles_spec() -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for style in ("simple", "label", "matrix"):
        for explode in (False, True):
            for kind, (schema, _) in KINDS.items():
                paths[f"/p/{style}/{int(explode)}/{kind}/{{v}}"] = {
                    "get": {"parameters": [_param("v", "path", style, explode, schema)], "responses": OK}
                }
    for style in ("form", "spaceDelimited", "pipeDelimited", "deepObject"):
        for explode in (False, True):
            for kind, (schema, _) in KINDS.items():
                # openapi-core 0.23 looks an exploded form object up under its own name ("v"),
                # which never appears on the wire, so that one case is declared optional.
                required = not (style == "form" and explode and kind == "obj")
                paths[f"/q/{style}/{int(explode)}/{kind}"] = {
                    "get": {
                        "parameters": [_param("v", "query", style, explode, schema, required=required)],
                        "responses": OK,
                    }
                }
    for explode in (False, True):
        for kind, (schema, _) in KINDS.items():
            paths[f"/h/{int(explode)}/{kind}"] = {
                "get": {"parameters": [_param("X-V", "header", "simple", explode, schema)], "responses": OK}
            }
            paths[f"/c/{int(explode)}/{kind}"] = {
                "get": {"parameters": [_param("v", "cookie", "form", explode, schema)], "responses": OK}
            }
    pet = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "age": {"type": "integer"},
            "vip": {"type": "boolean"},
        },
    }
    upload = {
        "type": "object",
        "required": ["file"],
        "properties": {
            "name": {"type": "string"},
            "file": {"type": "string", "format": "binary"},
            "meta": {"type": "object", "properties": {"a": {"type": "integer"}}},
        },
    }
    paths.update(
        {
            "/items/{id}": {
                "get": {
                    "parameters": [
                        _param("id", "path", "simple", False, STRING),
                        {"name": "q", "in": "query", "schema": STRING},
                        {"name": "X-Trace", "in": "header", "schema": STRING},
                        {"name": "Host", "in": "header", "schema": STRING},
                        {"name": "Authorization", "in": "header", "schema": STRING},
                        {"name": "X-Forwarded-For", "in": "header", "schema": STRING},
                        {"name": "Content-Length", "in": "header", "schema": STRING},
                        {"name": "Transfer-Encoding", "in": "header", "schema": STRING},
                        {"name": "Connection", "in": "header", "schema": STRING},
                        {"name": "Cookie", "in": "header", "schema": STRING},
                    ],
                    "responses": OK,
                }
            },
            "/files/{name}.{ext}": {
                "get": {
                    "parameters": [
                        _param("name", "path", "simple", False, STRING),
                        _param("ext", "path", "simple", False, STRING),
                    ],
                    "responses": OK,
                }
            },
            "/json": {
                "post": {
                    "requestBody": {"required": True, "content": {"application/json": {"schema": pet}}},
                    "responses": OK,
                }
            },
            "/merge": {
                "patch": {
                    "requestBody": {"required": True, "content": {"application/merge-patch+json": {"schema": pet}}},
                    "responses": OK,
                }
            },
            "/form": {
                "post": {
                    "requestBody": {
                        "required": True,
                        "content": {"application/x-www-form-urlencoded": {"schema": pet}},
                    },
                    "responses": OK,
                }
            },
            "/upload": {
                "post": {
                    "requestBody": {
                        "required": True,
                        "content": {
                            "multipart/form-data": {
                                "schema": upload,
                                "encoding": {"meta": {"contentType": "application/json"}},
                            }
                        },
                    },
                    "responses": OK,
                }
            },
            "/octet": {
                "put": {
                    "requestBody": {
                        "required": True,
                        "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
                    },
                    "responses": OK,
                }
            },
            "/text": {
                "put": {
                    "requestBody": {"required": True, "content": {"text/plain": {"schema": STRING}}},
                    "responses": OK,
                }
            },
            "/optional-body": {
                "post": {"requestBody": {"content": {"application/json": {"schema": pet}}}, "responses": OK}
            },
            "/search": {
                "get": {
                    "parameters": [
                        {"name": "filter", "in": "query", "content": {"application/json": {"schema": OBJECT}}},
                        {"name": "next", "in": "query", "allowReserved": True, "schema": STRING},
                        {"name": "flag", "in": "query", "schema": {"type": "boolean"}},
                    ],
                    "responses": OK,
                }
            },
        }
    )
    return {
        "openapi": "3.0.3",
        "info": {"title": "styles", "version": "1"},
        "servers": [{"url": API}],
        "paths": paths,
    }


SPEC = _styles_spec()


async def send(
    method: str, path: str, args: dict[str, Any], *, fake: FakeUpstream | None = None, **options: Any
) -> FakeUpstream:
    fake = fake or FakeUpstream(SPEC)
    binding = binding_from_spec(SPEC, method, path, **options)
    request = build_request(binding, args, base_url=API)
    async with Upstream(API, transport=fake.transport()) as upstream:
        response = await upstream.send(request)
    assert response.status == 200
    return fake


PATH_CASES = [
    ("simple", 0, "prim", "blue"),
    ("simple", 0, "arr", "blue,black"),
    ("simple", 0, "obj", "R,100,G,200"),
    ("simple", 1, "prim", "blue"),
    ("simple", 1, "arr", "blue,black"),
    ("simple", 1, "obj", "R=100,G=200"),
    ("label", 0, "prim", ".blue"),
    ("label", 0, "arr", ".blue,black"),
    ("label", 0, "obj", ".R,100,G,200"),
    ("label", 1, "prim", ".blue"),
    ("label", 1, "arr", ".blue.black"),
    ("label", 1, "obj", ".R=100.G=200"),
    ("matrix", 0, "prim", ";v=blue"),
    ("matrix", 0, "arr", ";v=blue,black"),
    ("matrix", 0, "obj", ";v=R,100,G,200"),
    ("matrix", 1, "prim", ";v=blue"),
    ("matrix", 1, "arr", ";v=blue;v=black"),
    ("matrix", 1, "obj", ";R=100;G=200"),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("style", "explode", "kind", "wire"), PATH_CASES)
async def test_path_parameter_styles_reach_upstream_exactly(style: str, explode: int, kind: str, wire: str) -> None:
    path = f"/p/{style}/{explode}/{kind}/{{v}}"
    fake = await send("GET", path, {"v": KINDS[kind][1]})
    assert [r.target for r in fake.requests] == [f"/api/p/{style}/{explode}/{kind}/{wire}"]
    assert fake.violations == []


QUERY_CASES = [
    ("form", 0, "prim", "v=blue"),
    ("form", 0, "arr", "v=blue,black"),
    ("form", 0, "obj", "v=R,100,G,200"),
    ("form", 1, "prim", "v=blue"),
    ("form", 1, "arr", "v=blue&v=black"),
    ("form", 1, "obj", "R=100&G=200"),
    ("spaceDelimited", 0, "arr", "v=blue%20black"),
    ("spaceDelimited", 0, "obj", "v=R%20100%20G%20200"),
    ("pipeDelimited", 0, "arr", "v=blue%7Cblack"),
    ("pipeDelimited", 0, "obj", "v=R%7C100%7CG%7C200"),
    ("deepObject", 1, "obj", "v[R]=100&v[G]=200"),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("style", "explode", "kind", "wire"), QUERY_CASES)
async def test_query_parameter_styles_reach_upstream_exactly(style: str, explode: int, kind: str, wire: str) -> None:
    path = f"/q/{style}/{explode}/{kind}"
    fake = await send("GET", path, {"v": KINDS[kind][1]})
    assert [r.query for r in fake.requests] == [wire]
    assert fake.violations == []


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("explode", "kind", "wire"),
    [(0, "prim", "blue"), (0, "arr", "blue,black"), (0, "obj", "R,100,G,200"), (1, "obj", "R=100,G=200")],
)
async def test_header_parameters_use_simple_style(explode: int, kind: str, wire: str) -> None:
    fake = await send("GET", f"/h/{explode}/{kind}", {"x_v": KINDS[kind][1]})
    assert fake.requests[0].header("x-v") == wire
    assert fake.violations == []


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("explode", "kind", "wire"),
    [(0, "prim", "v=blue"), (0, "arr", "v=blue,black"), (0, "obj", "v=R,100,G,200"), (1, "arr", "v=blue; v=black")],
)
async def test_cookie_parameters_use_form_style(explode: int, kind: str, wire: str) -> None:
    fake = await send("GET", f"/c/{explode}/{kind}", {"v": KINDS[kind][1]})
    assert fake.requests[0].header_all("cookie") == [wire]
    assert fake.violations == []


@pytest.mark.anyio
async def test_exploded_cookie_object_sends_one_cookie_per_property() -> None:
    # openapi-core 0.23 reads this case as one cookie named "v" holding "R=100&G=200" (query
    # semantics); the bridge sends real cookies, as OAS 3.2's `cookie` style spells it.
    fake = FakeUpstream()
    await send("GET", "/c/1/obj", {"v": {"R": 100, "G": 200}}, fake=fake)
    assert fake.requests[0].header("cookie") == "R=100; G=200"


@pytest.mark.anyio
async def test_content_allow_reserved_and_boolean_query_parameters() -> None:
    fake = await send("GET", "/search", {"filter": {"R": 1}, "next": "/page?x=1&y=2#top", "flag": True})
    assert fake.requests[0].query == "filter=%7B%22R%22%3A1%7D&next=/page?x=1%26y=2%23top&flag=true"
    assert fake.violations == []


# ---------------------------------------------------------------------------------------- bodies


@pytest.mark.anyio
async def test_json_body_from_flattened_arguments() -> None:
    fake = await send("POST", "/json", {"name": "Rex ü", "tags": ["a"], "age": 3, "vip": False, "unrelated": 1})
    request = fake.requests[0]
    assert request.header("content-type") == "application/json"
    assert request.json() == {"name": "Rex ü", "tags": ["a"], "age": 3, "vip": False}
    assert fake.violations == []


@pytest.mark.anyio
async def test_json_body_from_one_argument_keeps_its_media_type() -> None:
    fake = await send("PATCH", "/merge", {"body": {"name": "Rex"}}, flatten=False)
    assert fake.requests[0].header("content-type") == "application/merge-patch+json"
    assert fake.requests[0].body == b'{"name":"Rex"}'
    assert fake.violations == []


@pytest.mark.anyio
async def test_optional_body_left_out_sends_no_body() -> None:
    fake = await send("POST", "/optional-body", {})
    assert fake.requests[0].body == b""
    assert fake.requests[0].header("content-type") is None


@pytest.mark.anyio
async def test_form_body_encodes_every_value() -> None:
    fake = await send("POST", "/form", {"name": "Rex & co=1+2", "tags": ["a", "b c"], "age": 3, "vip": True})
    request = fake.requests[0]
    assert request.header("content-type") == "application/x-www-form-urlencoded"
    assert request.body == b"name=Rex%20%26%20co%3D1%2B2&tags=a&tags=b%20c&age=3&vip=true"
    assert fake.violations == []


PNG = b"\x89PNG\r\n\x1a\n\x00\x00"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("file_arg", "mime", "filename"),
    [
        (base64.b64encode(PNG).decode(), "application/octet-stream", "file"),
        ("data:image/png;base64," + base64.b64encode(PNG).decode(), "image/png", "file"),
        ("data:image/png;name=cat%20pic.png;base64," + base64.b64encode(PNG).decode(), "image/png", "cat pic.png"),
        (base64.urlsafe_b64encode(PNG).decode().rstrip("="), "application/octet-stream", "file"),
    ],
)
async def test_multipart_file_from_base64_or_data_uri(file_arg: str, mime: str, filename: str) -> None:
    fake = await send("POST", "/upload", {"name": "Rex", "file": file_arg, "meta": {"a": 1}})
    request = fake.requests[0]
    content_type = request.header("content-type") or ""
    assert content_type.startswith("multipart/form-data; boundary=")
    parts = _multipart_parts(request.body, content_type.split("boundary=")[1])
    assert parts["file"] == (
        {"content-disposition": f'form-data; name="file"; filename="{filename}"', "content-type": mime},
        PNG,
    )
    assert parts["meta"] == (
        {"content-disposition": 'form-data; name="meta"', "content-type": "application/json"},
        b'{"a":1}',
    )
    assert parts["name"][1] == b"Rex"
    assert fake.violations == []


def _multipart_parts(body: bytes, boundary: str) -> dict[str, tuple[dict[str, str], bytes]]:
    parts: dict[str, tuple[dict[str, str], bytes]] = {}
    chunks = body.split(b"--" + boundary.encode())
    assert chunks[0] == b"" and chunks[-1] == b"--\r\n"
    for chunk in chunks[1:-1]:
        head, _, content = chunk[2:-2].partition(b"\r\n\r\n")
        headers = dict(line.decode().split(": ", 1) for line in head.split(b"\r\n"))
        headers = {k.lower(): v for k, v in headers.items()}
        name = headers["content-disposition"].split('name="')[1].split('"')[0]
        parts[name] = (headers, content)
    return parts


@pytest.mark.anyio
@pytest.mark.parametrize(
    "value",
    [base64.b64encode(b"\x00\x01\xff").decode(), "data:application/octet-stream;base64,AAH/", "AAH/\n"],
)
async def test_octet_stream_body_from_base64(value: str) -> None:
    fake = await send("PUT", "/octet", {"body": value}, flatten=False)
    assert fake.requests[0].body == b"\x00\x01\xff"
    assert fake.requests[0].header("content-type") == "application/octet-stream"
    assert fake.violations == []


@pytest.mark.anyio
async def test_text_plain_body_is_utf8_text() -> None:
    fake = await send("PUT", "/text", {"body": "héllo\nworld"}, flatten=False)
    assert fake.requests[0].body == "héllo\nworld".encode()
    assert fake.requests[0].header("content-type") == "text/plain; charset=utf-8"
    assert fake.violations == []


@pytest.mark.parametrize(
    ("media_type", "value", "wire", "content_type"),
    [
        ("*/*", {"a": [1]}, b'{"a":[1]}', "application/json"),
        ("application/*", [1, "x"], b'[1,"x"]', "application/json"),
        ("*/*", "AAH/", b"\x00\x01\xff", "application/octet-stream"),
        ("*/*", "data:image/gif;base64,AAH/", b"\x00\x01\xff", "image/gif"),
        ("text/*", "plain", b"plain", "text/plain; charset=utf-8"),
    ],
)
def test_a_wildcard_binding_without_a_kind_goes_by_the_value(
    media_type: str, value: Any, wire: bytes, content_type: str
) -> None:
    # Hand-made bindings and catalogues written before BodyBinding.kind existed: */* bodies were
    # advertised as base64, so a string is decoded; anything else is JSON.
    binding = HttpBinding(method="POST", path="/any", body=BodyBinding(media_type=media_type, arg="body"))
    request = build_request(binding, {"body": value}, base_url=API)
    assert (request.content, request.content_type) == (wire, content_type)


@pytest.mark.parametrize("value", ["not base64!", "data:image/png,plain", "data:image/png\r\nX: 1;base64,AAAA"])
def test_bad_file_values_are_refused_naming_the_argument(value: str) -> None:
    binding = binding_from_spec(SPEC, "POST", "/upload")
    with pytest.raises(InvalidArgumentsError, match='Argument "file"'):
        build_request(binding, {"file": value}, base_url=API)


def test_multipart_field_names_and_file_names_cannot_inject_part_headers() -> None:
    binding = binding_from_spec(SPEC, "POST", "/upload", flatten=False)
    data = "data:text/plain;name=a%22%0D%0AX-Evil:%201;base64,QQ=="
    request = build_request(binding, {"body": {'x"\r\nX-Evil: 1': "v", "file": data}}, base_url=API)
    assert request.content is not None
    assert b"\r\nX-Evil" not in request.content
    assert b'name="x%22%0D%0AX-Evil: 1"' in request.content
    assert b'filename="a___X-Evil_ 1"' in request.content


# ---------------------------------------------------------------------------------- path safety


@pytest.mark.anyio
@pytest.mark.parametrize(
    "value",
    ["..", ".", "", "%2e%2e", "%2E%2E", ".%2E", "%2e", "%252e%252e", "../admin", "..%2fadmin", "a\\..\\b", "..;x"],
)
async def test_dot_segment_path_arguments_are_refused_before_any_request(value: str) -> None:
    fake = FakeUpstream(SPEC)
    with pytest.raises(InvalidArgumentsError, match='Argument "id"'):
        await send("GET", "/items/{id}", {"id": value}, fake=fake)
    assert fake.requests == []


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("value", "segment"),
    [
        ("a/b?c#d", "a%2Fb%3Fc%23d"),
        ("...", "..."),
        ("a..b/c", "a..b%2Fc"),
        ("%2fadmin", "%252fadmin"),
        ("a\\b", "a%5Cb"),
        ("a;b", "a%3Bb"),
        ("a b", "a%20b"),
        ("ü", "%C3%BC"),
        ("http://169.254.169.254/latest", "http%3A%2F%2F169.254.169.254%2Flatest"),
        ("//evil.example/x", "%2F%2Fevil.example%2Fx"),
    ],
)
async def test_path_argument_stays_one_encoded_segment(value: str, segment: str) -> None:
    fake = await send("GET", "/items/{id}", {"id": value})
    assert [r.raw_path for r in fake.requests] == [f"/api/items/{segment}"]
    assert unquote(segment) == value
    assert fake.violations == []


def test_slots_sharing_a_segment_cannot_form_a_dot_segment() -> None:
    binding = binding_from_spec(SPEC, "GET", "/files/{name}.{ext}")
    assert build_request(binding, {"name": "a", "ext": "txt"}, base_url=API).path == "/api/files/a.txt"
    with pytest.raises(InvalidArgumentsError):
        build_request(binding, {"name": ".", "ext": "x"}, base_url=API)


@given(value=st.text(max_size=30), query=st.text(max_size=30))
@settings(max_examples=200, deadline=None)
def test_no_argument_changes_origin_or_segment_count(value: str, query: str) -> None:
    binding = binding_from_spec(SPEC, "GET", "/items/{id}")
    try:
        request = build_request(binding, {"id": value, "q": query}, base_url=API)
    except InvalidArgumentsError:
        return
    url = httpx.URL(str(request.url))
    assert (url.scheme, url.host, url.port) == ("http", "upstream.test", None)
    segments = url.raw_path.split(b"?")[0].split(b"/")
    assert segments[:3] == [b"", b"api", b"items"] and len(segments) == 4
    assert unquote(segments[3].decode()) == value
    assert httpx.QueryParams(url.query.decode()).get("q", "") == query


@pytest.mark.anyio
async def test_arguments_that_look_like_urls_never_change_the_host() -> None:
    fake = await send("GET", "/items/{id}", {"id": "x", "q": "http://127.0.0.2:1/", "x_trace": "http://evil.example/"})
    request = fake.requests[0]
    assert request.header("host") == "upstream.test"
    assert request.query == "q=http%3A%2F%2F127.0.0.2%3A1%2F"


@pytest.mark.anyio
async def test_forbidden_header_parameters_are_never_sent() -> None:
    args = {
        "id": "1",
        "x_trace": "t-1",
        "host": "evil.example",
        "x_forwarded_for": "10.0.0.1",
        "content_length": "5",
        "transfer_encoding": "chunked",
        "connection": "close",
        "cookie": "session=CANARY",
        "x_foo": "undeclared",
    }
    fake = await send("GET", "/items/{id}", args)
    request = fake.requests[0]
    names = {name.lower() for name, _ in request.headers}
    assert request.header("x-trace") == "t-1"
    assert request.header("host") == "upstream.test"
    assert not names & {"authorization", "x-forwarded-for", "transfer-encoding", "cookie", "x-foo"}
    assert "CANARY" not in json.dumps(request.headers)


@pytest.mark.anyio
@pytest.mark.parametrize("value", ["a\r\nX-Injected: 1", "a\nb", "a\x00", "a\x7f", "é"])
async def test_header_arguments_with_controls_are_refused_before_any_request(value: str) -> None:
    fake = FakeUpstream(SPEC)
    with pytest.raises(InvalidArgumentsError, match='Argument "x_trace"'):
        await send("GET", "/items/{id}", {"id": "1", "x_trace": value}, fake=fake)
    assert fake.requests == []


def test_template_that_would_be_normalised_is_refused() -> None:
    binding = HttpBinding(
        method="GET",
        path="/a/../{id}",
        params=(ParamBinding(arg="id", wire="id", location="path", style="simple", explode=False, required=True),),
    )
    with pytest.raises(UnsafeRequestError, match="nothing was sent"):
        build_request(binding, {"id": "x"}, base_url=API)


def test_path_slot_without_binding_is_refused() -> None:
    with pytest.raises(UnsafeRequestError, match=r"\{id\}"):
        build_request(HttpBinding(method="GET", path="/items/{id}"), {"id": "1"}, base_url=API)


def test_missing_required_query_parameter_is_refused() -> None:
    binding = binding_from_spec(SPEC, "GET", "/q/form/1/prim")
    with pytest.raises(InvalidArgumentsError, match='"v" is required'):
        build_request(binding, {}, base_url=API)


def test_base_path_is_kept_and_trailing_slash_ignored() -> None:
    binding = binding_from_spec(SPEC, "GET", "/items/{id}")
    for base in (API, API + "/"):
        assert str(build_request(binding, {"id": "7"}, base_url=base).url) == f"{API}/items/7"
    assert str(build_request(binding, {"id": "7"}, base_url=BASE_URL).url) == f"{BASE_URL}/items/7"


def test_credentials_replace_same_named_parameters_and_are_encoded() -> None:
    binding = binding_from_spec(SPEC, "GET", "/items/{id}")
    request = build_request(binding, {"id": "1", "q": "user-value", "x_trace": "t"}, base_url=API)
    parts = CredentialParts(
        headers=(("X-Trace", "from-credential"),), query=(("q", "k&ey"),), cookies=(("sid", "a b"),)
    )
    with_creds = request.with_credentials(parts)
    assert with_creds.url.query == b"q=k%26ey"
    assert dict(with_creds.headers)["X-Trace"] == "from-credential"
    assert dict(with_creds.headers)["Cookie"] == "sid=a%20b"


# ------------------------------------------------------------------------------------- base URL


def test_base_url_override_wins() -> None:
    servers = (ServerSpec(url="https://api.example.com/v1"),)
    url = resolve_base_url(servers, override="http://localhost:8080/x", variables={})
    assert str(url) == "http://localhost:8080/x"


def test_first_server_with_variables_restricted_to_enum() -> None:
    servers = (
        ServerSpec(
            url="https://{region}.example.com/{version}",
            variables={
                "region": ServerVariable(default="eu", enum=("eu", "us")),
                "version": ServerVariable(default="v1"),
            },
        ),
        ServerSpec(url="https://other.example.com"),
    )
    assert str(resolve_base_url(servers, override=None, variables={})) == "https://eu.example.com/v1"
    assert str(resolve_base_url(servers, override=None, variables={"region": "us"})) == "https://us.example.com/v1"
    with pytest.raises(ConfigurationError, match="eu, us"):
        resolve_base_url(servers, override=None, variables={"region": "evil.example/x#"})
    with pytest.raises(ConfigurationError, match="Unknown server variable"):
        resolve_base_url(servers, override=None, variables={"tenant": "x"})


def test_relative_server_url_needs_a_configured_base_url() -> None:
    with pytest.raises(ConfigurationError, match=r"--base-url \(or PETS_BASE_URL\)"):
        resolve_base_url((ServerSpec(url="/v1"),), override=None, variables={}, env_var="PETS_BASE_URL")
    with pytest.raises(ConfigurationError, match="--base-url"):
        resolve_base_url((), override=None, variables={})


@pytest.mark.parametrize(
    "override", ["ftp://example.com", "https://user:secret@example.com", "https://example.com/?a=1", "example.com"]
)
def test_unusable_base_urls_are_refused(override: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        resolve_base_url((), override=override, variables={})
    assert "secret" not in str(info.value)


def test_required_forbidden_header_parameter_is_skipped_not_demanded() -> None:
    binding = HttpBinding(
        method="GET",
        path="/items",
        params=(
            ParamBinding(
                arg="authorization",
                wire="Authorization",
                location="header",
                style="simple",
                explode=False,
                required=True,
            ),
        ),
    )
    request = build_request(binding, {}, base_url=API)
    assert "authorization" not in {name.lower() for name, _ in request.headers}


@pytest.mark.parametrize("args", [{"id": "a\ud800"}, {"id": "1", "q": "x\udfff"}, {"id": "1", "other": ["\ud83d"]}])
def test_lone_surrogates_are_refused_as_invalid_arguments(args: dict[str, Any]) -> None:
    binding = binding_from_spec(SPEC, "GET", "/items/{id}")
    with pytest.raises(InvalidArgumentsError, match="lone surrogate"):
        build_request(binding, args, base_url=API)


def test_url_encoded_object_property_without_encoding_is_sent_deep_object_style() -> None:
    binding = HttpBinding(
        method="POST",
        path="/forms",
        body=BodyBinding(
            media_type="application/x-www-form-urlencoded",
            fields=(BodyField(arg="name", wire="name"), BodyField(arg="meta", wire="meta")),
        ),
    )
    request = build_request(binding, {"name": "a b", "meta": {"k": "v", "n": 2, "skip": None}}, base_url=API)
    # Never spread into top-level fields, where "k" could collide with or impersonate a real field.
    assert request.content == b"name=a%20b&meta[k]=v&meta[n]=2"
