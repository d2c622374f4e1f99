"""An accounts API, its workflows, and the bridge serving them under ``--confirm`` to the official MCP client.

The fake upstream (tests/bridge/fake_upstream.py) records every request that reaches it, so a test
can say exactly what was sent: each write once per approved run, nothing for a refusal. The
``User`` answers the client's elicitation callback (both eras: an ``elicitation/create`` on
2025-11-25, an input round the client's driver answers and retries on 2026-07-28) and keeps
every form it was shown.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types
import yaml
from mcp import Client

from bridge.confirm.policy import ConfirmLevel, ConfirmSettings
from bridge.contract.catalogue import Catalogue
from bridge.serving.assemble import ServeOptions, build_bridge_server, build_registry, build_runtime
from generator.generate import build_catalogue
from generator.options import GenerateOptions
from tests.bridge.fake_upstream import FakeUpstream, make_reply

UPSTREAM = "http://upstream.test/v2"
API_KEY = "key-7f3a9c2e5b1d4068"
OWNER = "owner-secret-4711"
ENV = {"ACCOUNTS_KEY_API_KEY": API_KEY, "ACCOUNTS_OWNER": OWNER}
HARMLESS = [f"note{i:02d}" for i in range(1, 13)]


def _ok(schema: dict[str, Any] | None = None) -> dict[str, Any]:
    content = {"application/json": {"schema": schema or {"type": "object"}}}
    return {"200": {"description": "ok", "content": content}}


_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Accounts", "version": "1"},
    "servers": [{"url": UPSTREAM}],
    "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": "api_key"}}},
    "security": [{"key": []}],
    "paths": {
        "/reports/{id}": {
            # Reading a report hands it over and deletes it: the config marks this GET destructive.
            "get": {"operationId": "takeReport", "parameters": [_ID], "responses": _ok()}
        },
        "/orders": {
            "post": {
                "operationId": "createOrder",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"type": "object", "properties": {"item": {"type": "string"}}}}
                    },
                },
                "responses": _ok({"type": "object", "properties": {"id": {"type": "string"}}}),
            }
        },
        "/orders/{id}": {
            "delete": {"operationId": "cancelOrder", "parameters": [_ID], "responses": {"204": {"description": "gone"}}}
        },
        "/users/{id}": {
            "put": {
                "operationId": "updateUser",
                "parameters": [_ID, {"name": "notify", "in": "query", "schema": {"type": "boolean"}}],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    **{name: {"type": "string"} for name in HARMLESS},
                                    "role": {"type": "string"},
                                },
                            }
                        }
                    },
                },
                "responses": _ok(),
            }
        },
        "/teams/{team}/members/{id}": {
            "delete": {
                "operationId": "removeMember",
                "parameters": [{**_ID, "name": "team"}, _ID],
                "responses": {"204": {"description": "gone"}},
            }
        },
    },
}

FLOWS: dict[str, Any] = {
    "arazzo": "1.0.1",
    "info": {"title": "Accounts workflows", "version": "1"},
    "sourceDescriptions": [{"name": "accounts", "url": "./accounts.json", "type": "openapi"}],
    "workflows": [
        {
            "workflowId": "orderAndCancel",
            "inputs": {"type": "object", "properties": {"item": {"type": "string"}}},
            "steps": [
                {
                    "stepId": "order",
                    "operationId": "createOrder",
                    "requestBody": {"contentType": "application/json", "payload": {"item": "$inputs.item"}},
                    "outputs": {"id": "$response.body#/id"},
                },
                {
                    "stepId": "cancel",
                    "operationId": "cancelOrder",
                    "parameters": [{"name": "id", "in": "path", "value": "$steps.order.outputs.id"}],
                },
            ],
        },
        {
            "workflowId": "cancelBoth",
            "inputs": {"type": "object", "properties": {"first": {"type": "string"}, "second": {"type": "string"}}},
            "steps": [
                {
                    "stepId": "one",
                    "operationId": "cancelOrder",
                    "parameters": [{"name": "id", "in": "path", "value": "$inputs.first"}],
                },
                {
                    "stepId": "two",
                    "operationId": "cancelOrder",
                    "parameters": [{"name": "id", "in": "path", "value": "$inputs.second"}],
                },
            ],
        },
    ],
}

OVERRIDES: dict[str, Any] = {
    "takeReport": {"annotations": {"destructiveHint": True}},
    "removeMember": {"bind": {"team": "env:ACCOUNTS_OWNER"}},
}


class User:
    """The elicitation callback: answers as told (in turn, the last answer repeating), keeps every form."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers or ("accept",))
        self.forms: list[str] = []

    async def __call__(self, ctx: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        assert isinstance(params, mcp_types.ElicitRequestFormParams)
        self.forms.append(params.message)
        action = self.answers[min(len(self.forms), len(self.answers)) - 1]
        content = {"confirm": True} if action == "accept" else None
        return mcp_types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]


def accounts_upstream() -> FakeUpstream:
    fake = FakeUpstream(SPEC)
    fake.route("POST", "/v2/orders", make_reply(200, json_body={"id": "ord-9"}))
    return fake


def accounts_catalogue(tmp_path: Path | None, *, flows: bool = False) -> Catalogue:
    """The accounts API's catalogue (with ``OVERRIDES``, and ``FLOWS`` when asked), written to ``tmp_path``."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = tmp_path or Path(scratch)
        spec_path = folder / "accounts.json"
        spec_path.write_text(json.dumps(SPEC), encoding="utf-8")
        workflows: tuple[str, ...] = ()
        if flows:
            flows_path = folder / "accounts.arazzo.yaml"
            flows_path.write_text(yaml.safe_dump(FLOWS, sort_keys=False), encoding="utf-8")
            workflows = (str(flows_path),)
        options = GenerateOptions(name="accounts", workflows=workflows, overrides=OVERRIDES)
        catalogue, _ = build_catalogue(str(spec_path), options)
    return catalogue


@asynccontextmanager
async def accounts_client(
    tmp_path: Path,
    fake: FakeUpstream,
    *,
    level: ConfirmLevel = "destructive",
    mode: str = "tools",
    era: str = "auto",
    user: User | None = None,
    **settings: Any,
) -> AsyncIterator[Client]:
    """The bridge for the accounts API in ``mode`` with ``--confirm level`` and ``--resources``;
    ``era`` ``"auto"`` negotiates 2026-07-28, ``"legacy"`` 2025-11-25."""
    catalogue = accounts_catalogue(tmp_path, flows=True)
    options = ServeOptions(
        mode=mode,  # type: ignore[arg-type]
        confirm=ConfirmSettings(level=level, **settings),
        resources=True,
        base_url=UPSTREAM,
    )
    runtime = build_runtime(catalogue, options, environ=ENV, transport=fake.transport())
    async with runtime:
        registry = build_registry(catalogue, runtime, None)
        server = build_bridge_server(
            catalogue, registry, mode=mode, redact=runtime.credentials.redact, runtime=runtime, options=options
        )
        callback = user if user is not None else None
        async with Client(server, mode=era, elicitation_callback=callback) as client:
            yield client


def sent(fake: FakeUpstream) -> list[str]:
    """What reached the upstream: ``"METHOD /path"`` (the query, with its credential, left out)."""
    return [f"{r.method} {r.raw_path}" for r in fake.requests]


def text(result: mcp_types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))
