"""Shared pieces of the end-to-end tests: the demo upstream on a real socket, bridge subprocesses.

Everything listens on 127.0.0.1 only; every wait is bounded, and every process started here is
terminated in a ``finally``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest

from bridge.cli.demo_upstream import DEMO_API_KEY, PetStore, free_port, serve_pet_store

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "generated" / "petstore"
STARTUP_TIMEOUT = 15.0
STOP_TIMEOUT = 5.0


def port_accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@dataclass
class Upstream:
    """The demo pet store API, served by uvicorn in this test's event loop."""

    store: PetStore
    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def bridge_env(self) -> dict[str, str]:
        """The environment a bridge subprocess needs to reach this upstream."""
        return {"PETSTORE_BASE_URL": self.base_url, "PETSTORE_API_KEY": DEMO_API_KEY}


@asynccontextmanager
async def running_upstream() -> AsyncIterator[Upstream]:
    async with serve_pet_store() as (port, store):
        yield Upstream(store, port)


@pytest.fixture
async def upstream(anyio_backend: str) -> AsyncIterator[Upstream]:
    async with running_upstream() as running:
        yield running


def bridge_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "bridge", "serve", str(PACKAGE), *args]


def subprocess_env(extra: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    env.update(extra)
    return env


def stop_process(process: subprocess.Popen[Any]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=STOP_TIMEOUT)


@dataclass
class HttpBridge:
    process: subprocess.Popen[bytes]
    port: int
    stderr_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")


async def _start_http_bridge(
    upstream: Upstream, stderr_path: Path, port: int, args: tuple[str, ...]
) -> HttpBridge | None:
    """Start the bridge and wait until its port accepts; None if the port was taken meanwhile."""
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            bridge_command("--transport", "http", "--port", str(port), *args),
            cwd=ROOT,
            env=subprocess_env(upstream.bridge_env()),
            stdin=subprocess.DEVNULL,
            stdout=stderr,
            stderr=stderr,
        )
    try:
        with anyio.fail_after(STARTUP_TIMEOUT):
            while not await anyio.to_thread.run_sync(port_accepts, port):
                if process.poll() is not None:
                    output = stderr_path.read_text(encoding="utf-8", errors="replace")
                    if "address already in use" in output.lower():
                        return None
                    raise RuntimeError(f"bridge exited with {process.returncode}:\n{output}")
                await anyio.sleep(0.05)
    except BaseException:
        await anyio.to_thread.run_sync(stop_process, process)
        raise
    return HttpBridge(process, port, stderr_path)


@asynccontextmanager
async def http_bridge(upstream: Upstream, tmp_path: Path, *args: str) -> AsyncIterator[HttpBridge]:
    """``mcp-bridge serve generated/petstore --transport http --port P ARGS`` as a subprocess."""
    for _attempt in range(3):  # a free port can be taken between choosing it and the bridge binding it
        port = free_port()
        bridge = await _start_http_bridge(upstream, tmp_path / f"bridge-{port}.stderr", port, args)
        if bridge is not None:
            break
    else:
        raise RuntimeError("no free port for the bridge after 3 attempts")
    try:
        yield bridge
    finally:
        await anyio.to_thread.run_sync(stop_process, bridge.process)


@contextmanager
def text_log(path: Path) -> Iterator[TextIO]:
    """A real file to hand to a subprocess as its stderr (``errlog`` needs a file descriptor)."""
    with path.open("w+", encoding="utf-8") as handle:
        yield handle
