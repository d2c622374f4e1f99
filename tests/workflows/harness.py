"""A small shop API and a way to serve Arazzo workflows over it in memory, with the official MCP client.

The fake upstream (tests/bridge/fake_upstream.py) records every request and validates it against
the spec with openapi-core, so each workflow step is checked on the wire as a tool call would be.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types
import yaml
from mcp import Client

from bridge.calls.runtime import HttpRuntime
from bridge.serving.assemble import build_bridge_server, build_registry
from generator.generate import build_catalogue
from generator.options import GenerateOptions
from tests.bridge.fake_upstream import FakeUpstream

UPSTREAM = "http://upstream.test"
TOKEN = "operator-token-0123456789"
ENV = {"SHOP_OAUTH_TOKEN": TOKEN}

_ITEM = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "price": {"type": "number"}},
}
_ORDER = {"type": "object", "properties": {"id": {"type": "integer"}, "status": {"type": "string"}}}


def _ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Shop", "version": "1"},
    "servers": [{"url": UPSTREAM}],
    "components": {
        "securitySchemes": {
            "oauth": {
                "type": "openIdConnect",
                "openIdConnectUrl": "https://auth.test/.well-known/openid-configuration",
            },
            "session": {"type": "http", "scheme": "bearer"},
        }
    },
    "security": [{"oauth": ["items:read"]}],
    "paths": {
        "/items": {
            "get": {
                "operationId": "listItems",
                "parameters": [{"name": "q", "in": "query", "schema": {"type": "string"}}],
                "responses": _ok({"type": "array", "items": _ITEM}),
            }
        },
        "/items/{id}": {
            "get": {
                "operationId": "getItem",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
                "responses": {**_ok(_ITEM), "404": {"description": "no such item"}},
            }
        },
        "/orders": {
            "post": {
                "operationId": "createOrder",
                "security": [{"oauth": ["orders:write"]}],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["itemId"],
                                "properties": {
                                    "itemId": {"type": "integer"},
                                    "quantity": {"type": "integer"},
                                    "note": {"type": "string"},
                                },
                            }
                        }
                    },
                },
                "responses": _ok(_ORDER),
            }
        },
        "/orders/{id}": {
            "get": {
                "operationId": "getOrder",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
                "responses": {**_ok(_ORDER), "503": {"description": "busy"}},
            },
            "delete": {
                "operationId": "cancelOrder",
                "security": [{"oauth": ["orders:write"]}],
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
                "responses": {"204": {"description": "cancelled"}},
            },
        },
        "/login": {
            "post": {
                "operationId": "login",
                "security": [],
                "parameters": [{"name": "user", "in": "query", "required": True, "schema": {"type": "string"}}],
                "responses": {
                    "200": {
                        "description": "a session token",
                        "headers": {"X-Expires-After": {"schema": {"type": "string"}}},
                        "content": {"application/json": {"schema": {"type": "string"}}},
                    }
                },
            }
        },
        "/me": {
            "get": {
                "operationId": "me",
                "security": [{"session": []}],
                "responses": _ok({"type": "object", "properties": {"user": {"type": "string"}}}),
            }
        },
    },
}


def arazzo(*workflows: dict[str, Any], sources: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "arazzo": "1.0.1",
        "info": {"title": "Shop workflows", "version": "1"},
        "sourceDescriptions": sources or [{"name": "shop", "url": "./shop.json", "type": "openapi"}],
        "workflows": list(workflows),
        **extra,
    }


def write(tmp_path: Path, document: dict[str, Any], spec: dict[str, Any] | None = None) -> tuple[Path, Path]:
    spec_path = tmp_path / "shop.json"
    spec_path.write_text(json.dumps(spec or SPEC), encoding="utf-8")
    flows = tmp_path / "shop.arazzo.yaml"
    flows.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return spec_path, flows


@asynccontextmanager
async def served(
    tmp_path: Path, document: dict[str, Any], fake: FakeUpstream, *, environ: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    spec_path, flows = write(tmp_path, document)
    catalogue, _ = build_catalogue(str(spec_path), GenerateOptions(workflows=(str(flows),)))
    runtime = HttpRuntime.create(
        catalogue, base_url=UPSTREAM, environ=ENV if environ is None else environ, transport=fake.transport()
    )
    async with runtime:
        registry = build_registry(catalogue, runtime, None)
        server = build_bridge_server(catalogue, registry, redact=runtime.credentials.redact, runtime=runtime)
        async with Client(server) as client:
            yield client


def shop_upstream() -> FakeUpstream:
    return FakeUpstream(SPEC)


def text(result: mcp_types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))
