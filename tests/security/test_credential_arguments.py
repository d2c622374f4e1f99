"""P11 and P82 end to end: a loopback upstream records what reached it, on every surface.

Issue 31's three real cases in one small spec: Google Drive's ``key``/``oauth_token`` query
parameters beside OAuth, EC2's SigV4 fields on every operation, Telegram's ``provider_token``
body property and its bot token in the server URL (``/bot{token}``). The operator's credential
(a bearer token) must reach the upstream; the model's ``key``, ``X-Amz-Signature`` or
``provider_token`` never does, whether the model calls a tool, discovery's ``call_operation`` or
a code-mode program, and whatever the catalogue offers (one edited by hand included). The bot
token in the base URL is masked in the start-up line and in every answer that echoes the URL.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import mcp_types
import pytest
from mcp import Client

from bridge.calls.runtime import HttpRuntime
from bridge.contract.catalogue import Catalogue, ParamBinding
from bridge.modes.codemode import RUN_CODE
from bridge.modes.discovery import CALL
from bridge.serving.assemble import ServeOptions, build_bridge_server, build_registry, report_startup
from bridge.serving.package import load_catalogue
from generator.generate import generate
from generator.options import GenerateOptions
from tests.oidc import serving

pytestmark = pytest.mark.anyio

OPERATOR = "operator-bearer-7f3a91c2e5"
BOT_TOKEN = "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
MODEL = "model-chosen-9b8c7d6e5f"
SIGV4 = (
    "X-Amz-Security-Token",
    "X-Amz-Credential",
    "X-Amz-Signature",
    "X-Amz-Date",
    "X-Amz-Algorithm",
    "X-Amz-SignedHeaders",
    "X-Amz-Content-Sha256",
)


def spec(port: int) -> dict[str, Any]:
    string = {"type": "string"}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Bot", "version": "1"},
        "servers": [
            {
                "url": f"http://127.0.0.1:{port}/bot{{token}}",
                "variables": {
                    "token": {
                        "default": "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11",
                        "description": "Each bot is given a unique authentication token when it is created.",
                    }
                },
            }
        ],
        "security": [{"bearer": []}],
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "paths": {
            "/files": {
                "get": {
                    "operationId": "listFiles",
                    "parameters": [
                        {
                            "name": "key",
                            "in": "query",
                            "description": "API key. Your API key identifies...",
                            "schema": string,
                        },
                        {"name": "oauth_token", "in": "query", "description": "OAuth 2.0 token.", "schema": string},
                        {"name": "access_token", "in": "query", "schema": string},
                        {"name": "pageToken", "in": "query", "description": "The page token.", "schema": string},
                        {"name": "q", "in": "query", "schema": string},
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/instances": {
                "get": {
                    "operationId": "DescribeInstances",
                    "parameters": [
                        *({"name": name, "in": "header", "schema": string} for name in SIGV4),
                        {"name": "NextToken", "in": "query", "schema": string},
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/caches": {
                "delete": {
                    "operationId": "deleteCaches",
                    "parameters": [
                        {
                            "name": "key",
                            "in": "query",
                            "required": True,
                            "description": "A key for identifying the cache.",
                            "schema": string,
                        }
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/sendInvoice": {
                "post": {
                    "operationId": "sendInvoice",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["title", "provider_token"],
                                    "properties": {"title": string, "provider_token": string},
                                }
                            }
                        },
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            },
        },
    }


class Recorder:
    """A loopback upstream: records each request, answers with the URL it was called at (and fails
    ``/fail`` paths with it in the error)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        path = scope["raw_path"].decode()
        query = scope["query_string"].decode()
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.requests.append({"path": path, "query": query, "headers": headers, "body": body.decode()})
        url = f"http://127.0.0.1{path}" + (f"?{query}" if query else "")
        status = 400 if "q=fail" in query else 200
        payload = json.dumps({"url": url, "path": unquote(path), "error" if status == 400 else "ok": url}).encode()
        await send(
            {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
        )
        await send({"type": "http.response.body", "body": payload})

    def everything(self) -> str:
        return json.dumps(self.requests)


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def upstream() -> AsyncIterator[tuple[Recorder, int]]:
    recorder, port = Recorder(), _port()
    async with serving(recorder, port):
        yield recorder, port


def _package(tmp_path: Path, port: int) -> tuple[Path, list[str]]:
    path = tmp_path / "bot.json"
    path.write_text(json.dumps(spec(port)), encoding="utf-8")
    result = generate(str(path), tmp_path / "pkg", GenerateOptions())
    return tmp_path / "pkg", [f"{i.where}: {i.detail}" for i in result.issues]


@asynccontextmanager
async def client(catalogue: Catalogue, mode: str, **runtime: Any) -> AsyncIterator[Client]:
    environ = {"BOT_BEARER_TOKEN": OPERATOR}
    async with HttpRuntime.create(catalogue, server_variables={"token": BOT_TOKEN}, environ=environ, **runtime) as http:
        registry = build_registry(catalogue, http, None)
        server = build_bridge_server(
            catalogue,
            registry,
            mode=mode,
            redact=http.credentials.redact,
            runtime=http,  # type: ignore[arg-type]
        )
        async with Client(server) as mcp_client:
            yield mcp_client


def _seen(result: mcp_types.CallToolResult) -> str:
    return json.dumps(result.model_dump(mode="json"))


async def _call(mcp_client: Client, mode: str, tool: str, args: dict[str, Any]) -> mcp_types.CallToolResult:
    if mode == "tools":
        return await mcp_client.call_tool(tool, args)
    if mode == "discovery":
        return await mcp_client.call_tool(CALL, {"name": tool, "arguments": args})
    call = ", ".join(f"{name}={json.dumps(value)}" for name, value in args.items())
    return await mcp_client.call_tool(RUN_CODE, {"code": f"await {tool}({call})"})


async def test_generate_offers_no_credential_and_warns_once_naming_them(tmp_path: Path) -> None:
    package, issues = _package(tmp_path, 9)
    catalogue = load_catalogue(package)
    schemas = {entry.name: set(entry.input_schema.get("properties", {})) for entry in catalogue.tools}
    assert schemas["listFiles"] == {"pageToken", "q"}
    assert schemas["DescribeInstances"] == {"NextToken"}
    assert schemas["deleteCaches"] == {"key"}  # GitHub's cache key: described, and not as a credential
    assert schemas["sendInvoice"] == {"title"}
    (warning,) = [issue for issue in issues if issue.startswith("credentials:")]
    for name in ("key (query)", "oauth_token (query)", "X-Amz-Signature (header)", "provider_token (body)"):
        assert name in warning


@pytest.mark.parametrize("mode", ["tools", "discovery", "code"])
async def test_a_models_credential_never_reaches_the_upstream_and_the_operators_does(tmp_path: Path, mode: str) -> None:
    async with upstream() as (recorder, port):
        package, _ = _package(tmp_path, port)
        async with client(load_catalogue(package), mode) as mcp_client:
            refused = [
                await _call(mcp_client, mode, "listFiles", {"q": "a", "key": MODEL}),
                await _call(mcp_client, mode, "DescribeInstances", {"X_Amz_Signature": MODEL}),
                await _call(mcp_client, mode, "sendInvoice", {"title": "t", "provider_token": MODEL}),
            ]
            listed = await _call(mcp_client, mode, "listFiles", {"q": "a", "pageToken": "CAESBggDEgQ"})
            sent = await _call(mcp_client, mode, "sendInvoice", {"title": "t"})
            cache = await _call(mcp_client, mode, "deleteCaches", {"key": "npm-linux-x64"})
    assert all(result.is_error for result in refused)
    assert not listed.is_error and not sent.is_error and not cache.is_error, _seen(listed) + _seen(sent)
    assert MODEL not in recorder.everything()
    assert len(recorder.requests) == 3
    files, invoice, caches = recorder.requests
    assert caches["query"] == "key=npm-linux-x64"
    assert sorted(files["query"].split("&")) == ["pageToken=CAESBggDEgQ", "q=a"] and json.loads(invoice["body"]) == {
        "title": "t"
    }
    assert all(r["headers"]["authorization"] == f"Bearer {OPERATOR}" for r in recorder.requests)
    assert all(r["path"].startswith(f"/bot{BOT_TOKEN}/") for r in recorder.requests)


async def test_a_hand_edited_catalogue_offering_credentials_still_cannot_send_them(tmp_path: Path) -> None:
    async with upstream() as (recorder, port):
        package, _ = _package(tmp_path, port)
        catalogue = load_catalogue(package)
        entries = []
        for entry in catalogue.tools:  # as an older generator wrote them: key and X-Amz-Signature are arguments
            extra = (
                ParamBinding(arg="key", wire="key", location="query", style="form", explode=True),
                ParamBinding(arg="sig", wire="X-Amz-Signature", location="header", style="simple", explode=False),
            )
            schema = dict(entry.input_schema)
            schema["properties"] = {
                **schema.get("properties", {}),
                "key": {"type": "string"},
                "sig": {"type": "string"},
            }
            binding = dataclasses.replace(entry.binding, params=(*entry.binding.params, *extra))
            entries.append(dataclasses.replace(entry, input_schema=schema, binding=binding))
        edited = catalogue.model_copy(update={"tools": tuple(entries)})
        for mode in ("tools", "discovery", "code"):
            async with client(edited, mode) as mcp_client:
                for args in ({"q": "a", "key": MODEL}, {"q": "a", "sig": MODEL}):
                    result = await _call(mcp_client, mode, "listFiles", args)
                    assert result.is_error and "carries a credential" in _seen(result), _seen(result)
                assert not (await _call(mcp_client, mode, "listFiles", {"q": "b"})).is_error
    assert MODEL not in recorder.everything() and len(recorder.requests) == 3


@pytest.mark.parametrize("mode", ["tools", "discovery", "code"])
async def test_a_bot_token_in_the_base_url_never_reaches_the_model_in_an_answer_or_an_error(
    tmp_path: Path, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with upstream() as (recorder, port):
        package, _ = _package(tmp_path, port)
        async with client(load_catalogue(package), mode) as mcp_client:
            with caplog.at_level(logging.DEBUG):
                answer = await _call(mcp_client, mode, "listFiles", {"q": "a"})
                error = await _call(mcp_client, mode, "listFiles", {"q": "fail"})
    assert recorder.requests and all(BOT_TOKEN in r["path"] for r in recorder.requests)  # the upstream gets it
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "HTTP Request: GET http://127.0.0.1" in logged and BOT_TOKEN.split(":")[1] not in logged
    assert not answer.is_error and error.is_error
    secret_half = BOT_TOKEN.split(":")[1]
    for result in (answer, error):
        seen = _seen(result)
        assert "/***/files" in seen and secret_half not in seen and BOT_TOKEN not in seen, seen


async def test_the_start_up_line_masks_a_token_in_the_base_url(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    package, _ = _package(tmp_path, 9)
    catalogue = load_catalogue(package)
    secret_half = BOT_TOKEN.split(":")[1]
    for how in ("variable", "base_url"):
        caplog.clear()
        base = f"http://127.0.0.1:9/bot{BOT_TOKEN}" if how == "base_url" else None
        options = ServeOptions(base_url=base)
        variables = {"token": BOT_TOKEN} if how == "variable" else {}
        environ = {"BOT_BEARER_TOKEN": OPERATOR}
        async with HttpRuntime.create(catalogue, base_url=base, server_variables=variables, environ=environ) as http:
            with caplog.at_level(logging.INFO):
                report_startup(catalogue, http, options, environ)
        lines = [r.getMessage() for r in caplog.records if "upstream:" in r.getMessage()]
        assert len(lines) == 1 and "http://127.0.0.1:9/***" in lines[0], lines
        assert secret_half not in lines[0], lines
