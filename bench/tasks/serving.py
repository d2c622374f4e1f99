"""The servers the task suite talks to: the bridge in each mode (in memory, built as ``mcp-bridge
serve`` builds it) and FastMCP 4.2.3's code mode (its own virtualenv, over stdio)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from bench.common import OUT_DIR, fake_environ

PACKAGES = OUT_DIR / "tasks"
FASTMCP_CODE_SERVER = """
import json, os, sys, warnings
warnings.simplefilter("ignore")
import httpx2 as httpx
from fastmcp import FastMCP
from fastmcp.experimental.transforms.code_mode import CodeMode

spec = json.loads(open(sys.argv[1], encoding="utf-8").read())
client = httpx.AsyncClient(base_url=os.environ["BENCH_BASE_URL"], trust_env=False, timeout=60)
server = FastMCP.from_openapi(openapi_spec=spec, client=client, name="bench")
server.add_transform(CodeMode())
server.run(transport="stdio", show_banner=False)
"""


def package(spec: Path, label: str, *, include: Sequence[str] = (), root: Path = PACKAGES) -> Path:
    """``spec`` generated (no models) into ``root``/<label> (bench/out/tasks/), once; ``include``:
    operation globs (operationId or "METHOD /path"), for a subset."""
    from generator.generate import generate
    from generator.options import GenerateOptions

    out = root / label
    stamp = out / ".tasks-stamp"
    key = json.dumps(
        {"spec": str(spec), "mtime": spec.stat().st_mtime, "include": list(include), "generator": _generator_digest()}
    )
    if not (stamp.is_file() and stamp.read_text(encoding="utf-8") == key):
        generate(str(spec), out, GenerateOptions(include_operations=tuple(include)))
        stamp.write_text(key, encoding="utf-8")
    return out


def _generator_digest() -> str:
    """A digest of the code that writes a package, so a changed generator regenerates it."""
    import hashlib

    import bridge
    import generator

    digest = hashlib.sha256()
    for root in (Path(generator.__file__).parent, Path(bridge.__file__).parent):
        for path in sorted(root.glob("*.py")):
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class TimedTransport(httpx.AsyncBaseTransport):
    """The bridge's HTTP transport, keeping each request's interval (``time.monotonic``) from
    sending it to having read the whole answer: the upstream time as the call core sees it."""

    def __init__(self, intervals: list[tuple[float, float]]) -> None:
        self._inner = httpx.AsyncHTTPTransport(retries=0)
        self.intervals = intervals

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        started = time.monotonic()
        response = await self._inner.handle_async_request(request)
        body = b"".join([chunk async for chunk in response.stream])  # type: ignore[union-attr]
        await response.aclose()
        self.intervals.append((started, time.monotonic()))
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=httpx.ByteStream(body),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


@contextlib.asynccontextmanager
async def bridge_client(
    package_dir: Path, mode: str, base_url: str, intervals: list[tuple[float, float]] | None = None
) -> AsyncIterator[Any]:
    """The bridge serving ``package_dir`` in ``mode`` against ``base_url``, behind the official client;
    ``intervals`` collects the upstream time its HTTP client sees (:class:`TimedTransport`)."""
    from mcp import Client

    from bridge.serving.assemble import ServeOptions, build_bridge_server, build_registry, build_runtime
    from bridge.serving.package import load_catalogue

    catalogue = load_catalogue(package_dir)
    transport = TimedTransport(intervals) if intervals is not None else None
    options = ServeOptions(base_url=base_url)
    runtime = build_runtime(catalogue, options, environ=fake_environ(catalogue), transport=transport)
    registry = build_registry(catalogue, runtime, package_dir)
    server = build_bridge_server(
        catalogue,
        registry,
        mode=mode,  # type: ignore[arg-type]
        redact=runtime.credentials.redact,
        runtime=runtime,
        package_dir=package_dir,
    )
    async with runtime, Client(server) as client:
        yield client


def fastmcp_code_python() -> Path | None:
    """The FastMCP venv's python with the ``code-mode`` extra (pydantic-monty), set up on first use."""
    import subprocess

    from bench.peers import FASTMCP_VERSION, INSTALL_TIMEOUT, fastmcp_python

    python = fastmcp_python()
    if python is None:
        return None
    marker = python.parent.parent / f".fastmcp-code-mode-{FASTMCP_VERSION}"
    if not marker.exists():
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, f"fastmcp[code-mode]=={FASTMCP_VERSION}"], check=True, timeout=INSTALL_TIMEOUT)
        marker.write_text("ok\n", encoding="utf-8")
    return python


@contextlib.asynccontextmanager
async def fastmcp_client(python: Path, spec: Path, base_url: str, stderr: Path) -> AsyncIterator[Any]:
    """FastMCP 4.2.3: ``FastMCP.from_openapi(spec)`` with its ``CodeMode`` transform, over stdio."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    script = OUT_DIR / "fastmcp_code_server.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(FASTMCP_CODE_SERVER.lstrip(), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.upper().endswith("_PROXY") and k != "PYTHONPATH"}
    env["BENCH_BASE_URL"] = base_url
    params = StdioServerParameters(command=str(python), args=[str(script), str(spec)], env=env)
    with open(stderr, "w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=300) as client:
            yield client


def python_version() -> str:
    return sys.version.split()[0]
