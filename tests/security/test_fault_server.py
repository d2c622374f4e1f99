"""The fault server does what the other tests rely on (a test double that lies makes every test lie)."""

from __future__ import annotations

import gzip
import time

import anyio
import httpx
import pytest

from tests.security.fault_server import Fault, FaultServer, closed_port

pytestmark = pytest.mark.anyio


def client(**options: object) -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=options.pop("timeout", 5.0), trust_env=False, **options)  # type: ignore[arg-type]


async def test_script_is_consumed_in_order_and_the_last_step_repeats() -> None:
    async with FaultServer(Fault.error(503, retry_after="7"), lambda a: Fault.ok({"path": a.path})) as server:
        async with client() as http:
            first = await http.get(server.url + "/a")
            second = await http.post(server.url + "/b?x=1", content=b"body")
            third = await http.get(server.url + "/c")
    assert first.status_code == 503 and first.headers["retry-after"] == "7"
    assert second.json() == {"path": "/b"} and third.json() == {"path": "/c"}
    assert [(a.method, a.target, a.body) for a in server.attempts] == [
        ("GET", "/a", b""),
        ("POST", "/b?x=1", b"body"),
        ("GET", "/c", b""),
    ]
    assert server.attempts[1].header("content-length") == "4"
    assert not any(a.client_closed_early for a in server.attempts)


async def test_echo_returns_the_request_headers() -> None:
    async with FaultServer(Fault.echo(401)) as server, client() as http:
        response = await http.get(server.url + "/x", headers={"X-Key": "k"})
    assert response.status_code == 401 and ["X-Key", "k"] in response.json()["headers"]


async def test_delay_and_drip_take_their_time() -> None:
    async with FaultServer(Fault.delay_then(0.3), Fault.drip(b"abcd", interval=0.1)) as server, client() as http:
        started = time.monotonic()
        await http.get(server.url)
        assert time.monotonic() - started >= 0.3
        started = time.monotonic()
        assert (await http.get(server.url)).content == b"abcd"
        assert time.monotonic() - started >= 0.4


async def test_hang_never_answers_and_records_the_client_leaving() -> None:
    async with FaultServer(Fault.hang()) as server:
        async with client(timeout=0.2) as http:
            with pytest.raises(httpx.ReadTimeout):
                await http.get(server.url)
        with anyio.fail_after(5):
            await server.wait_for(1, closed=True)
    assert server.attempts[0].client_closed_early


@pytest.mark.parametrize("fault", [Fault.reset(), Fault.close(), Fault.lying_length()])
async def test_broken_answers_break_the_client(fault: Fault) -> None:
    async with FaultServer(fault) as server, client() as http:
        with pytest.raises(httpx.TransportError):
            await http.post(server.url, content=b"payload")
    assert server.attempts[0].body == b"payload"


async def test_oversize_streams_until_the_client_stops() -> None:
    async with FaultServer(Fault.oversize(0)) as server:
        async with client() as http, http.stream("GET", server.url) as response:
            received = 0
            async for chunk in response.aiter_raw():
                received += len(chunk)
                if received > 1024 * 1024:
                    break
        with anyio.fail_after(5):
            await server.wait_for(1, closed=True)
    assert server.attempts[0].client_closed_early and server.attempts[0].bytes_sent > 1024 * 1024


async def test_gzip_bomb_and_redirect() -> None:
    bomb = Fault.gzip_bomb(10 * 1024 * 1024)
    assert len(bomb.body) < 20_000 and len(gzip.decompress(bomb.body)) == 10 * 1024 * 1024
    async with FaultServer(Fault.redirect("http://127.0.0.1:1/x")) as server, client() as http:
        response = await http.get(server.url)
    assert response.status_code == 302 and response.headers["location"] == "http://127.0.0.1:1/x"


async def test_the_server_stops_by_itself_and_only_binds_loopback() -> None:
    async with FaultServer(Fault.hang(), lifetime=0.3) as server:
        assert server.url.startswith("http://127.0.0.1:")
        async with client(timeout=2.0) as http:
            with pytest.raises(httpx.TransportError):
                await http.get(server.url)  # the hanging connection is aborted at end of life
            with pytest.raises(httpx.ConnectError):
                await http.get(server.url)
    with pytest.raises(ValueError):
        FaultServer(host="0.0.0.0")
    assert closed_port() > 0
