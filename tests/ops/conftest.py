"""Shared pieces of the operations tests: a gated pet upstream in this event loop, bridge subprocesses.

The upstream answers ``GET /v1/pets/{id}`` and can hold every request until the test opens its
gate, so a call is really in flight when a signal arrives; it records each request's headers
and the most requests it held at once. Everything is on 127.0.0.1, every wait bounded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bridge.cli.demo_upstream import DEMO_API_KEY, PetStore, free_port
from tests.e2e.conftest import HttpBridge, Upstream, http_bridge

HOLD_LIMIT = 30.0  # an ungated request is answered after this at the latest


@dataclass
class Gated:
    port: int = 0
    gate: anyio.Event | None = None  # None: answer at once
    in_flight: int = 0
    peak: int = 0
    requests: int = 0
    headers: list[dict[str, str]] = field(default_factory=list)
    arrived: anyio.Event = field(default_factory=anyio.Event)

    def hold(self) -> anyio.Event:
        self.gate = anyio.Event()
        return self.gate

    @property
    def upstream(self) -> Upstream:
        return Upstream(PetStore(), self.port)


def gated_app(state: Gated) -> Starlette:
    async def get_pet(request: Request) -> Response:
        if request.headers.get("x-api-key") != DEMO_API_KEY:
            return JSONResponse({"message": "missing or wrong X-API-Key"}, status_code=401)
        state.requests += 1
        state.headers.append(dict(request.headers))
        state.in_flight += 1
        state.peak = max(state.peak, state.in_flight)
        state.arrived.set()
        try:
            if state.gate is not None:
                with anyio.move_on_after(HOLD_LIMIT):
                    await state.gate.wait()
        finally:
            state.in_flight -= 1
        pet_id = int(request.path_params["pet_id"])
        return JSONResponse({"id": pet_id, "name": f"pet {pet_id}", "status": "available"})

    return Starlette(routes=[Route("/v1/pets/{pet_id:int}", get_pet)])


@asynccontextmanager
async def gated_upstream() -> AsyncIterator[Gated]:
    import uvicorn

    state = Gated(port=free_port())
    config = uvicorn.Config(gated_app(state), host="127.0.0.1", port=state.port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        try:
            with anyio.fail_after(15):
                while not server.started:
                    await anyio.sleep(0.01)
            yield state
        finally:
            if state.gate is not None:
                state.gate.set()
            server.should_exit = True


@asynccontextmanager
async def bridge_on(state: Gated, tmp_path: Path, *args: str) -> AsyncIterator[HttpBridge]:
    async with http_bridge(state.upstream, tmp_path, *args) as bridge:
        yield bridge


async def exit_code(bridge: HttpBridge, timeout: float) -> int | None:
    """The bridge's exit status once it exits, or None if it is still running after ``timeout``."""
    with anyio.move_on_after(timeout):
        while bridge.process.poll() is None:
            await anyio.sleep(0.05)
    return bridge.process.poll()


def text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


ENV = {"PETSTORE_API_KEY": DEMO_API_KEY}
UPSTREAM = "http://pets.test/v1"


@asynccontextmanager
async def observed_server(
    settings: Any, state: Gated, *, span_processor: Any = None, metric_reader: Any = None, **serve: Any
) -> AsyncIterator[tuple[Any, Any]]:
    """The petstore package served in memory with ``settings`` (OpsSettings), as ``serve`` assembles it,
    its upstream the gated app through httpx's ASGI transport: ``(server, operations)``."""
    import httpx

    from bridge.serving.assemble import ServeOptions, build_bridge_server, build_registry, build_runtime
    from bridge.serving.operate import Operations
    from bridge.serving.package import load_catalogue
    from tests.e2e.conftest import PACKAGE

    catalogue = load_catalogue(PACKAGE)
    options = ServeOptions(base_url=UPSTREAM, ops=settings, **serve)
    operations = Operations(settings, api=catalogue.name, span_processor=span_processor, metric_reader=metric_reader)
    transport = httpx.ASGITransport(app=gated_app(state))
    runtime = operations.adopt(build_runtime(catalogue, options, environ=ENV, transport=transport))
    async with runtime.upstream:
        registry = build_registry(catalogue, runtime, PACKAGE)
        server = build_bridge_server(
            catalogue, registry, runtime=runtime, redact=runtime.credentials.redact, options=options
        )
        operations.install(server)
        try:
            yield server, operations
        finally:
            await operations.aclose()
