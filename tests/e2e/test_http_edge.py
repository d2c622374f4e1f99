"""The HTTP edge parses strictly (P2, P7): a Host is ``host[:port]`` and nothing else, and
forwarded headers are trusted only from the proxies the operator names. Real ``serve``
subprocesses under uvicorn, raw requests on a loopback socket (an HTTP client would normalise them).
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from bridge.server.transports import HostOriginGuard
from tests.e2e.conftest import Upstream, http_bridge

pytestmark = pytest.mark.anyio

INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "p", "version": "1"}},
    }
)


async def raw_post(port: int, headers: list[tuple[str, str]], body: str = INIT) -> tuple[int, dict[str, str]]:
    """POST /mcp with exactly these headers (Host included, as given); the status and headers."""
    data = body.encode()
    head = "POST /mcp HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
    head += "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
    head += f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    with anyio.fail_after(10):
        async with await anyio.connect_tcp("127.0.0.1", port) as stream:
            await stream.send(head.encode() + data)
            answer = b""
            while b"\r\n\r\n" not in answer:
                answer += await stream.receive()
    lines = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    return status, {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}


def _hosts(port: int) -> tuple[list[str], list[str]]:
    good = [f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}", "127.0.0.1", "localhost"]
    bad = [
        f"127.0.0.1:{port}@evil.com",
        f"localhost:{port}, evil.com",
        f"localhost:{port},evil.com",
        f"127.0.0.1:{port} evil.com",
        f"evil.com@127.0.0.1:{port}",
        f"user:pw@localhost:{port}",
        f"localhost:{port}/x",
        f"localhost:{port}?x",
        f"localhost:{port}#x",
        f"localhost:{port}:{port}",
        "localhost:99999",
        "localhost:",
        f"localhost.evil.com:{port}",
        f"[::1]evil:{port}",
        f"[::1]:{port}@evil",
        "evil.com",
        "",
    ]
    return good, bad


async def test_a_host_header_is_host_and_port_and_nothing_else(upstream: Upstream, tmp_path: Path) -> None:
    async with http_bridge(upstream, tmp_path) as bridge:
        good, bad = _hosts(bridge.port)
        accepted = {host: (await raw_post(bridge.port, [("Host", host)]))[0] for host in good}
        refused = {host: (await raw_post(bridge.port, [("Host", host)]))[0] for host in bad}
        twice = (await raw_post(bridge.port, [("Host", f"localhost:{bridge.port}"), ("Host", "evil.com")]))[0]
    assert accepted == dict.fromkeys(good, 200)
    assert refused == dict.fromkeys(bad, 403)
    assert twice in (400, 403)  # uvicorn may refuse a second Host itself; the guard does otherwise


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1:8000@evil.com", "localhost:8000, evil.com", "localhost:8000 ", "localhost\t:8000", "[::1", "[::1]]"],
)
def test_the_guard_refuses_what_is_not_host_and_port(host: str) -> None:
    guard = HostOriginGuard(
        lambda *_: None, allowed_hosts=["127.0.0.1", "localhost", "[::1]"], allowed_origins=[], max_body_bytes=1
    )  # type: ignore[arg-type, return-value]
    assert not guard._host_ok(host)
    assert guard._host_ok("localhost:8000") and guard._host_ok("[::1]:8000") and guard._host_ok("127.0.0.1")


async def _first_session_survives(port: int, forwarded: list[str]) -> bool:
    """Open sessions from this one loopback peer, each claiming another X-Forwarded-For; whether
    the first is still open once the per-client cap (2) had to make room."""
    host = ("Host", f"127.0.0.1:{port}")
    ids = []
    for address in forwarded:
        status, headers = await raw_post(port, [host, ("X-Forwarded-For", address)])
        assert status == 200
        ids.append(headers["mcp-session-id"])
    ping = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    version = ("MCP-Protocol-Version", "2025-11-25")
    status, _ = await raw_post(port, [host, ("Mcp-Session-Id", ids[0]), version], ping)
    assert status in (200, 404)
    return status == 200


ADDRESSES = ["10.9.0.1", "10.9.0.2", "10.9.0.3", "10.9.0.4", "10.9.0.5"]


async def test_a_client_cannot_choose_its_own_address_with_x_forwarded_for(upstream: Upstream, tmp_path: Path) -> None:
    flags = ("--max-sessions", "20", "--max-sessions-per-client", "2")
    async with http_bridge(upstream, tmp_path, *flags) as bridge:
        survived = await _first_session_survives(bridge.port, ADDRESSES)
    assert not survived  # one peer, whatever it claims: its own oldest session made room


async def test_forwarded_addresses_are_trusted_from_the_proxies_the_operator_names(
    upstream: Upstream, tmp_path: Path
) -> None:
    flags = ("--max-sessions", "20", "--max-sessions-per-client", "2", "--forwarded-allow-ips", "127.0.0.1")
    async with http_bridge(upstream, tmp_path, *flags) as bridge:
        survived = await _first_session_survives(bridge.port, ADDRESSES)
    assert survived  # five clients behind the proxy, one session each


async def test_a_bad_forwarded_allow_ips_value_stops_serve_with_one_line(tmp_path: Path) -> None:
    from tests.e2e.conftest import ROOT, bridge_command, subprocess_env

    command = bridge_command("--transport", "http", "--forwarded-allow-ips", "10.0.0.1,proxy.example")
    with anyio.fail_after(30):
        done = await anyio.run_process(command, cwd=ROOT, env=subprocess_env({}), check=False)
    assert done.returncode != 0
    message = done.stderr.decode()
    assert "--forwarded-allow-ips: 'proxy.example' is not an IP address or network" in message
    assert "Traceback" not in message
