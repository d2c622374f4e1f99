"""A loopback TCP server that speaks just enough RESP to be a hostile Redis: it answers every
``EVALSHA``/``EVAL`` with the bytes a test chooses (``reply``), and ``+OK`` to the rest (the
client's ``CLIENT SETINFO`` on connect; ``HELLO`` gets a RESP3 map, ``SCRIPT LOAD``...). ``stream`` makes it follow the
reply with as many bytes as the client will take (a bulk header's promised body), until the
client hangs up. Listens on 127.0.0.1 only; each connection ends when the client closes it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

CHUNK = b"x" * 65536


@dataclass
class FakeRedis:
    port: int = 0
    reply: bytes = b"*2\r\n:1\r\n:0\r\n"
    stream: bool = False
    evals: int = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def _command(self, reader: asyncio.StreamReader) -> list[bytes]:
        header = await reader.readline()
        if not header.startswith(b"*"):
            return [header.strip()] if header else []
        args = []
        for _ in range(int(header[1:])):
            size = int((await reader.readline())[1:])
            args.append((await reader.readexactly(size + 2))[:-2])
        return args

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while args := await self._command(reader):
                name = args[0].upper()
                if name in (b"EVALSHA", b"EVAL"):
                    self.evals += 1
                    writer.write(self.reply)
                    await writer.drain()
                    while self.stream:  # ends when the client hangs up (drain raises)
                        writer.write(CHUNK)
                        await writer.drain()
                elif name == b"SCRIPT":
                    writer.write(b"$40\r\n" + b"0" * 40 + b"\r\n")
                elif name == b"HELLO":
                    writer.write(b"%1\r\n+proto\r\n:3\r\n")
                elif name == b"PING":
                    writer.write(b"+PONG\r\n")
                else:
                    writer.write(b"+OK\r\n")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()


@asynccontextmanager
async def fake_redis(reply: bytes = b"*2\r\n:1\r\n:0\r\n", *, stream: bool = False) -> AsyncIterator[FakeRedis]:
    fake = FakeRedis(reply=reply, stream=stream)
    server = await asyncio.start_server(fake._serve, "127.0.0.1", 0)
    fake.port = server.sockets[0].getsockname()[1]
    async with server:
        yield fake
        server.close()
