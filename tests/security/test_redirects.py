"""Redirects never leave the base path (P18): hostile Location values against the real bridge and a loopback upstream.

The bridge sends the API's credentials with every hop it follows, so a redirect to
``/v1/%2e%2e/admin/keys`` that the upstream (or a proxy before it) resolves to ``/admin/keys``
would hand the key to another part of the server. Every spelling of a dot segment that path
arguments may not use (P12) is refused in a Location too.
"""

from __future__ import annotations

import functools

import anyio
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.tools.errors import UpstreamError
from bridge.upstream.client import Upstream
from bridge.upstream.redirects import redirect_target, under_base_path
from tests.security.fault_server import Attempt, Fault, FaultServer
from tests.security.harness import bridge_client

pytestmark = pytest.mark.anyio

PORT = "{port}"
"""Replaced by the fault server's port in Location values."""

HOSTILE = [
    "/v1/%2e%2e/admin/keys",
    "/v1/%2E%2E/admin/keys",
    "/v1/.%2e/admin",
    "/v1/%2e./admin",
    "/v1/%2e/admin",
    "/v1%2f..%2fadmin",
    "/v1%2F..%2Fadmin",
    "/v1/..%2fadmin",
    "/v1/x/..%5cadmin",
    "/v1/..;/admin",
    "/v1/..;jsessionid=1/admin",
    "/v1/%2e%2e;x/admin",
    "/v1/%252e%252e/admin",
    "/v1/%25252e%25252e/admin",
    "/v1/%EF%BC%8E%EF%BC%8E/admin",  # fullwidth full stops, percent-encoded
    "/v1/\uff0e\uff0e/admin".encode().decode("latin-1"),  # ... and as raw UTF-8 bytes
    "/v1/%c0%ae%c0%ae/admin",  # overlong UTF-8
    "/v1/%e0%80%ae%e0%80%ae/admin",
    "/v1\\..\\admin",
    "/v1/..\\admin",
    "/\\evil.example/",
    "\\\\evil.example\\x",
    "//evil.example/",
    "///evil.example/",
    "/v1/../admin",
    "/v1/./items/2",
    "../admin",
    "./2",
    "..",
    "/v10/x",
    "/V1/x",
    "/%76%31/x",
    "/admin/config",
    "/",
    "/v1//x",
    "/v1/a b",
    "http://localhost:{port}/v1/items/2",
    "http://user:pw@127.0.0.1:{port}/v1/items/2",
    "https://127.0.0.1:{port}/v1/items/2",
    "http://127.0.0.1:{port}/v1/%2e%2e/admin",
    "http://169.254.169.254/latest/meta-data/",
]

ADMITTED = [
    ("/v1/items/2", "/v1/items/2"),
    ("items/3", "/v1/items/items/3"),
    ("/v1", "/v1"),
    ("/v1/", "/v1/"),
    ("?page=2", "/v1/items/1"),
    ("http://127.0.0.1:{port}/v1/items/4", "/v1/items/4"),
    ("/v1/items/2?next=../x", "/v1/items/2"),
    ("/v1/.well-known/x", "/v1/.well-known/x"),
    ("/v1/v1.2/.../x", "/v1/v1.2/.../x"),
]


def scripted(location: str) -> tuple[FaultServer, list[str]]:
    """A server that redirects its first request to ``location`` (``{port}``: its own) and echoes the rest."""
    hops: list[str] = []

    def answer(attempt: Attempt) -> Fault:
        hops.append(attempt.path)
        if len(hops) == 1:
            return Fault.redirect(location.replace(PORT, str(server.port)))
        return Fault.echo()

    server = FaultServer(answer)
    return server, hops


@pytest.mark.parametrize("location", HOSTILE)
async def test_a_redirect_that_leaves_the_base_path_in_any_spelling_is_never_followed(location: str) -> None:
    server, hops = scripted(location)
    async with server:
        async with bridge_client(server.url + "/v1") as client:
            with anyio.fail_after(10):
                result = await client.call_tool("getItem", {"id": "1"})
    assert result.is_error
    assert hops == ["/v1/items/1"]  # the call is over: no second request was made


@pytest.mark.parametrize(("location", "path"), ADMITTED)
async def test_a_redirect_under_the_base_path_is_followed(location: str, path: str) -> None:
    server, hops = scripted(location)
    async with server:
        async with bridge_client(server.url + "/v1") as client:
            with anyio.fail_after(10):
                result = await client.call_tool("getItem", {"id": "1"})
    assert not result.is_error
    assert hops == ["/v1/items/1", path]


# --------------------------------------------------------------------- any spelling, composed

_DOT = st.sampled_from([".", "%2e", "%2E", "%252e", "%25252E", "%EF%BC%8E", "%c0%ae", "%e0%80%ae"])
_SEPARATOR = st.sampled_from(["/", "%2f", "%2F", "%5c", "%5C", "%252f"])
_SEGMENT = st.text(alphabet="abcxyz019-_~", min_size=1, max_size=6)


@st.composite
def dotted_locations(draw: st.DrawFn) -> str:
    """``/v1/<segments>`` with one ``.`` or ``..`` segment spelled any way, behind any separator."""
    dots = "".join(draw(_DOT) for _ in range(draw(st.integers(1, 2))))
    if draw(st.booleans()):
        dots += ";" + draw(_SEGMENT)  # servlet path parameter: "..;x" is ".."
    before = draw(st.lists(_SEGMENT, max_size=2))
    after = draw(st.lists(_SEGMENT, min_size=1, max_size=2))
    separator = draw(_SEPARATOR)
    prefix = draw(st.sampled_from(["/v1", "http://127.0.0.1:8080/v1", ""]))
    path = separator.join([*before, dots, *after]) if prefix else "/".join([*before, dots, *after])
    return f"{prefix}/{path}" if prefix else path


@settings(max_examples=300, deadline=None, derandomize=True)
@given(location=dotted_locations(), query=st.sampled_from(["", "?a=1", "#frag"]))
def test_no_composed_dot_segment_spelling_is_followed(location: str, query: str) -> None:
    with pytest.raises(UpstreamError):
        _upstream()._redirect_target(httpx.URL("http://127.0.0.1:8080/v1/items/1"), location + query, "GET /items/{id}")


@functools.cache
def _upstream() -> Upstream:
    """No request is ever sent through it: only its redirect decision is asked."""
    return Upstream("http://127.0.0.1:8080/v1")


def test_redirect_target_names_no_other_origin_than_the_redacted_one() -> None:
    with pytest.raises(UpstreamError) as info:
        redirect_target(
            httpx.URL("http://127.0.0.1:8080/v1/items/1"),
            "http://SECRET.example/v1/x",
            base_url=httpx.URL("http://127.0.0.1:8080/v1"),
            op="GET /items/{id}",
            redact=lambda text: text.replace("secret", "***"),
        )
    assert "secret" not in str(info.value)


@pytest.mark.parametrize(
    ("path", "base", "under"),
    [
        ("/v1/x", "/v1", True),
        ("/v1", "/v1", True),
        ("/v1/", "/v1/", True),
        ("/v10", "/v1", False),
        ("/v1x/y", "/v1", False),
        ("/", "/v1", False),
        ("/anything", "", True),
        ("/a/b/c", "/a/b", True),
        ("/a/bc", "/a/b", False),
        ("/v1//x", "/v1", False),
        ("v1/x", "/v1", False),
    ],
)
def test_under_the_base_path_is_decided_segment_by_segment(path: str, base: str, under: bool) -> None:
    assert under_base_path(path, httpx.URL(f"http://127.0.0.1:8080{base}")) is under
