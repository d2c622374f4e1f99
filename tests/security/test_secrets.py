"""Secrets never leave the bridge (P26, P27; test plan row 32).

Policy: the configured secret values (and their encoded forms) are redacted from *all*
upstream-derived text, success results included — an API that echoes the request back is still
upstream data, and the model must not learn the key from it. Structural credential spellings
(URL userinfo, token-like query parameters, Authorization/Cookie header lines, long Bearer
tokens) are scrubbed whatever their value.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus

import anyio
import mcp_types
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import bridge.secrets.scrub as scrub_module
from bridge.contract.catalogue import Catalogue, EnvVar, SecurityScheme
from bridge.secrets.credentials import Credentials
from bridge.secrets.scrub import scrub
from bridge.server.handlers import UNEXPECTED_ERROR_MESSAGE
from bridge.upstream.client import Upstream
from tests.security.fault_server import Attempt, Fault, FaultServer, closed_port
from tests.security.harness import (
    QUERY_SECRET,
    SECRET,
    bridge_client,
    catalogue_of,
    hardening_catalogue,
    result_text,
)

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
    for pattern, replacement in scrub_module.SCRUBS:
        text = pattern.sub(replacement, text)
    return text


def test_every_credential_header_name_carries_a_scrub_hint() -> None:
    for name in scrub_module.CREDENTIAL_HEADERS:
        assert scrub_module._SCRUB_HINT.search(name) is not None, name


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


# ------------------------------------------- every spelling of every secret, in every byte (P26)

BASIC_USER = "alice"
ECHO_SECRETS = {
    "hkey": "hK3y/+=&?%z~x",  # characters every encoder changes, and a '%' that is not an escape
    "qkey": "q/K3y+v=1&x:y",
    "bearer": "tok/en.B3arer+~_-x",
    "password": "pa:ss/w0rd&é",
}
ECHO_KINDS = ("hkey", "qkey", "bearer", "basic")
_AS = {"name": "as", "in": "query", "required": True, "schema": {"type": "string"}}
_BINARY = {"200": {"description": "ok", "content": {"application/octet-stream": {"schema": {"type": "string"}}}}}
ECHO_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Echo", "version": "1.0"},
    "servers": [{"url": "https://echo.example/v1"}],
    "components": {
        "securitySchemes": {
            "hkey": {"type": "apiKey", "in": "header", "name": "X-Echo-Key"},
            "qkey": {"type": "apiKey", "in": "query", "name": "echo_key"},
            "bearer": {"type": "http", "scheme": "bearer"},
            "basic": {"type": "http", "scheme": "basic"},
        }
    },
    "paths": {
        f"/{kind}": {
            "get": {"operationId": f"echo_{kind}", "security": [{kind: []}], "parameters": [_AS], "responses": _BINARY}
        }
        for kind in ECHO_KINDS
    },
}
# Binary answers: no text path, so only a byte-level redaction can catch the echo. "none": no
# Content-Type at all and a NUL byte (sniffed as binary).
BINARY_MEDIA = ("application/octet-stream", "image/png", "audio/mpeg", "application/zip", "application/pdf", "none")


@functools.cache
def echo_catalogue() -> Catalogue:
    return catalogue_of(ECHO_SPEC, "echo")


def echo_environ() -> dict[str, str]:
    env: dict[str, str] = {}
    for name, scheme in echo_catalogue().security_schemes.items():
        for var in scheme.env:
            value = {"value": ECHO_SECRETS.get(name, ""), "token": ECHO_SECRETS["bearer"], "username": BASIC_USER}
            env[var.name] = value.get(var.role, ECHO_SECRETS["password"])
    return env


def every_secret() -> list[str]:
    return [*ECHO_SECRETS.values(), f"{BASIC_USER}:{ECHO_SECRETS['password']}"]


def _html(value: str, entity: str) -> str:
    return "".join(c if c.isalnum() else entity.format(ord(c)) for c in value)


def echo_spellings(value: str) -> list[str]:
    """How an upstream may write ``value`` back: what a logging proxy or a debug page does."""
    data = value.encode()
    quoted = quote(value, safe="")
    spellings = [
        value,
        quoted,
        re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(), quoted),
        json.dumps(value)[1:-1].replace("/", "\\/"),
        _html(value, "&#x{:X};"),
        _html(value, "&#{};"),
    ]
    for k in range(3):  # inside a longer base64 text, at each alignment
        encoded = base64.b64encode(b"ab"[:k] + data + b"tail").decode()
        spellings += [encoded, encoded.translate(str.maketrans("+/", "-_"))]
    spellings += [data.hex(), data.hex().upper()]  # a hex dump
    # UTF-16/32 in either byte order, as a Latin-1 view of its bytes shows it (NULs between characters)
    spellings += [value.encode(wide).decode("latin-1") for wide in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")]
    return spellings


def detectable(value: str) -> set[str]:
    """Every spelling of ``value`` that must not come out, base64 ones as the characters that
    depend on ``value`` alone (found by encoding it between two different fillers)."""
    found = {s for s in echo_spellings(value)[:6]} | {_html(value, "&#x{:x};"), value.encode().hex()}
    for k in range(3):
        low = base64.b64encode(b"\0" * k + value.encode() + b"\0\0").decode()
        high = base64.b64encode(b"\xff" * k + value.encode() + b"\xff\xff").decode()
        core = max("".join(a if a == b else "\0" for a, b in zip(low, high, strict=True)).split("\0"), key=len)
        found |= {core, core.translate(str.maketrans("+/", "-_"))}
    return found


def _sent_values(attempt: Attempt) -> list[str]:
    values = [v for _, v in attempt.headers] + [v for _, v in parse_qsl(attempt.query)]
    for name, value in attempt.headers:
        scheme, _, credential = value.partition(" ")
        if name.lower() == "authorization":
            values.append(credential)
            if scheme.lower() == "basic":
                pair = base64.b64decode(credential).decode()
                values += [pair, pair.split(":", 1)[1]]
    return values


def spelling_echo(attempt: Attempt) -> Fault:
    """Answers with the request head and every value it carried, in every spelling, as binary."""
    media = dict(parse_qsl(attempt.query)).get("as", "application/octet-stream")
    head = f"{attempt.method} {attempt.target} HTTP/1.1\r\n" + "".join(f"{n}: {v}\r\n" for n, v in attempt.headers)
    parts = [b"\x89PNG\r\n\x1a\n\x00\x00", head.encode()]
    parts += [spelled.encode() for value in _sent_values(attempt) for spelled in echo_spellings(value)]
    body = b"\x00\n".join(parts) + bytes(range(256))
    return Fault("ok", body=body, headers=() if media == "none" else (("Content-Type", media),))


def every_byte(result: mcp_types.CallToolResult) -> list[str]:
    """Each block as the model's client can read it: texts, and blobs decoded (as Latin-1)."""
    out: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            out.append(block.text)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            out.append(base64.b64decode(block.data).decode("latin-1"))
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            assert isinstance(resource, mcp_types.BlobResourceContents)
            out.append(base64.b64decode(resource.blob).decode("latin-1"))
        else:
            out.append(block.model_dump_json())
    if result.structured_content is not None:
        out.append(json.dumps(result.structured_content, ensure_ascii=False))
    return out


def assert_no_spelling(texts: Sequence[str], secrets: Sequence[str]) -> None:
    for secret in secrets:
        for spelling in detectable(secret):
            for text in texts:
                # An UTF-8 secret in a Latin-1 view of bytes: search its bytes' spelling too; and
                # the text without NULs (UTF-16/32 read as bytes), its hex dump in either case.
                for view in (text, text.replace("\0", ""), text.lower()):
                    assert spelling not in view and spelling.encode().decode("latin-1") not in view, (secret, spelling)


@pytest.mark.parametrize("kind", ECHO_KINDS)
@pytest.mark.parametrize("media", BINARY_MEDIA)
async def test_no_spelling_of_any_secret_reaches_the_model_in_a_binary_answer(media: str, kind: str) -> None:
    async with FaultServer(spelling_echo) as server:
        async with bridge_client(server.url + "/v1", catalogue=echo_catalogue(), environ=echo_environ()) as client:
            with anyio.fail_after(10):
                result = await client.call_tool(f"echo_{kind}", {"as": media})
    sent = server.attempts[0]
    assert any(secret in _sent_values(sent) for secret in every_secret())  # a secret really went upstream
    assert not result.is_error
    expected = {"image/png": "image", "audio/mpeg": "audio"}.get(media, "resource")
    assert result.content[0].type == expected
    assert "overwritten" in result_text(result)  # the note block: the data was changed, and why
    assert_no_spelling(every_byte(result), every_secret())


_SECRET_TEXT = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E) | st.sampled_from("é€😀 "), min_size=8)
_NOISE = st.text(alphabet="aZ09fF%&#;xXu\\/+=-_ \"'é", max_size=10)


@settings(max_examples=120, deadline=None)
@given(secret=_SECRET_TEXT.filter(lambda s: s.strip() == s and "*" not in s), before=_NOISE, after=_NOISE)
@example(secret="#000000é", before="&", after="")  # "&" + "#000000…" reads as an HTML entity
def test_no_spelling_of_a_random_secret_survives_redaction(secret: str, before: str, after: str) -> None:
    scheme = SecurityScheme(type="apiKey", location="header", param_name="X-K", env=(EnvVar(role="value", name="K"),))
    redact = Credentials({"k": scheme}, {"K": secret}).redact
    for spelled in echo_spellings(secret):
        text = before + spelled + after
        assert_no_spelling([redact(text)], [secret])
        masked, _ = redact.mask_bytes(text.encode())
        assert_no_spelling([masked.decode("latin-1")], [secret])


# ------------------------------------------------------- short secrets do not corrupt answers

SHORT_ENV = {"HARDENING_KEY_API_KEY": "a", "HARDENING_QKEY_API_KEY": "tok"}


def _short_credentials() -> Credentials:
    return Credentials(hardening_catalogue().security_schemes, SHORT_ENV)


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "a", "next_page_token": "tok", "items": ["a", "b"], "token_count": 2}',
        "a cat and a dog; tokens: tok-ens, a.b, stock, a=1",
        "<a href='/x'>a</a>",
    ],
)
def test_short_secrets_leave_keys_and_words_alone(text: str) -> None:
    assert _short_credentials().redact(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("X-API-Key: a\r\nAccept: */*", "X-API-Key: ***\r\nAccept: */*"),
        ("GET /v1/items?api_key=tok&page=2", "GET /v1/items?api_key=***&page=2"),
        ("next=%2Fitems%3Fapi_key%3Dtok%26page%3D2", "next=%2Fitems%3Fapi_key%3D***%26page%3D2"),
        ('{"x-api-key": "a", "name": "a"}', '{"x-api-key": "***", "name": "a"}'),
        ('[["X-API-Key", "a"], ["name", "a"]]', '[["X-API-Key", "***"], ["name", "a"]]'),
        ("sent with Bearer tok.", "sent with Bearer ***."),
        ("Authorization=Bearer%20tok", "Authorization=Bearer%20***"),
    ],
)
def test_short_secrets_are_masked_in_credential_positions(text: str, expected: str) -> None:
    assert _short_credentials().redact(text) == expected


def test_a_short_secret_is_one_start_up_warning_naming_the_variable(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="bridge.credentials")
    _short_credentials()
    [record] = [r for r in caplog.records if r.name == "bridge.credentials"]
    message = record.getMessage()
    assert "HARDENING_KEY_API_KEY" in message and "HARDENING_QKEY_API_KEY" in message and "\n" not in message
    assert "tok" not in message.replace("token", "")  # names, never values


async def test_short_secrets_echoed_in_json_are_masked_and_the_data_is_intact() -> None:
    def fault(attempt: Attempt) -> Fault:
        return Fault.ok(
            {"name": "a", "next_page_token": "tok", "tags": ["a"], "headers": attempt.headers, "target": attempt.target}
        )

    async with FaultServer(fault) as server:
        async with bridge_client(server.url + "/v1", environ=SHORT_ENV) as client:
            with anyio.fail_after(10):
                result = await client.call_tool("getItem", {"id": "1"})
    assert server.attempts[0].header("x-api-key") == "a"
    data = result.structured_content
    assert data is not None and not result.is_error
    assert (data["name"], data["next_page_token"], data["tags"]) == ("a", "tok", ["a"])
    assert ["X-API-Key", "***"] in data["headers"]
    assert "api_key=***" in data["target"] and "tok" not in data["target"]


@pytest.mark.parametrize(
    "unit",
    ["%41", "%2541", "&amp;", "&#x2F;", "\\\\/", "\\u0041", ": a, ", "Bearer tok ", "q/K3y+v=1&x:", "YWxpY2U6cGE6"],
)
def test_redaction_time_grows_linearly_with_hostile_text(unit: str) -> None:
    """Every answer up to the response cap is redacted: no text shape may make it superlinear.

    Counted, not timed: the function calls redaction makes (Python and C, every ``str.find`` and
    regex search among them) for 4 times the text stay under 5 times as many. The CPU figures are
    bench/redact_bench.py's."""
    redact = Credentials(echo_catalogue().security_schemes, {**echo_environ(), "ECHO_HKEY_API_KEY": "a"}).redact
    small, big = unit * (8 * 1024 // len(unit)), unit * (32 * 1024 // len(unit))

    def calls(text: str) -> int:
        count = 0

        def profile(frame: Any, event: str, arg: Any) -> None:
            nonlocal count
            if event in ("call", "c_call"):
                count += 1

        sys.setprofile(profile)
        try:
            redact(text)
            redact.mask_bytes(text.encode())
        finally:
            sys.setprofile(None)
        return count

    calls(small)  # warm the caches
    assert calls(big) < 5 * calls(small)


def test_learning_fetched_tokens_masks_every_one_and_keeps_no_index_half_built() -> None:
    """Each fetched or exchanged token rebuilds the redactor's index (its cost, for 32 and for
    512 JWT-sized tokens, is bench/redact_bench.py's); every token is masked, and the index is
    swapped whole, so a text redacted meanwhile sees the old set or the new one."""
    redact = Credentials({}, {}).redact
    tokens = [f"eyJ{n:04d}" + "x.Y-z_" * 150 for n in range(512)]
    redact.learn(tokens[:32])
    before = redact._ix
    redact.learn(tokens)
    assert redact._ix is not before
    assert all(redact(f"got {token}.") == "got ***." for token in tokens[::37])
    assert redact.leaves_alone('{"a": "b"}')
