"""What the security tests share: a hostile-but-realistic API description, and the real bridge stack.

:func:`bridge_client` runs the same code as ``mcp-bridge serve`` (generator → catalogue →
``HttpRuntime`` → tools → low-level MCP server) behind the official in-memory MCP client, with the
upstream on a real 127.0.0.1 socket (usually a :class:`~tests.security.fault_server.FaultServer`).
"""

from __future__ import annotations

import functools
import json
import tempfile
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp import Client

from bridge.contract.catalogue import Catalogue, ServeMode
from bridge.serving.assemble import ServeOptions, build_bridge_server, build_registry, build_runtime
from bridge.upstream.http_settings import HttpSettings

SECRET = "SECRET-canary-7d41e0b2"
"""The configured API key in these tests: it must never come back out of the bridge."""
QUERY_SECRET = "QSECRET-canary-19af"
ENV = {"HARDENING_KEY_API_KEY": SECRET, "HARDENING_QKEY_API_KEY": QUERY_SECRET}

_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
_OK = {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}
_ITEM_BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "note": {"type": "string"}},
            }
        }
    },
}

HARDENING_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Hardening", "version": "1.0"},
    "servers": [
        {
            "url": "https://{tenant}.api.example/v1",
            "variables": {"tenant": {"default": "acme", "enum": ["acme", "globex"]}},
        }
    ],
    "security": [{"key": [], "qkey": []}],
    "components": {
        "securitySchemes": {
            "key": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            "qkey": {"type": "apiKey", "in": "query", "name": "api_key"},
        }
    },
    "paths": {
        "/items/{id}": {
            "parameters": [_ID],
            "get": {
                "operationId": "getItem",
                "parameters": [
                    {"name": "q", "in": "query", "schema": {"type": "string"}},
                    {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                    {"name": "session", "in": "cookie", "schema": {"type": "string"}},
                    {"name": "Host", "in": "header", "schema": {"type": "string"}},
                    {"name": "X-Forwarded-For", "in": "header", "schema": {"type": "string"}},
                    {"name": "Transfer-Encoding", "in": "header", "schema": {"type": "string"}},
                    {"name": "Content-Length", "in": "header", "schema": {"type": "string"}},
                    {"name": "Cookie", "in": "header", "schema": {"type": "string"}},
                    {"name": "Connection", "in": "header", "schema": {"type": "string"}},
                ],
                "responses": _OK,
            },
            "put": {"operationId": "replaceItem", "requestBody": _ITEM_BODY, "responses": _OK},
            "delete": {"operationId": "deleteItem", "responses": {"204": {"description": "gone"}}},
            "patch": {"operationId": "patchItem", "requestBody": _ITEM_BODY, "responses": _OK},
        },
        "/items": {
            "get": {
                "operationId": "listItems",
                "parameters": [
                    {"name": "q", "in": "query", "schema": {"type": "string"}},
                    {
                        "name": "tags",
                        "in": "query",
                        "style": "form",
                        "explode": True,
                        "schema": {"type": "array", "items": {"type": "string"}},
                    },
                    {
                        "name": "filter",
                        "in": "query",
                        "style": "deepObject",
                        "explode": True,
                        "schema": {"type": "object", "additionalProperties": {"type": "string"}},
                    },
                ],
                "responses": _OK,
            },
            "post": {"operationId": "createItem", "requestBody": _ITEM_BODY, "responses": _OK},
        },
        "/files/{name}.{ext}": {
            "get": {
                "operationId": "getFile",
                "parameters": [
                    {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "ext", "in": "path", "required": True, "schema": {"type": "string"}},
                ],
                "responses": _OK,
            }
        },
    },
}


@functools.cache
def hardening_catalogue() -> Catalogue:
    """The catalogue the real generator makes from :data:`HARDENING_SPEC`."""
    return catalogue_of(HARDENING_SPEC, "hardening")


def catalogue_of(spec: Mapping[str, Any], name: str) -> Catalogue:
    """The catalogue the real generator makes from ``spec``."""
    from generator.generate import build_catalogue
    from generator.options import GenerateOptions

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{name}.json"
        path.write_text(json.dumps(spec))
        catalogue, _ = build_catalogue(str(path), GenerateOptions(name=name))
    return catalogue


FAST = HttpSettings(connect_timeout=2.0, read_timeout=2.0, write_timeout=2.0, pool_timeout=2.0, deadline=3.0)
"""Settings that keep every test short."""


def fast(**changes: Any) -> HttpSettings:
    from dataclasses import replace

    return replace(FAST, **changes)


@asynccontextmanager
async def bridge_client(
    base_url: str,
    *,
    catalogue: Catalogue | None = None,
    settings: HttpSettings | None = None,
    environ: Mapping[str, str] | None = None,
    logging_callback: Any = None,
    mode: str = "auto",
    serve_mode: ServeMode = "tools",
) -> AsyncIterator[Client]:
    """The real bridge for ``catalogue`` (default: the hardening API) behind an in-memory MCP client.

    ``mode="legacy"`` makes a handshake-era connection (what :func:`call_raw` needs);
    ``serve_mode`` is ``serve --mode``: tools, discovery or code.
    """
    catalogue = catalogue or hardening_catalogue()
    runtime = build_runtime(
        catalogue,
        ServeOptions(base_url=base_url),
        environ=dict(ENV if environ is None else environ),
        settings=settings or FAST,
    )
    try:
        registry = build_registry(catalogue, runtime, None)
        server = build_bridge_server(
            catalogue,
            registry,
            mode=serve_mode,
            redact=runtime.credentials.redact,
            runtime=runtime,
        )
        options: dict[str, Any] = {}
        if logging_callback is not None:
            options["logging_callback"] = logging_callback
        async with Client(server, mode=mode, **options) as client:
            yield client
    finally:
        with anyio.CancelScope(shield=True):
            await runtime.aclose()


async def call_raw(client: Client, name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
    """``tools/call`` with ``arguments`` exactly as given, over a ``mode="legacy"`` client.

    The typed ``call_tool`` dumps its arguments in pydantic's JSON mode, which turns NaN and
    Infinity into null; stdio and HTTP clients' NaN reach the server as floats (the SDK's JSON
    parser accepts them). The raw request carries them as those clients do.
    """
    raw = await client.session._dispatcher.send_raw_request("tools/call", {"name": name, "arguments": arguments})
    return mcp_types.CallToolResult.model_validate(raw)


def result_text(result: mcp_types.CallToolResult) -> str:
    """Every text of a result (content blocks and structured content), for "never contains" checks."""
    parts = [getattr(block, "text", "") or json.dumps(block.model_dump(mode="json")) for block in result.content]
    if result.structured_content is not None:
        parts.append(json.dumps(result.structured_content))
    return "\n".join(parts)
