"""The load bench's client: many bare MCP clients over streamable HTTP, each on a keep-alive connection.

``python -m bench.mcp_load --url URL --protocol session|stateless|modern --clients C --duration S``
runs C clients for S seconds (and at most ``--max-calls`` calls each) and prints one JSON object:
outcomes, call latencies and the wall-clock times of failures. The wire is what the official
Python client sends (checked by ``tests/bench/test_mcp_load.py`` against the real server):

- ``session``: 2025-11-25 with a session: ``initialize``, ``notifications/initialized``, then
  ``tools/call`` with ``Mcp-Session-Id`` and ``MCP-Protocol-Version``; answers are SSE streams;
- ``stateless``: the same handshake against a ``--stateless`` server (no session id);
- ``modern``: 2026-07-28: no handshake; every request carries ``Mcp-Method``/``Mcp-Name`` and the
  protocol version in ``_meta``; answers are JSON.

Each call is ``getPet`` with a petId of its own, and counts as ``ok`` only when the structured
result is that pet. A 404 to a request with a session id (the session's worker is gone) makes the
client start a new session and send the call again: counted under ``new_sessions``, not as an
error (nothing ran). A connection that breaks while a call is in flight counts that call as
``lost`` (with its time); the client reconnects and goes on. It is a plain asyncio client rather
than the official one, so that the load generator takes a small part of the two shared cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

PROTOCOLS = ("session", "stateless", "modern")
LEGACY_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
CALL_TIMEOUT = 30.0
CONNECT_RETRIES = 50


class Broken(Exception):
    """The connection closed or reset before the whole answer arrived."""


@dataclass
class Results:
    outcomes: dict[str, int] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)
    failures: list[tuple[float, str, str]] = field(default_factory=list)  # (wall time started, outcome, route)
    new_sessions: int = 0
    reconnects: int = 0

    def count(self, outcome: str, started: float, elapsed: float, session: str | None = None) -> None:
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
        if outcome == "ok":
            self.latencies_ms.append(elapsed * 1000)
        else:  # the route of the session (its worker, when the server names it: "w1.<id>")
            route = session.partition(".")[0] if session and "." in session else ""
            self.failures.append((started, outcome, route))


class Connection:
    """One keep-alive HTTP/1.1 connection; requests one at a time."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def post(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        if self.writer is None:
            await self.open()
        assert self.reader is not None and self.writer is not None
        lines = [f"POST {path} HTTP/1.1", f"Host: {self.host}:{self.port}", f"Content-Length: {len(body)}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
            status_line, *header_lines = head.decode("latin-1").split("\r\n")
            status = int(status_line.split(" ", 2)[1])
            got = {}
            for line in header_lines:
                if line:
                    name, _, value = line.partition(":")
                    got[name.strip().lower()] = value.strip()
            if got.get("transfer-encoding", "").lower() == "chunked":
                parts = []
                while True:
                    size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                    if size == 0:
                        await self.reader.readuntil(b"\r\n")
                        break
                    parts.append(await self.reader.readexactly(size + 2))
                content = b"".join(p[:-2] for p in parts)
            else:
                content = await self.reader.readexactly(int(got.get("content-length", "0")))
        except (asyncio.IncompleteReadError, ConnectionError, ValueError, IndexError) as exc:
            self.close()
            raise Broken(type(exc).__name__) from None
        if got.get("connection", "").lower() == "close":
            self.close()
        return status, got, content


def _answer(content_type: str, content: bytes, request_id: int) -> dict[str, Any] | None:
    """The JSON-RPC response for ``request_id`` in a JSON body or an SSE stream."""
    if content_type.startswith("text/event-stream"):
        for line in content.split(b"\n"):
            if line.startswith(b"data:"):
                message = json.loads(line[5:])
                if isinstance(message, dict) and message.get("id") == request_id:
                    return message
        return None
    if not content:
        return None
    message = json.loads(content)
    return message if isinstance(message, dict) else None


class Client:
    def __init__(self, url: str, protocol: str, results: Results, number: int) -> None:
        parts = urlsplit(url)
        self.path = parts.path or "/mcp"
        self.connection = Connection(parts.hostname or "127.0.0.1", parts.port or 80)
        self.protocol = protocol
        self.results = results
        self.session: str | None = None
        self.next_id = 0
        self.shaken = False  # initialize answered: later requests carry MCP-Protocol-Version
        self.pet = number * 1000

    def _headers(self, method: str | None = None, name: str | None = None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.protocol == "modern":
            headers["MCP-Protocol-Version"] = MODERN_VERSION
            if method:
                headers["Mcp-Method"] = method
            if name:
                headers["Mcp-Name"] = name
        elif self.shaken:
            headers["MCP-Protocol-Version"] = LEGACY_VERSION
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        return headers

    async def handshake(self) -> None:
        self.session = None
        self.shaken = False
        if self.protocol == "modern":
            return
        self.next_id += 1
        body = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        }
        status, headers, content = await self.connection.post(self.path, self._headers(), json.dumps(body).encode())
        answer = _answer(headers.get("content-type", ""), content, self.next_id)
        if status != 200 or answer is None or "result" not in answer:
            raise RuntimeError(f"initialize failed: {status} {content[:200]!r}")
        self.session = headers.get("mcp-session-id")
        self.shaken = True
        if self.protocol == "session" and not self.session:
            raise RuntimeError("initialize answered without Mcp-Session-Id (is the server stateless?)")
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
        status, _, _ = await self.connection.post(self.path, self._headers(), note)
        if status != 202:
            raise RuntimeError(f"notifications/initialized answered {status}")

    async def call(self) -> str:
        """One getPet call; its outcome."""
        self.pet += 1
        self.next_id += 1
        params: dict[str, Any] = {"name": "getPet", "arguments": {"petId": self.pet}}
        if self.protocol == "modern":
            params["_meta"] = MODERN_META
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": params}).encode()
        status, headers, content = await self.connection.post(self.path, self._headers("tools/call", "getPet"), body)
        if status == 404 and self.session:
            return "session_gone"
        if status != 200:
            return f"http_{status}"
        try:
            answer = _answer(headers.get("content-type", ""), content, self.next_id)
        except ValueError:
            return "bad_json"
        if answer is None:
            return "no_answer"
        if "error" in answer:
            return f"rpc_{answer['error'].get('code')}"
        result = answer.get("result") or {}
        if result.get("isError"):
            text = (result.get("content") or [{}])[0].get("text", "")
            return "limited" if "too many concurrent calls" in text or "rate limit" in text else "tool_error"
        pet = result.get("structuredContent") or {}
        if "id" not in pet and isinstance(pet.get("result"), dict):  # FastMCP wraps the object: {"result": {...}}
            pet = pet["result"]
        return "ok" if pet.get("id") == self.pet else "wrong_result"

    async def run(self, stop_at: float, max_calls: int, stop: asyncio.Event | None = None) -> None:
        calls = 0
        while time.monotonic() < stop_at and calls < max_calls and not (stop is not None and stop.is_set()):
            try:
                if self.connection.writer is None or (self.protocol != "modern" and self.session is None):
                    await self._connect(stop_at)
                started_wall, started = time.time(), time.monotonic()
                outcome = await asyncio.wait_for(self.call(), CALL_TIMEOUT)
            except Broken:
                self.results.count("lost", started_wall, 0.0, self.session)
                self.results.reconnects += 1
                self.session = None
                calls += 1
                continue
            except TimeoutError:
                self.results.count("timeout", started_wall, 0.0, self.session)
                self.connection.close()
                self.session = None
                calls += 1
                continue
            except (OSError, RuntimeError) as exc:  # could not connect or shake hands: retry shortly
                self.results.outcomes[f"connect:{type(exc).__name__}"] = (
                    self.results.outcomes.get(f"connect:{type(exc).__name__}", 0) + 1
                )
                self.connection.close()
                self.session = None
                await asyncio.sleep(0.05)
                continue
            if outcome == "session_gone":
                self.results.new_sessions += 1
                self.session = None  # not counted: nothing ran; the call is sent again in a new session
                continue
            self.results.count(outcome, started_wall, time.monotonic() - started, self.session)
            calls += 1
        self.connection.close()

    async def _connect(self, stop_at: float) -> None:
        for _ in range(CONNECT_RETRIES):
            try:
                if self.connection.writer is None:
                    await self.connection.open()
                await self.handshake()
                return
            except (OSError, Broken):
                self.connection.close()
                if time.monotonic() > stop_at:
                    break
                await asyncio.sleep(0.05)
        raise RuntimeError("could not connect")


async def run_load(
    url: str, protocol: str, clients: int, duration: float, max_calls: int, stop: asyncio.Event | None = None
) -> dict[str, Any]:
    """``clients`` callers for ``duration`` seconds (``max_calls`` each at most), or until ``stop`` is set."""
    results = Results()
    started = time.monotonic()
    stop_at = started + duration
    workers = [Client(url, protocol, results, n + 1) for n in range(clients)]
    runs = asyncio.gather(*(w.run(stop_at, max_calls, stop) for w in workers))
    await asyncio.wait_for(runs, duration + CALL_TIMEOUT + 10)
    elapsed = time.monotonic() - started
    return {
        "protocol": protocol,
        "clients": clients,
        "seconds": elapsed,
        "outcomes": results.outcomes,
        "latencies_ms": results.latencies_ms,
        "failures": results.failures,
        "new_sessions": results.new_sessions,
        "reconnects": results.reconnects,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--protocol", choices=PROTOCOLS, default="session")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--max-calls", type=int, default=100_000)
    args = parser.parse_args()
    result = asyncio.run(run_load(args.url, args.protocol, args.clients, args.duration, args.max_calls))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
