"""Outbound bounds (P18, P21, P22; test plan rows 22-26, 31) against a misbehaving loopback upstream."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from bridge.request.build import build_request
from bridge.tools.errors import ResponseTooLarge, UpstreamError, UpstreamTimeout
from bridge.upstream.client import Upstream, UpstreamResponse
from bridge.upstream.http_settings import HttpSettings
from tests.security.fault_server import Attempt, Fault, FaultServer, closed_port
from tests.security.harness import SECRET, bridge_client, fast, hardening_catalogue, result_text

pytestmark = pytest.mark.anyio

CAP = 256 * 1024


def get_items(base: str) -> Any:
    entry = next(t for t in hardening_catalogue().tools if t.name == "getItem")
    return build_request(entry.binding, {"id": "1"}, base_url=base, operation="GET /items/{id}")


@asynccontextmanager
async def upstream_for(server: FaultServer | str, **changes: Any) -> AsyncIterator[Upstream]:
    base = server if isinstance(server, str) else server.url + "/v1"
    async with Upstream(base, settings=fast(**changes), redact=lambda text: text.replace(SECRET, "***")) as upstream:
        yield upstream


async def send_once(server: FaultServer, **changes: Any) -> UpstreamResponse:
    async with upstream_for(server, **changes) as upstream:
        with anyio.fail_after(10):
            return await upstream.send(get_items(server.url + "/v1"))


async def traced_send(server: FaultServer, **changes: Any) -> tuple[UpstreamResponse | UpstreamError, int]:
    """One send's answer (or error) and the peak of memory it allocated, nothing before it counted.

    The request and the client are built first: the test catalogue is generated on first use, and
    that run's allocations are not the send's.
    """
    request = get_items(server.url + "/v1")
    async with upstream_for(server, **changes) as upstream:
        tracemalloc.start()
        try:
            with anyio.fail_after(10):
                outcome: UpstreamResponse | UpstreamError = await upstream.send(request)
        except UpstreamError as exc:
            outcome = exc
        finally:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
    return outcome, peak


# ---------------------------------------------------------------------------- row 22: response cap


async def test_declared_oversize_body_is_refused_before_reading_it() -> None:
    async with FaultServer(Fault.oversize(10 * 1024 * 1024, chunked=False)) as server:
        with pytest.raises(ResponseTooLarge, match="response too large"):
            await send_once(server, max_response_bytes=CAP)
        await server.wait_for(1, closed=True)
    (attempt,) = server.attempts
    assert attempt.client_closed_early and attempt.bytes_sent < 4 * 1024 * 1024


async def test_endless_chunked_body_stops_at_the_cap_with_bounded_memory() -> None:
    async with FaultServer(Fault.oversize(0, chunked=True)) as server:
        outcome, peak = await traced_send(server, max_response_bytes=CAP)
        assert isinstance(outcome, ResponseTooLarge)
        await server.wait_for(1, closed=True)
    assert peak < 6 * CAP, f"peak {peak} bytes for a {CAP}-byte cap"
    assert server.attempts[0].client_closed_early


async def test_response_too_large_is_a_tool_error_not_a_crash() -> None:
    async with FaultServer(Fault.oversize(10 * 1024 * 1024, chunked=True), Fault.echo()) as server:
        async with bridge_client(server.url + "/v1", settings=fast(max_response_bytes=CAP)) as client:
            with anyio.fail_after(10):
                big = await client.call_tool("getItem", {"id": "1"})
                after = await client.call_tool("getItem", {"id": "2"})
    assert big.is_error and "response too large" in result_text(big)
    assert not after.is_error


@pytest.mark.parametrize("declared", [1000, 10 * 1024**3])
async def test_lying_content_length_is_an_error_and_never_buffered(declared: int) -> None:
    async with FaultServer(Fault.lying_length(declared=declared)) as server:
        with pytest.raises(UpstreamError) as info:
            await send_once(server, max_response_bytes=CAP)
    message = str(info.value)
    if declared > CAP:
        assert isinstance(info.value, ResponseTooLarge)
    else:
        assert "connection to the API failed" in message and not isinstance(info.value, ResponseTooLarge)


async def test_decoded_bytes_count_not_compressed_bytes() -> None:
    payload = json.dumps({"data": "x" * (2 * CAP)}).encode()
    compressed = gzip.compress(payload)
    assert len(compressed) < CAP // 10
    fault = Fault.ok(compressed, headers=(("Content-Encoding", "gzip"),))
    async with FaultServer(fault) as server:
        with pytest.raises(ResponseTooLarge):
            await send_once(server, max_response_bytes=CAP)
        small = Fault.ok(gzip.compress(b'{"ok": true}'), headers=(("Content-Encoding", "gzip"),))
    async with FaultServer(small) as server:
        assert (await send_once(server)).content == b'{"ok": true}'


# ------------------------------------------------------------------------------- row 23: gzip bomb


@pytest.mark.parametrize("layers", [1, 2])
async def test_gzip_bomb_is_stopped_with_bounded_memory(layers: int) -> None:
    async with FaultServer(Fault.gzip_bomb(50 * 1024 * 1024, layers=layers)) as server:
        assert len(Fault.gzip_bomb(50 * 1024 * 1024, layers=layers).body) < 100_000
        outcome, peak = await traced_send(server, max_response_bytes=CAP)
    assert peak < 6 * CAP, f"peak {peak} bytes decoding a {layers}-layer bomb"
    if layers == 1:
        assert isinstance(outcome, ResponseTooLarge)
    else:  # stacked codings are never decoded (httpx would expand a whole read at once)
        assert isinstance(outcome, UpstreamError) and "content encoding" in str(outcome)


async def test_gzip_bomb_in_an_error_body_is_cut_with_bounded_memory() -> None:
    async with FaultServer(Fault.gzip_bomb(50 * 1024 * 1024, status=500)) as server:
        response, peak = await traced_send(server, max_error_body_bytes=16 * 1024)
    assert isinstance(response, UpstreamResponse)
    assert response.status == 500 and response.truncated and len(response.content) == 16 * 1024
    assert peak < 2 * 1024 * 1024


# -------------------------------------------------------------------------- row 24: error body cap


def _echo_then_pad(attempt: Attempt) -> Fault:
    headers = json.dumps(dict(attempt.headers))
    body = ("request headers: " + headers + " " + "p" * (5 * 1024 * 1024)).encode()
    return Fault.ok(body, status=500, content_type="text/plain")


async def test_huge_error_body_echoing_headers_is_cut_and_redacted() -> None:
    async with FaultServer(_echo_then_pad) as server:
        async with bridge_client(server.url + "/v1") as client:
            with anyio.fail_after(10):
                result = await client.call_tool("getItem", {"id": "1"})
        await server.wait_for(1, closed=True)
    text = result_text(result)
    assert result.is_error and "HTTP 500" in text and "(truncated)" in text
    assert SECRET not in text and "QSECRET" not in text and "***" in text
    assert len(text) < 4000
    assert server.attempts[0].client_closed_early  # the bridge stopped reading long before 5 MB


async def test_a_secret_straddling_the_error_body_cut_leaves_no_prefix() -> None:
    limit = 1000
    for offset in (3, 8, len(SECRET) - 1):  # bytes of the secret that fall before the cut
        body = b"e" * (limit - offset) + SECRET.encode() + b" tail" * 10
        async with FaultServer(Fault.ok(body, status=500, content_type="text/plain")) as server:
            response = await send_once(server, max_error_body_bytes=limit)
        assert response.truncated and len(response.content) <= limit
        assert SECRET[:offset].encode() not in response.content and b"***" in response.content, offset


# --------------------------------------------------------------------- row 25: slow drip, deadline


async def test_slow_drip_is_cut_by_the_overall_deadline() -> None:
    # Each byte comes within the 1 s read timeout, so only the whole call's deadline can stop the
    # 74-byte drip (18 s at this pace); how close to 1.5 s it ends is bench/timing_bench.py's figure.
    drip = Fault.drip(interval=0.25)
    async with FaultServer(drip) as server:
        with pytest.raises(UpstreamTimeout, match=r"within 1\.5 s"):
            await send_once(server, deadline=1.5, read_timeout=1.0)
        await server.wait_for(1, closed=True)
    assert server.attempts[0].client_closed_early  # the drip was not let finish


# ---------------------------------------------------------------- row 26: hang, refused, reset


async def test_hanging_upstream_times_out_and_the_bridge_keeps_serving() -> None:
    async with FaultServer(Fault.hang(), Fault.echo()) as server:
        async with bridge_client(server.url + "/v1", settings=fast(read_timeout=0.3)) as client:
            with anyio.fail_after(10):
                hung = await client.call_tool("getItem", {"id": "1"})
                fine = await client.call_tool("getItem", {"id": "2"})
        await server.wait_for(2, closed=True)
    assert hung.is_error and "did not answer in time" in result_text(hung)
    assert not fine.is_error
    assert server.attempts[0].client_closed_early


async def test_refused_connection_fails_fast() -> None:
    base = f"http://127.0.0.1:{closed_port()}/v1"
    async with upstream_for(base) as upstream:
        with anyio.fail_after(5), pytest.raises(UpstreamError, match="could not connect"):
            await upstream.send(get_items(base))  # refused at once, never retried by default


async def test_reset_in_the_middle_of_the_body_is_a_tool_error() -> None:
    async with FaultServer(Fault.reset(), Fault.echo()) as server:
        async with bridge_client(server.url + "/v1") as client:
            with anyio.fail_after(10):
                broken = await client.call_tool("getItem", {"id": "1"})
                fine = await client.call_tool("getItem", {"id": "2"})
    assert broken.is_error and "connection to the API failed" in result_text(broken)
    assert not fine.is_error


async def test_every_call_has_connect_read_write_pool_timeouts_and_a_deadline() -> None:
    settings = HttpSettings()
    timeout = settings.timeout()
    assert None not in (timeout.connect, timeout.read, timeout.write, timeout.pool)
    assert 0 < settings.deadline < float("inf")
    with pytest.raises(ValueError, match="deadline"):
        HttpSettings(deadline=0)


# ------------------------------------------------------------------ row 31: redirects not followed


async def test_off_origin_redirect_is_not_followed() -> None:
    async with FaultServer(Fault.echo()) as target:
        redirect = Fault.redirect(f"http://127.0.0.1:{target.port}/v1/items/1?token=abc")
        async with FaultServer(redirect) as server:
            async with bridge_client(server.url + "/v1") as client:
                with anyio.fail_after(10):
                    result = await client.call_tool("getItem", {"id": "1"})
        assert target.attempts == []
    text = result_text(result)
    assert result.is_error and "redirected to another origin" in text and "token" not in text
    assert server.count == 1


@pytest.mark.parametrize("location", ["http://169.254.169.254/latest/meta-data/", "/admin/config", "//evil.example/"])
async def test_redirect_to_metadata_or_outside_the_base_path_is_not_followed(location: str) -> None:
    async with FaultServer(Fault.redirect(location)) as server:
        with pytest.raises(UpstreamError, match="redirect"):
            await send_once(server)
    assert server.count == 1


async def test_same_origin_redirect_inside_the_base_path_is_followed() -> None:
    async with FaultServer(Fault.redirect("/v1/items/2"), Fault.echo()) as server:
        response = await send_once(server)
    assert response.status == 200
    assert [a.path for a in server.attempts] == ["/v1/items/1", "/v1/items/2"]


async def test_upstream_never_follows_redirects_by_itself() -> None:
    async with upstream_for("http://127.0.0.1:1/v1") as upstream:
        client = upstream._client
        assert client.follow_redirects is False
        assert isinstance(client, httpx.AsyncClient)


@pytest.mark.parametrize(
    ("fault", "tool", "arguments", "repeatable"),
    [
        (Fault.hang(), "createItem", {"name": "x"}, False),
        (Fault.reset(), "createItem", {"name": "x"}, False),
        (Fault.hang(), "patchItem", {"id": "1", "name": "x"}, False),
        (Fault.hang(), "getItem", {"id": "1"}, True),
        (Fault.reset(), "deleteItem", {"id": "1"}, True),
    ],
)
async def test_a_write_cut_off_after_sending_says_to_check_the_api_not_to_try_again(
    fault: Fault, tool: str, arguments: dict[str, Any], repeatable: bool
) -> None:
    async with FaultServer(fault) as server:
        async with bridge_client(server.url + "/v1", settings=fast(read_timeout=0.3)) as client:
            with anyio.fail_after(10):
                cut = await client.call_tool(tool, arguments)
    message = result_text(cut)
    assert cut.is_error
    if repeatable:
        assert "Try again later" in message
    else:  # a POST or PATCH may have been carried out: repeating it could do it twice
        assert "Try again" not in message and "before trying it again" in message, message
