"""A real redis-server (Debian's) on a free loopback port with a temporary directory, for one test.

Nothing is persisted (no RDB, no AOF); it listens on 127.0.0.1 only. :meth:`RedisServer.stop`
and :meth:`RedisServer.start` take it down and bring it back on the same port (the tests of the
"Redis unreachable" policy); :meth:`RedisServer.pause` freezes it (SIGSTOP), so that clients see
timeouts rather than refused connections.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.services.install import ensure_services
from tests.services.processes import HOST, StartFailed, free_port, stop, wait_ready


def ping(port: int, timeout: float = 0.5) -> bool:
    """True when a Redis server on ``port`` answers PING."""
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def command(port: int, *args: str, timeout: float = 2.0) -> bytes:
    """One command in RESP (for test assertions: ``command(port, "KEYS", "*")``); the raw reply."""
    payload = f"*{len(args)}\r\n".encode() + b"".join(
        f"${len(arg.encode())}\r\n".encode() + arg.encode() + b"\r\n" for arg in args
    )
    with socket.create_connection((HOST, port), timeout=timeout) as sock:
        sock.sendall(payload)
        return sock.recv(65536)


class RedisServer:
    def __init__(self, directory: Path, port: int) -> None:
        self.directory = directory
        self.port = port
        self.log = directory / "redis.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}/0"

    def start(self) -> None:
        binary = ensure_services()["redis-server"]
        args = [
            str(binary),
            "--port", str(self.port),
            "--bind", HOST,
            "--save", "",
            "--appendonly", "no",
            "--dir", str(self.directory),
            "--daemonize", "no",
            "--protected-mode", "yes",
            "--loglevel", "warning",
            "--logfile", str(self.log),
        ]  # fmt: skip
        self.process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
        )
        wait_ready(self.process, lambda: ping(self.port), what="redis-server", log=self.log)

    def stop(self) -> None:
        if self.process is not None:
            self.resume()
            stop(self.process)
            self.process = None

    def pause(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)


@contextmanager
def running_redis() -> Iterator[RedisServer]:
    """redis-server on a free port, stopped (and its directory removed) on the way out."""
    with tempfile.TemporaryDirectory(prefix="mcp-bridge-redis-") as folder:
        for _attempt in range(3):
            server = RedisServer(Path(folder), free_port())
            try:
                server.start()
                break
            except StartFailed as exc:
                if not exc.port_taken:
                    raise
        else:
            raise StartFailed("redis-server: no free port after 3 attempts")
        try:
            yield server
        finally:
            server.stop()
