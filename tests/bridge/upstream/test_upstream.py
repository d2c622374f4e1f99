"""Upstream: byte caps (gzip bombs too), redirects, deadlines, real-socket timeouts and cancellation."""

from __future__ import annotations

import asyncio
import gzip
import socket
import tracemalloc
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import pytest

from bridge.contract.catalogue import HttpBinding, ParamBinding
from bridge.request.build import PreparedRequest, build_request
from bridge.tools.errors import (
    InvalidArgumentsError,
    ResponseTooLarge,
    UnsafeRequestError,
    UpstreamError,
    UpstreamTimeout,
)
from bridge.upstream.client import Upstream
from bridge.upstream.http_settings import USER_AGENT, HttpSettings
from tests.bridge.fake_upstream import BASE_URL, FakeUpstream, Recorded, Reply, make_reply

API = f"{BASE_URL}/api"
GET_ITEMS = HttpBinding(method="GET", path="/items")
POST_ITEMS = HttpBinding(method="POST", path="/items")


def get(base: str = API, binding: HttpBinding = GET_ITEMS) -> PreparedRequest:
    return build_request(binding, {}, base_url=base)


async def send(fake: FakeUpstream, request: PreparedRequest | None = None, **settings: object) -> Recorded | None:
    async with Upstream(API, settings=HttpSettings(**settings), transport=fake.transport()) as upstream:  # type: ignore[arg-type]
        await upstream.send(request or get())
    return fake.requests[-1] if fake.requests else None


# ------------------------------------------------------------------------------------------ caps


@pytest.mark.anyio
async def test_body_within_the_cap_is_returned() -> None:
    fake = FakeUpstream()
    fake.reply(body=b"x" * 100, content_type="application/octet-stream")
    async with Upstream(API, settings=HttpSettings(max_response_bytes=100), transport=fake.transport()) as upstream:
        response = await upstream.send(get())
    assert response.content == b"x" * 100 and not response.truncated


@pytest.mark.anyio
@pytest.mark.parametrize("declared", [True, False])
async def test_body_over_the_cap_is_refused(declared: bool) -> None:
    fake = FakeUpstream()
    headers = {"content-length": "101"} if declared else {}
    fake.reply(body=b"x" * 101, content_type="application/octet-stream", headers=headers)
    with pytest.raises(ResponseTooLarge, match="100-byte limit"):
        await send(fake, max_response_bytes=100)


@pytest.mark.anyio
async def test_gzip_bomb_is_stopped_by_the_decoded_byte_cap_with_bounded_memory() -> None:
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < 100_000
    fake = FakeUpstream()
    fake.reply(body=bomb, content_type="application/json", headers={"content-encoding": "gzip"})
    cap = 1024 * 1024
    tracemalloc.start()
    try:
        with pytest.raises(ResponseTooLarge):
            await send(fake, max_response_bytes=cap)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 6 * cap, f"peak {peak} bytes while decoding a bomb"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda data: zlib.compress(data)[2:-4]),  # raw deflate, as some servers send
    ],
)
async def test_compressed_bodies_are_decoded(encoding: str, encode: object) -> None:
    payload = b'{"items":' + b"[1,2,3]" * 1000 + b"}"
    fake = FakeUpstream()
    fake.reply(body=encode(payload), content_type="application/json", headers={"content-encoding": encoding})  # type: ignore[operator]
    async with Upstream(API, transport=fake.transport()) as upstream:
        response = await upstream.send(get())
    assert response.content == payload


@pytest.mark.anyio
async def test_error_bodies_are_cut_not_refused() -> None:
    fake = FakeUpstream()
    fake.reply(500, body=b"e" * 50_000, content_type="text/plain")
    async with Upstream(API, settings=HttpSettings(max_error_body_bytes=1000), transport=fake.transport()) as upstream:
        response = await upstream.send(get())
    assert response.status == 500 and response.truncated and response.content == b"e" * 1000


@pytest.mark.anyio
async def test_broken_gzip_is_an_upstream_error() -> None:
    fake = FakeUpstream()
    fake.reply(body=b"not gzip at all", content_type="application/json", headers={"content-encoding": "gzip"})
    with pytest.raises(UpstreamError, match="could not be decoded"):
        await send(fake)


# ------------------------------------------------------------------------------------- redirects


@pytest.mark.anyio
async def test_off_origin_redirect_is_not_followed() -> None:
    fake = FakeUpstream()
    fake.reply(302, headers={"location": "http://169.254.169.254/latest/meta-data/?token=abc"})
    with pytest.raises(UpstreamError, match="redirected to another origin") as info:
        await send(fake)
    assert "http://169.254.169.254:80" in str(info.value) and "token" not in str(info.value)
    assert len(fake.requests) == 1


@pytest.mark.anyio
async def test_same_origin_redirect_is_followed_and_303_becomes_get() -> None:
    fake = FakeUpstream()
    fake.route("POST", "/api/items", make_reply(303, headers={"location": "/api/items/7"}))
    fake.route("GET", "/api/items/7", make_reply(json_body={"id": 7}))
    binding = HttpBinding(method="POST", path="/items", params=(), body=None)
    request = build_request(binding, {}, base_url=API)
    async with Upstream(API, transport=fake.transport()) as upstream:
        response = await upstream.send(request)
    assert response.status == 200 and response.content == b'{"id": 7}'
    assert [(r.method, r.raw_path) for r in fake.requests] == [("POST", "/api/items"), ("GET", "/api/items/7")]


@pytest.mark.anyio
async def test_307_redirect_keeps_method_and_body() -> None:
    from bridge.contract.catalogue import BodyBinding

    binding = HttpBinding(method="POST", path="/items", body=BodyBinding(media_type="application/json", arg="body"))
    fake = FakeUpstream()
    fake.route("POST", "/api/items", make_reply(307, headers={"location": f"{API}/v2/items"}))
    fake.route("POST", "/api/v2/items", make_reply(201, json_body={}))
    async with Upstream(API, transport=fake.transport()) as upstream:
        await upstream.send(build_request(binding, {"body": {"a": 1}}, base_url=API))
    assert [(r.method, r.body) for r in fake.requests] == [("POST", b'{"a":1}'), ("POST", b'{"a":1}')]


@pytest.mark.anyio
async def test_redirect_outside_the_base_path_is_not_followed() -> None:
    fake = FakeUpstream()
    fake.reply(302, headers={"location": "/admin/config"})
    with pytest.raises(UpstreamError, match="outside its base path"):
        await send(fake)
    assert len(fake.requests) == 1


@pytest.mark.anyio
async def test_redirect_loops_stop_after_the_limit() -> None:
    fake = FakeUpstream()
    fake.reply(302, headers={"location": "/api/items"})
    with pytest.raises(UpstreamError, match="more than 5 times"):
        await send(fake)
    assert len(fake.requests) == 6


@pytest.mark.anyio
async def test_redirects_can_be_turned_off() -> None:
    fake = FakeUpstream()
    fake.reply(302, headers={"location": "/api/other"})
    with pytest.raises(UpstreamError, match="turned off"):
        await send(fake, max_redirects=0)
    assert len(fake.requests) == 1


# ------------------------------------------------------------------------------ what is sent


@pytest.mark.anyio
async def test_user_agent_is_the_bridge_and_cookies_are_not_kept_between_calls() -> None:
    fake = FakeUpstream()
    fake.reply(json_body={}, headers={"set-cookie": "session=abc; Path=/"})
    async with Upstream(API, transport=fake.transport()) as upstream:
        await upstream.send(get())
        await upstream.send(get())
    assert [r.header("user-agent") for r in fake.requests] == [USER_AGENT, USER_AGENT]
    assert fake.requests[0].header("accept-encoding") == "gzip, deflate"
    assert USER_AGENT.startswith("mcp-bridge/")
    assert [r.header("cookie") for r in fake.requests] == [None, None]


@pytest.mark.anyio
async def test_request_for_another_origin_is_refused_before_sending() -> None:
    fake = FakeUpstream()
    with pytest.raises(UnsafeRequestError, match="nothing was sent"):
        await send(fake, get(base="http://other.test/api"))
    assert fake.requests == []


# ------------------------------------------------------------------------------ time bounds


@pytest.mark.anyio
async def test_overall_deadline_bounds_a_hanging_upstream() -> None:
    fake = FakeUpstream()
    hang = anyio.Event()

    async def never(request: Recorded) -> Reply:
        await hang.wait()
        raise AssertionError("unreachable")

    fake.handler(never)
    with anyio.fail_after(5):
        with pytest.raises(UpstreamTimeout, match=r"within 0\.2 s"):
            await send(fake, deadline=0.2)


@dataclass
class SocketServer:
    """A tiny asyncio HTTP server on 127.0.0.1 that reads a request and then never answers."""

    port: int = 0
    connections: int = 0
    got_request: asyncio.Event = field(default_factory=asyncio.Event)
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    raw: bytes = b""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            self.raw = await reader.readuntil(b"\r\n\r\n")
            self.got_request.set()
            while await reader.read(1024):  # wait for the client to close the connection
                pass
            self.closed.set()
        except (asyncio.IncompleteReadError, ConnectionError):
            self.closed.set()
        finally:
            writer.close()


@asynccontextmanager
async def socket_server() -> AsyncIterator[SocketServer]:
    state = SocketServer()
    server = await asyncio.start_server(state.handle, "127.0.0.1", 0)
    state.port = server.sockets[0].getsockname()[1]
    try:
        yield state
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.anyio
async def test_cancelling_a_call_closes_the_upstream_connection() -> None:
    async with socket_server() as server:
        base = f"http://127.0.0.1:{server.port}/api"
        async with Upstream(base) as upstream:
            with anyio.fail_after(5):
                async with anyio.create_task_group() as tg:

                    async def call() -> None:
                        await upstream.send(get(base))

                    tg.start_soon(call)
                    await server.got_request.wait()
                    tg.cancel_scope.cancel()
                await server.closed.wait()
    assert server.raw.startswith(b"GET /api/items HTTP/1.1\r\n")
    assert server.connections == 1


@pytest.mark.anyio
async def test_read_timeout_on_a_real_socket() -> None:
    async with socket_server() as server:
        base = f"http://127.0.0.1:{server.port}/api"
        async with Upstream(base, settings=HttpSettings(read_timeout=0.2)) as upstream:
            with anyio.fail_after(5):
                with pytest.raises(UpstreamTimeout, match="waiting for data"):
                    await upstream.send(get(base))
                await server.closed.wait()


@pytest.mark.anyio
async def test_header_injection_is_refused_before_any_connection() -> None:
    binding = HttpBinding(
        method="GET",
        path="/items",
        params=(ParamBinding(arg="trace", wire="X-Trace", location="header", style="simple", explode=False),),
    )
    async with socket_server() as server:
        base = f"http://127.0.0.1:{server.port}/api"
        with pytest.raises(InvalidArgumentsError):
            build_request(binding, {"trace": "ok\r\nX-Injected: 1"}, base_url=base)
    assert server.connections == 0


@pytest.mark.anyio
async def test_refused_connection_is_an_upstream_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    async with Upstream(base) as upstream:
        with anyio.fail_after(5):
            with pytest.raises(UpstreamError, match="could not connect") as info:
                await upstream.send(get(base))
    assert not isinstance(info.value, UpstreamTimeout)


@pytest.mark.anyio
@pytest.mark.parametrize("coding", ["gzip, gzip", "br", "zstd", "compress"])
async def test_stacked_or_unknown_content_encodings_are_refused_not_decoded(coding: str) -> None:
    inner = gzip.compress(b"\0" * (8 * 1024 * 1024))
    fake = FakeUpstream()
    fake.reply(body=gzip.compress(inner), content_type="application/json", headers={"content-encoding": coding})
    with pytest.raises(UpstreamError, match="content encoding"):
        await send(fake)


@pytest.mark.anyio
async def test_error_body_with_an_unknown_encoding_is_dropped_but_the_status_kept() -> None:
    fake = FakeUpstream()
    fake.reply(500, body=b"\x8b\x00garbage", content_type="text/plain", headers={"content-encoding": "br"})
    async with Upstream(API, transport=fake.transport()) as upstream:
        response = await upstream.send(get())
    assert response.status == 500 and response.content == b"" and response.attempts == 1
