"""Code mode served in memory: a generated package (or a catalogue), the fake upstream, the official client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp import Client
from mcp.server.lowlevel import Server

from bridge.calls.runtime import HttpRuntime
from bridge.contract.catalogue import Catalogue
from bridge.modes.sandbox import SandboxLimits
from bridge.serving.assemble import build_bridge_server, build_registry
from bridge.serving.package import load_catalogue
from generator.generate import generate
from generator.load.spec import load_spec
from generator.options import GenerateOptions
from tests.bridge.fake_upstream import FakeUpstream
from tests.golden import spec_path

UPSTREAM = "http://upstream.test"
SECRET = "pet-secret-4d1c9e"
ENV = {"PETSTORE_API_KEY": SECRET}


def petstore_package(tmp_path: Path, **options: Any) -> Path:
    package = tmp_path / "petstore"
    generate(str(spec_path("petstore")), package, GenerateOptions(**options))
    return package


@asynccontextmanager
async def code_server(
    package: Path | None,
    *,
    catalogue: Catalogue | None = None,
    fake: FakeUpstream | None = None,
    limits: SandboxLimits | None = None,
    transport: Any = None,
    base_url: str = UPSTREAM,
    environ: dict[str, str] | None = None,
) -> AsyncIterator[tuple[Server, FakeUpstream]]:
    """The bridge in code mode (one server: each ``Client(server)`` is a session of its own);
    stubs from the package's api.pyi."""
    if catalogue is None:
        assert package is not None
        catalogue = load_catalogue(package)
    if fake is None:
        document = dict(load_spec(str(spec_path("petstore"))).document)
        document["servers"] = [{"url": UPSTREAM}]
        fake = FakeUpstream(document)
    runtime = HttpRuntime.create(
        catalogue,
        base_url=base_url,
        environ=ENV if environ is None else environ,
        transport=transport or fake.transport(),
    )
    try:
        registry = build_registry(catalogue, runtime, None)
        server = build_bridge_server(
            catalogue,
            registry,
            mode="code",
            redact=runtime.credentials.redact,
            runtime=runtime,
            package_dir=package,
            sandbox=limits,
        )
        yield server, fake
    finally:
        with anyio.CancelScope(shield=True):
            await runtime.aclose()


@asynccontextmanager
async def code_client(package: Path | None, **options: Any) -> AsyncIterator[tuple[Client, FakeUpstream]]:
    """The bridge in code mode behind an in-memory client (see :func:`code_server`)."""
    async with code_server(package, **options) as (server, fake), Client(server) as client:
        yield client, fake


def text(result: mcp_types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))


def value(result: mcp_types.CallToolResult) -> Any:
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    assert json.loads(text(result)) == result.structured_content
    return result.structured_content["result"]
