"""The load bench's upstream: a lean keep-alive HTTP/1.1 server on 127.0.0.1 that counts concurrency.

``python -m bench.scale_upstream --port P [--delay S] [--lifetime S]`` answers ``GET
/v1/pets/{id}`` with a pet of that id (what the petstore package's ``getPet`` expects, so the
bridge's output check passes), after ``delay`` seconds, on connections kept alive. It is an
asyncio protocol, not an ASGI app, so that it takes as little of the shared cores as possible.

``GET /__stats`` answers ``{"requests": n, "in_flight": n, "peak": n}``: the peak of requests
in flight at once since the last ``POST /__reset`` (the shared-limit check reads it). Every
other path is a 404. It stops by itself after ``lifetime`` seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json

PET = '{{"id":{id},"name":"Rex","tag":"dog","status":"available"}}'


class Stats:
    def __init__(self) -> None:
        self.requests = 0
        self.in_flight = 0
        self.peak = 0

    def as_json(self) -> bytes:
        return json.dumps({"requests": self.requests, "in_flight": self.in_flight, "peak": self.peak}).encode()


def _response(status: str, body: bytes, content_type: bytes = b"application/json") -> bytes:
    return (
        b"HTTP/1.1 " + status.encode() + b"\r\ncontent-type: " + content_type
        + b"\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )  # fmt: skip


class Upstream(asyncio.Protocol):
    """One connection: requests are answered in order (pipelining is not needed by httpx)."""

    def __init__(self, stats: Stats, delay: float) -> None:
        self.stats = stats
        self.delay = delay
        self.buffer = b""
        self.transport: asyncio.Transport | None = None
        self.queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self.worker: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.worker = asyncio.get_running_loop().create_task(self.answer())

    def connection_lost(self, exc: Exception | None) -> None:
        if self.worker is not None:
            self.worker.cancel()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > 65536 and self.transport is not None:
                    self.transport.close()
                return
            head, self.buffer = self.buffer[:end], self.buffer[end + 4 :]
            request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
            method, _, rest = request_line.partition(" ")
            target = rest.rpartition(" ")[0]
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip() or 0)
            self.buffer = self.buffer[length:]  # bodies are not used (and are small)
            self.queue.put_nowait((method, target))

    async def answer(self) -> None:
        while True:
            method, target = await self.queue.get()
            path = target.split("?", 1)[0]
            if path == "/__stats":
                out = _response("200 OK", self.stats.as_json())
            elif path == "/__reset":
                self.stats.peak = self.stats.in_flight
                self.stats.requests = 0
                out = _response("200 OK", self.stats.as_json())
            elif method == "GET" and path.startswith("/v1/pets/") and path[9:].isdigit():
                self.stats.requests += 1
                self.stats.in_flight += 1
                self.stats.peak = max(self.stats.peak, self.stats.in_flight)
                try:
                    if self.delay:
                        await asyncio.sleep(self.delay)
                finally:
                    self.stats.in_flight -= 1
                out = _response("200 OK", PET.format(id=int(path[9:])).encode())
            else:
                out = _response("404 Not Found", b'{"message":"not found"}')
            if self.transport is None or self.transport.is_closing():
                return
            self.transport.write(out)


async def serve(port: int, delay: float, lifetime: float) -> None:
    stats = Stats()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Upstream(stats, delay), "127.0.0.1", port, backlog=1024)
    async with server:
        await asyncio.sleep(lifetime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--lifetime", type=float, default=900.0)
    args = parser.parse_args()
    asyncio.run(serve(args.port, args.delay, args.lifetime))


if __name__ == "__main__":
    main()
