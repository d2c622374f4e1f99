"""Whatever an upstream answers (any status, any bytes as body, ``Content-Type``, ``Retry-After``,
``Content-Encoding``, ``Content-Length``), a tool call ends with its result or a specific tool
error: never the generic "failed unexpectedly" that marks a bridge bug."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from bridge.serving.assemble import ServeOptions, build_bridge_server, build_registry, build_runtime
from tests.security.harness import ENV, FAST, hardening_catalogue, result_text

BASE = "http://upstream.test/v1"
HEADER_BYTES = st.binary(max_size=60).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b"").replace(b"\0", b""))
TEXTISH = (
    st.sampled_from([b"application/json", b"text/plain", b"application/problem+json", b"\xb2", b""]) | HEADER_BYTES
)
BODIES = st.one_of(
    st.binary(max_size=300),
    st.sampled_from([b"[" * 5000, b'{"a":' * 3000, b'{"error": "x", "retry": 1e400}', b"\xef\xbb\xbf{}", b"null"]),
)


async def answered(status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> Any:
    async def upstream(scope: Any, receive: Any, send: Any) -> None:  # raw ASGI: the headers exactly as given
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    catalogue = hardening_catalogue()
    transport = httpx.ASGITransport(app=upstream)
    runtime = build_runtime(
        catalogue, ServeOptions(base_url=BASE), environ=dict(ENV), settings=FAST, transport=transport
    )
    try:
        registry = build_registry(catalogue, runtime, None)
        server = build_bridge_server(catalogue, registry, redact=runtime.credentials.redact, runtime=runtime)
        async with Client(server) as client:
            with anyio.fail_after(30):
                return await client.call_tool("getItem", {"id": "1"})
    finally:
        with anyio.CancelScope(shield=True):
            await runtime.aclose()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    status=st.sampled_from([200, 201, 204, 400, 404, 409, 413, 422, 429, 500, 502, 503]),
    content_type=TEXTISH,
    retry_after=st.none() | HEADER_BYTES | st.sampled_from([b"\xb2", b"9" * 400, b"9" * 5000]),
    encoding=st.none() | st.sampled_from([b"gzip", b"br", b"identity", b"\xb2"]),
    length=st.none() | st.sampled_from([b"\xb2", b"9" * 30, b"-1", b"9" * 5000]),
    body=BODIES,
)
def test_any_upstream_answer_is_a_result_or_a_specific_error(
    status: int,
    content_type: bytes,
    retry_after: bytes | None,
    encoding: bytes | None,
    length: bytes | None,
    body: bytes,
) -> None:
    headers = [(b"content-type", content_type)]
    headers += [(b"retry-after", retry_after)] if retry_after is not None else []
    headers += [(b"content-encoding", encoding)] if encoding is not None else []
    headers += [(b"content-length", length)] if length is not None else []
    result = anyio.run(answered, status, headers, body)
    assert "failed unexpectedly" not in result_text(result)
