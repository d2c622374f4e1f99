"""No text encoding of a secret reaches the model (P26): UTF-16/32, Latin-1, hex, JSON numbers.

An upstream that echoes the API key may answer in any charset, declared or not, right or wrong.
The bridge decodes a text answer with its declared charset (UTF-8 by default), so UTF-16 or
UTF-32 read as UTF-8 shows the key with NULs between its characters, and the wrong byte order
shows it shifted into other code points: either is one line of Python away from the key. Every
case here goes through the real bridge (tools, discovery and code mode) to a real loopback
upstream; the model's view is searched in every reading a reader could make of it.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any
from urllib.parse import parse_qsl, unquote

import anyio
import mcp_types
import pytest

from bridge.contract.catalogue import EnvVar, SecurityScheme
from bridge.modes.codemode import RUN_QUERY
from bridge.modes.discovery import CALL
from bridge.secrets.credentials import Credentials
from tests.security.fault_server import Attempt, Fault, FaultServer
from tests.security.harness import ENV, QUERY_SECRET, SECRET, bridge_client

pytestmark = pytest.mark.anyio

SURROUNDING = "you sent {} and nothing else"

# (how the upstream writes the echo, the Content-Type it declares, None: no header)
ENCODINGS: list[tuple[str, str | None]] = [
    ("utf-8", "text/plain"),
    ("utf-16-le", "text/plain"),
    ("utf-16-be", "text/plain"),
    ("utf-16", "text/plain"),  # with a BOM
    ("utf-32-le", "text/plain"),
    ("utf-32-be", "text/plain"),
    ("utf-32", "text/plain"),
    ("utf-16-le", "text/plain; charset=utf-16le"),  # declared right
    ("utf-16-be", "text/plain; charset=utf-16le"),  # declared with the wrong byte order
    ("utf-32-be", "text/plain; charset=utf-16"),
    ("utf-16-le", "text/plain; charset=iso-8859-1"),
    ("utf-16-le", "text/html"),
    ("utf-16-le", "application/xml"),
    ("utf-16-le", None),
    ("utf-32-be", None),
    ("utf-16-le", "application/octet-stream"),
    ("utf-16-be", "image/png"),
    ("utf-16-le", "application/json"),  # not JSON in UTF-8, and json.loads reads UTF-16
    ("latin-1", "text/plain; charset=iso-8859-1"),
    ("hex", "text/plain"),
    ("HEX", "text/plain"),
]
CASES = [f"{encoding}|{media}" for encoding, media in ENCODINGS]


def spelled(text: str, encoding: str) -> bytes:
    if encoding == "hex":
        return text.encode().hex().encode()
    if encoding == "HEX":
        return text.encode().hex().upper().encode()
    return text.encode(encoding)


def echo(attempt: Attempt) -> Fault:
    """The API key (and the query key) sent, echoed in the encoding the request's ``id`` names."""
    case = unquote(attempt.target.split("?", 1)[0].rsplit("/", 1)[-1])
    encoding, _, media = case.partition("|")
    sent = dict((k.lower(), v) for k, v in attempt.headers)
    query = dict(parse_qsl(attempt.target.partition("?")[2]))
    text = SURROUNDING.format(sent.get("x-api-key", "") + " " + query.get("api_key", ""))
    status = 500 if query.get("q") == "error" else 200
    headers = () if media == "None" else (("Content-Type", media),)
    return Fault("ok", status=status, body=spelled(text, encoding), headers=headers)


def readings(texts: list[str]) -> list[str]:
    """What a reader can make of the model's view: as it is, without NULs, its code units
    swapped back into bytes (either byte order), hex decoded."""
    out: list[str] = []
    for text in texts:
        out += [text, text.replace("\0", "")]
        for wide in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"):
            raw = text.encode(wide, "surrogatepass")
            out.append(raw.replace(b"\0", b"").decode("latin-1"))
            out.append(raw.decode("utf-8", "replace").replace("\0", ""))
    for text in list(out):
        for run in re.findall(r"(?:[0-9A-Fa-f]{2})+", text):
            out.append(bytes.fromhex(run).decode("latin-1"))
    return out


def model_view(result: mcp_types.CallToolResult) -> list[str]:
    texts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            texts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            texts.append(base64.b64decode(block.data).decode("latin-1"))
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            data = resource.blob if isinstance(resource, mcp_types.BlobResourceContents) else None
            texts.append(base64.b64decode(data).decode("latin-1") if data else resource.model_dump_json())
    if result.structured_content is not None:
        texts.append(json.dumps(result.structured_content, ensure_ascii=False))
        texts.append(json.dumps(result.structured_content))
    return texts


def assert_no_secret(texts: list[str], secrets: tuple[str, ...] = (SECRET, QUERY_SECRET)) -> None:
    seen = readings(texts)
    assert any("you sent" in r or "nothing else" in r for r in seen), texts  # the echo did come through
    for secret in secrets:
        for form in (secret, secret[::-1], secret.encode().hex(), ",".join(str(ord(c)) for c in secret)):
            for reading in seen:
                assert form not in reading and form.lower() not in reading.lower(), (form, reading[:300])


async def _call(client: Any, serve_mode: str, case: str, q: str) -> mcp_types.CallToolResult:
    if serve_mode == "tools":
        return await client.call_tool("getItem", {"id": case, "q": q})
    if serve_mode == "discovery":
        arguments = {"name": "getItem", "arguments": {"id": case, "q": q}}
        return await client.call_tool(CALL, arguments)
    # A program that had the key would give it away reversed, re-encoded or joined: none of it may.
    program = (
        f"r = await getItem(id={case!r}, q={q!r})\n"
        "s = str(r).replace('\\x00', '')\n"
        "[s, s[::-1], ','.join([str(ord(c)) for c in s]), '-'.join(s), s.upper()]\n"
    )
    return await client.call_tool(RUN_QUERY, {"code": program})


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("serve_mode", ["tools", "discovery", "code"])
async def test_a_secret_echoed_in_any_text_encoding_never_reaches_the_model(serve_mode: str, case: str) -> None:
    async with FaultServer(echo) as server:
        async with bridge_client(server.url + "/v1", serve_mode=serve_mode) as client:
            with anyio.fail_after(20):
                result = await _call(client, serve_mode, case, "ok")
    assert server.attempts and SECRET in dict(server.attempts[0].headers).values()  # the key went upstream
    view = model_view(result)
    if serve_mode == "code":
        assert not result.is_error, view
    assert_no_secret(view)


@pytest.mark.parametrize("case", [c for c in CASES if "text/" in c or "xml" in c])
async def test_a_secret_echoed_in_any_encoding_in_an_error_body_never_reaches_the_model(case: str) -> None:
    async with FaultServer(echo) as server:
        async with bridge_client(server.url + "/v1") as client:
            with anyio.fail_after(20):
                result = await client.call_tool("getItem", {"id": case, "q": "error"})
    assert result.is_error
    view = model_view(result)
    assert "HTTP 500" in view[0]
    assert_no_secret(view)


NUMERIC_KEY = "73917465028461937"


def numeric_echo(attempt: Attempt) -> Fault:
    key = dict((k.lower(), v) for k, v in attempt.headers).get("x-api-key", "0")
    body = f'{{"n": {key}, "f": {int(key[:9])}.0, "nested": [{{"k": {key}}}], "s": "you sent a number"}}'
    status = 500 if "error" in attempt.target else 200
    return Fault("ok", status=status, body=body.encode(), headers=(("Content-Type", "application/json"),))


@pytest.mark.parametrize("serve_mode", ["tools", "discovery", "code"])
@pytest.mark.parametrize("q", ["ok", "error"])
async def test_an_all_digit_secret_echoed_as_a_json_number_is_masked(serve_mode: str, q: str) -> None:
    environ = {**ENV, "HARDENING_KEY_API_KEY": NUMERIC_KEY, "HARDENING_QKEY_API_KEY": NUMERIC_KEY[:9] + "00"}
    async with FaultServer(numeric_echo) as server:
        async with bridge_client(server.url + "/v1", environ=environ, serve_mode=serve_mode) as client:
            with anyio.fail_after(20):
                result = await _call(client, serve_mode, "n", q)
    view = model_view(result)
    assert any("you sent" in v for v in view), view
    for text in readings(view):
        assert NUMERIC_KEY not in text and NUMERIC_KEY[::-1] not in text, text
        assert NUMERIC_KEY[:9] + "00" not in text
    if q == "ok" and serve_mode != "code":
        assert result.structured_content is not None
        assert result.structured_content["n"] == "***"


def _redactor(secret: str) -> Credentials:
    scheme = SecurityScheme(type="apiKey", location="header", param_name="X-K", env=(EnvVar(role="value", name="K"),))
    return Credentials({"k": scheme}, {"K": secret})


@pytest.mark.parametrize("secret", ["SECRET-canary-7d41e0b2", "pässwörd-€-long", "日本語のひみつのかぎ"])
@pytest.mark.parametrize("wide", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "utf-16", "utf-32"])
@pytest.mark.parametrize("shift", [0, 1, 2, 3])
def test_mask_bytes_finds_a_wide_secret_at_any_alignment_in_any_byte_order(secret: str, wide: str, shift: int) -> None:
    redact = _redactor(secret).redact
    data = b"\x89PNG\x00" + b"\x07" * shift + f"<{secret}>".encode(wide) + b"\x00\xff"
    masked, count = redact.mask_bytes(data)
    assert count >= 1 and len(masked) == len(data)
    for reading in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"):
        for start in range(4):
            assert secret not in masked[start:].decode(reading, "replace")
    assert secret not in masked.replace(b"\0", b"").decode("latin-1")


@pytest.mark.parametrize("secret", ["SECRET-canary-7d41e0b2", "pässwörd-long"])
def test_text_redaction_reads_between_nuls_and_hex(secret: str) -> None:
    redact = _redactor(secret).redact
    for shown in (
        "\0".join(secret),
        "x\0" + "\0\0\0".join(secret) + "\0\0\0y",
        json.loads(json.dumps("\0".join(secret))),
        secret.encode().hex(),
        "id " + secret.encode().hex().upper() + " end",
    ):
        out = redact(shown)
        assert secret not in out.replace("\0", "") and secret.encode().hex() not in out.lower(), out
        assert "***" in out
    assert redact("plain text\0with a NUL") == "plain text\0with a NUL"
