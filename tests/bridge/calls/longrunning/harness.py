"""The real bridge over the jobs API (``specs/jobs.yaml``) behind the official in-memory MCP client."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from bridge.calls.longrunning.follow import FollowSettings
from bridge.contract.catalogue import Catalogue
from bridge.serving.assemble import ServeOptions, build_bridge_server, build_registry, build_runtime
from bridge.upstream.http_settings import HttpSettings
from tests.bridge.calls.longrunning.jobs_upstream import ENV, JobStore

SPEC = Path(__file__).resolve().parents[4] / "specs" / "jobs.yaml"
FAST = HttpSettings(connect_timeout=2.0, read_timeout=2.0, write_timeout=2.0, pool_timeout=2.0, deadline=5.0)
QUICK = FollowSettings(wait=5.0, deadline=20.0, first_interval=0.0, min_interval=0.01, max_interval=0.05)
"""Polls as fast as the jobs API allows (it sends Retry-After: 0), bounded by the wait."""


@functools.cache
def jobs_catalogue() -> Catalogue:
    from generator.generate import build_catalogue
    from generator.options import GenerateOptions

    catalogue, _ = build_catalogue(str(SPEC), GenerateOptions(name="jobs"))
    return catalogue


def base_url(store: JobStore) -> str:
    return f"http://127.0.0.1:{store.port}/v1"


@asynccontextmanager
async def jobs_server(
    store: JobStore,
    *,
    follow: FollowSettings = QUICK,
    options: ServeOptions | None = None,
    catalogue: Catalogue | None = None,
) -> AsyncIterator[Any]:
    """The bridge for the jobs API (``options`` as ``serve`` would take them), for one client or several."""
    catalogue = catalogue or jobs_catalogue()
    options = dataclasses.replace(options or ServeOptions(), base_url=base_url(store), long_running=follow)
    runtime = build_runtime(catalogue, options, environ=dict(ENV), settings=FAST)
    try:
        registry = build_registry(catalogue, runtime, None)
        yield build_bridge_server(
            catalogue,
            registry,
            mode=options.mode,
            redact=runtime.credentials.redact,
            runtime=runtime,
            sandbox=options.sandbox,
            options=options,
        )
    finally:
        with anyio.CancelScope(shield=True):
            await runtime.aclose()


@asynccontextmanager
async def jobs_client(
    store: JobStore,
    *,
    follow: FollowSettings = QUICK,
    mode: str = "auto",
    options: ServeOptions | None = None,
    catalogue: Catalogue | None = None,
    **client_options: Any,
) -> AsyncIterator[Client]:
    """The bridge for the jobs API (``options`` as ``serve`` would take them) and a client of it."""
    async with jobs_server(store, follow=follow, options=options, catalogue=catalogue) as server:
        async with Client(server, mode=mode, **client_options) as client:
            yield client
