"""Secrets never leave the bridge (P26, P27; test plan row 32).

Policy: the configured secret values (and their encoded forms) are redacted from *all*
upstream-derived text, success results included — an API that echoes the request back is still
upstream data, and the model must not learn the key from it. Structural credential spellings
(URL userinfo, token-like query parameters, Authorization/Cookie header lines, long Bearer
tokens) are scrubbed whatever their value.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bridge.redact as redact_module
from bridge.binding import EnvVar, SecurityScheme
from bridge.credentials import Credentials, scrub
from bridge.server import UNEXPECTED_ERROR_MESSAGE
from bridge.upstream import Upstream
from tests.security.fault_server import Attempt, Fault, FaultServer, closed_port
from tests.security.harness import QUERY_SECRET, SECRET, bridge_client, result_text

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
SECRETS = (SECRET, QUERY_SECRET)


def assert_clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text
        assert secret[:12] not in text  # no recognisable fragment either


def _echo_as_text(status: int) -> Any:
    def fault(attempt: Attempt) -> Fault:
        lines = [f"{attempt.method} {attempt.target} HTTP/1.1", *(f"{n}: {v}" for n, v in attempt.headers)]
        return Fault.ok("\r\n".join(lines).encode(), status=status, content_type="text/plain")

    return fault


# ------------------------------------------------------------------ in process, every channel


@pytest.mark.parametrize(
    "fault",
    [Fault.echo(401), Fault.echo(500), Fault.echo(422), _echo_as_text(500), _echo_as_text(403), Fault.echo(200)],
)
async def test_secrets_echoed_by_the_upstream_never_reach_the_model(fault: Any) -> None:
    async with FaultServer(fault) as server:
        async with bridge_client(server.url + "/v1") as client:
            with anyio.fail_after(10):
                results = [
                    await client.call_tool("getItem", {"id": "1", "q": "x"}),
                    await client.call_tool("createItem", {"name": "n"}),
                ]
    first = server.attempts[0]
    assert server.count == 2
    assert first.header("x-api-key") == SECRET and QUERY_SECRET in first.target  # the secrets were really sent
    for result in results:
        text = result_text(result)
        assert_clean(text)
        assert "***" in text


async def test_secrets_never_reach_logs_even_at_debug_level(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpcore", "bridge"):
        caplog.set_level(logging.DEBUG, logger=name)
    async with FaultServer(Fault.echo(500), Fault.redirect("http://127.0.0.1:1/x"), Fault.reset()) as server:
        async with bridge_client(server.url + "/v1") as client:
            with anyio.fail_after(10):
                for n in range(3):
                    await client.call_tool("getItem", {"id": str(n)})
    assert "HTTP Request" in caplog.text  # httpx did log the URL (with the query key) ...
    assert_clean(caplog.text)  # ... redacted
    assert "api_key=***" in caplog.text


async def test_a_bridge_bug_gives_a_generic_message_and_a_redacted_traceback(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken_send(self: Upstream, request: Any) -> Any:
        raise RuntimeError(f"bug while sending {request.url} with key {SECRET}")

    monkeypatch.setattr(Upstream, "send", broken_send)
    async with FaultServer(Fault.echo()) as server:
        async with bridge_client(server.url + "/v1") as client:
            with anyio.fail_after(10):
                result = await client.call_tool("getItem", {"id": "1"})
    assert result.is_error and result_text(result) == UNEXPECTED_ERROR_MESSAGE.format(name="getItem")
    assert "RuntimeError" in caplog.text and "Traceback" in caplog.text
    assert_clean(caplog.text)


async def test_connection_errors_name_the_origin_without_the_query_key() -> None:
    async with bridge_client(f"http://127.0.0.1:{closed_port()}/v1") as client:
        with anyio.fail_after(10):
            result = await client.call_tool("getItem", {"id": "1"})
    text = result_text(result)
    assert result.is_error and "could not connect" in text
    assert_clean(text)
    assert "api_key" not in text


_SCRUB_SAMPLES = (
    "GET https://alice:hunter2@api.example/x",
    "see /cb?access_token=abc&page=2",
    "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l\r\nAccept: */*",
    '{"Cookie": "sid=abc", "ok": 1}',
    "{'authorization': 'Bearer abc'}",
    "token Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig",
    "X-API-\u212aEY: k",
    "PROXY-AUTHORIZATION: x",
)


def test_structural_credential_spellings_are_scrubbed_whatever_their_value() -> None:
    samples = {
        "GET https://alice:hunter2@api.example/x": "GET https://***@api.example/x",
        "see /cb?access_token=abc&page=2": "see /cb?access_token=***&page=2",
        "/dl?X-Amz-Signature=abc123&X-Amz-Credential=AK%2F1": "/dl?X-Amz-Signature=***&X-Amz-Credential=***",
        "/x?api_key=k1;sig=s2&token=t3": "/x?api_key=***;sig=***&token=***",
        "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l\r\nAccept: */*": "Authorization: ***\r\nAccept: */*",
        '{"Cookie": "sid=abc", "ok": 1}': '{"Cookie": "***", "ok": 1}',
        "{'authorization': 'Bearer abc'}": "{'authorization': '***'}",
        "token Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig": "token Bearer ***",
    }
    for raw, expected in samples.items():
        assert scrub(raw) == expected
    for harmless in ("page?page_token=abc", "basic usage", "bob@example.com", "the authorization: pending"):
        assert scrub(harmless) == harmless
    anonymous = Credentials({}, {})
    assert anonymous.redact("Authorization: Bearer xyz") == "Authorization: ***"


_SCRUB_ALPHABET = "aAbBeErRtTiIoOnNzZkKcCxXyYpP@=:;&?/-_ .'\"\r\n\u212a\u0130\u0131"


@settings(max_examples=400, deadline=None, derandomize=True)
@given(text=st.text(alphabet=_SCRUB_ALPHABET, max_size=60) | st.sampled_from(_SCRUB_SAMPLES))
def test_scrub_prefilter_never_skips_a_string_a_pattern_would_change(text: str) -> None:
    """scrub() skips strings without its hint literals: the skip must be exact, never a leak."""
    assert scrub(text) == _scrub_without_prefilter(text)


def _scrub_without_prefilter(text: str) -> str:
    for pattern, replacement in redact_module._SCRUBS:
        text = pattern.sub(replacement, text)
    return text


def test_every_credential_header_name_carries_a_scrub_hint() -> None:
    for name in redact_module.CREDENTIAL_HEADERS:
        assert redact_module._SCRUB_HINT.search(name) is not None, name


# ------------------------------------------------------------- the canary, over stdio, end to end

CANARY = "SECRET-canary-5b0c1e9a77"


def _canary_app(seen: list[str]) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, PlainTextResponse, Response
    from starlette.routing import Route

    def headers_of(request: Request) -> dict[str, str]:
        seen.append(request.headers.get("x-api-key", ""))
        return dict(request.headers)

    async def pets(request: Request) -> Response:
        headers = headers_of(request)
        if request.method == "POST":
            return JSONResponse({"detail": "invalid", "headers": headers}, status_code=422)
        pet = {"id": 1, "name": headers.get("x-api-key", ""), "tag": json.dumps(headers)}
        return JSONResponse([pet])

    async def pet(request: Request) -> Response:
        headers = headers_of(request)
        pet_id = request.path_params["pet_id"]
        if pet_id == "1":
            return JSONResponse({"error": "unauthorized", "received": headers}, status_code=401)
        if pet_id == "2":
            dump = "\n".join(f"{k}: {v}" for k, v in headers.items())
            return PlainTextResponse(f"upstream crashed\n{dump}\nAuthorization: Bearer {CANARY}", status_code=500)
        if pet_id == "3":
            location = f"http://user:{CANARY}@127.0.0.1:1/x?api_key={CANARY}"
            return Response(status_code=302, headers={"location": location})
        return JSONResponse({"id": 4, "name": f"key is {headers.get('x-api-key')}", "status": "available"})

    async def inventory(request: Request) -> Response:
        return JSONResponse({"echo": headers_of(request).get("x-api-key", "")})

    return Starlette(
        routes=[
            Route("/v1/pets", pets, methods=["GET", "POST"]),
            Route("/v1/pets/{pet_id}", pet, methods=["GET", "DELETE"]),
            Route("/v1/pets/{pet_id}/wait", pet, methods=["GET"]),
            Route("/v1/store/inventory", inventory, methods=["GET"]),
        ]
    )


_DEBUG_WRAPPER = (
    "import logging, sys; "
    "logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format='%(levelname)s %(name)s: %(message)s'); "
    "from bridge.cli import main; sys.argv = ['mcp-bridge', 'serve', 'generated/petstore']; main()"
)


@pytest.mark.parametrize("debug", [False, True], ids=["default-logging", "debug-logging"])
async def test_canary_api_key_never_leaves_the_stdio_server(debug: bool) -> None:
    import uvicorn
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    seen: list[str] = []
    config = uvicorn.Config(_canary_app(seen), host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    upstream = uvicorn.Server(config)
    notifications: list[str] = []

    async def on_log(params: Any) -> None:
        notifications.append(json.dumps(params.model_dump(mode="json")))

    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        with anyio.fail_after(45):
            async with anyio.create_task_group() as tg:
                tg.start_soon(upstream.serve)
                while not upstream.started:
                    await anyio.sleep(0.02)
                port = upstream.servers[0].sockets[0].getsockname()[1]
                env = {
                    "PATH": os.environ.get("PATH", ""),
                    "PETSTORE_BASE_URL": f"http://127.0.0.1:{port}/v1",
                    "PETSTORE_API_KEY": CANARY,
                }
                args = ["-c", _DEBUG_WRAPPER] if debug else ["-m", "bridge", "serve", "generated/petstore"]
                params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(ROOT))
                texts: list[str] = []
                try:
                    async with Client(stdio_client(params, errlog=errlog), logging_callback=on_log) as client:
                        calls: list[tuple[str, dict[str, Any]]] = [
                            ("listPets", {}),
                            ("getPet", {"petId": 1}),
                            ("getPet", {"petId": 2}),
                            ("getPet", {"petId": 3}),
                            ("getPet", {"petId": 4}),
                            ("deletePet", {"petId": 2}),
                            ("waitForAdoption", {"petId": 2}),
                            ("createPet", {"name": "x"}),
                            ("getInventory", {}),
                            ("getPet", {"petId": "not-a-number"}),
                        ]
                        for name, arguments in calls:
                            result = await client.call_tool(name, arguments)
                            texts.append(result_text(result))
                        try:
                            await client.call_tool("noSuchTool", {})
                        except Exception as exc:  # the JSON-RPC error for an unknown tool
                            texts.append(str(exc))
                finally:
                    upstream.should_exit = True
        errlog.seek(0)
        stderr = errlog.read()
    assert seen.count(CANARY) >= 8  # the canary really went upstream (getInventory is anonymous)
    everything = "\n".join([*texts, stderr, *notifications])
    assert CANARY not in everything and CANARY[:14] not in everything
    assert "***" in "\n".join(texts)


def test_redaction_also_covers_url_encoded_and_json_escaped_forms() -> None:
    secret = 'p@ss/wörd"+&'
    scheme = SecurityScheme(type="apiKey", location="query", param_name="key", env=(EnvVar(role="value", name="K"),))
    credentials = Credentials({"k": scheme}, {"K": secret})
    for form in (secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]):
        assert credentials.redact(f"x {form} y") == "x *** y"
