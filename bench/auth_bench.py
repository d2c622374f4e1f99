"""Identity bench: the CPU cost of authentication per call, and the exchanged-token cache.

    .venv/bin/python -m bench.auth_bench            # writes bench/AUTH.md (needs Node for part 2)

1. **Overhead per call, warm caches.** What the HTTP transport does for one authenticated
   ``tools/call`` besides running the tool, in-process: the SDK's bearer check and the session
   admission's identity check (``ClientTokenVerifier.verify_token``, twice), the step-up guard
   (``ScopeGuard``: the body parsed, the tool's requirement looked up, the token's scopes
   checked) and the server's own scope check of the tool (``allows``). ``time.process_time``
   over 5,000 calls per run, 9 runs, median and worst run. The token was seen before (its
   signature is checked once; the first sight of a token is shown apart, per algorithm), and
   the audit line (formatted into a real handler) is shown apart as well.
2. **Exchanged-token cache.** 1,000 ``tools/call`` of one user through the bridge app (in
   process, streamable HTTP wire format) against the real ``oidc-provider``: its JWKS for the
   caller's token, its token endpoint for RFC 8693 exchange; the upstream verifies every token
   it gets. Exchanges are counted at the authorization server.
"""

from __future__ import annotations

import io
import json
import logging
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import anyio

from bench.common import BENCH_DIR, machine_info, md_table, replace_section

REPORT = BENCH_DIR / "AUTH.md"
RUNS = 9
CALLS = 5_000
FIRST_SIGHT = 300
CACHE_CALLS = 1_000
RESOURCE = "http://127.0.0.1:8000/mcp"
SKELETON = "# Identity bench\n\nWritten by `python -m bench.auth_bench` (see its docstring).\n"

Message = MutableMapping[str, Any]


async def _no_body() -> Message:
    return {"type": "http.disconnect"}


async def overhead() -> tuple[list[float], dict[str, float], float]:
    """ms of CPU per call for each run; first sight of a token per algorithm; the audit line."""
    from bridge.identity.client_auth import ClientAuth, ClientTokenVerifier
    from bridge.identity.scopes import allows, call_requirement
    from bridge.identity.step_up import ScopeGuard
    from tests.identity import ISSUER, JWKS_URL, FakeAuthorizationServer

    server = FakeAuthorizationServer(audience=RESOURCE)
    verifier = ClientTokenVerifier(
        ClientAuth(resource_url=RESOURCE, issuer=ISSUER, jwks_url=JWKS_URL, transport=server.transport())
    )
    # A catalogue's worth of tools: 60 readers, 40 writers.
    scopes_by_tool = {f"read_{i}": (frozenset({"pets:read"}),) for i in range(60)}
    scopes_by_tool |= {f"write_{i}": (frozenset({"pets:write"}),) for i in range(40)}
    requirement = call_requirement(scopes_by_tool)
    reached = [0]

    async def tool_app(scope: Message, receive: Callable[[], Awaitable[Message]], send: Any) -> None:
        await receive()
        reached[0] += 1

    guard = ScopeGuard(
        tool_app, path="/mcp", token_scopes=verifier.scopes, requirement=requirement, resource_url=RESOURCE
    )
    token = server.token(scope="pets:read pets:write", sub="alice", client_id="cli")
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "read_3", "arguments": {"petId": 1}}}
    ).encode()
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(b"authorization", f"Bearer {token}".encode()), (b"content-type", b"application/json")],
    }

    async def one_call() -> None:
        access = await verifier.verify_token(token)  # the SDK's bearer middleware
        await verifier.verify_token(token)  # session admission: whose session is this
        sent = iter([{"type": "http.request", "body": body, "more_body": False}])

        async def receive() -> Message:
            return next(sent, None) or await _no_body()

        async def send(message: Message) -> None:
            raise AssertionError("the guard refused a call the token allows")

        await guard(scope, receive, send)
        assert access is not None and allows(scopes_by_tool["read_3"], frozenset(access.scopes))

    await one_call()  # warms the JWKS and the verified-token cache
    runs = []
    for _ in range(RUNS):
        started = time.process_time()
        for _ in range(CALLS):
            await one_call()
        runs.append((time.process_time() - started) * 1000 / CALLS)
    assert reached[0] == RUNS * CALLS + 1

    first_sight = {}
    for alg in ("RS256", "ES256", "EdDSA"):
        fresh = [server.token(alg=alg, sub=f"u{i}", scope="pets:read") for i in range(FIRST_SIGHT)]
        started = time.process_time()
        for t in fresh:
            assert await verifier.verify_token(t) is not None
        first_sight[alg] = (time.process_time() - started) * 1000 / FIRST_SIGHT
    return runs, first_sight, audit_line_ms()


def audit_line_ms() -> float:
    """ms of CPU for one audit line, formatted by a stream handler (as ``serve`` logs it)."""
    from bridge.calls.context import CallContext, Identity
    from bridge.calls.operation import OperationCall
    from bridge.calls.runtime import HttpRuntime
    from tests.e2e.test_identity import catalogue

    audit = logging.getLogger("bridge.audit")
    handler = logging.StreamHandler(io.StringIO())
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    audit.addHandler(handler)
    audit.setLevel(logging.INFO)
    audit.propagate = False
    try:
        pets = catalogue()
        call = OperationCall(pets.tools[0], HttpRuntime.create(pets, base_url="http://127.0.0.1:9"))
        context = CallContext(surface="list_pets", identity=Identity("alice", "cli", frozenset({"pets:read"})))
        started = time.process_time()
        for _ in range(CALLS):
            call._audit(context, "200", 0.0123)
        return (time.process_time() - started) * 1000 / CALLS
    finally:
        audit.removeHandler(handler)
        audit.propagate = True


async def exchange_cache() -> dict[str, Any]:
    """1,000 calls of one user against the real oidc-provider: exchanges counted at the AS."""
    import httpx

    from bridge.identity.auth_options import ExchangeOptions
    from bridge.identity.client_auth import ClientAuth
    from bridge.serving.assemble import ServeOptions, build_bridge_server, build_http_app, build_registry, build_runtime
    from tests.bridge.fake_upstream import catalogue_from_spec, entry_from_spec
    from tests.e2e.test_identity import Bridge
    from tests.oidc import BRIDGE_CLIENT, UPSTREAM_AUDIENCE, CheckingUpstream, pets_spec, running_provider

    with tempfile.TemporaryDirectory() as folder:
        async with running_provider(Path(folder) / "oidc.log") as provider:
            spec = pets_spec("http://upstream.test/v1", provider.token_url)
            entries = tuple(entry_from_spec(spec, m, p) for p, m in (("/pets", "GET"), ("/pets", "POST")))
            catalogue = catalogue_from_spec(spec, entries, prefix="PETS")
            upstream = CheckingUpstream(provider.issuer)
            options = ServeOptions(
                transport="http",
                auth=ClientAuth(resource_url=RESOURCE, issuer=provider.issuer, jwks_url=provider.jwks_url),
                exchange=ExchangeOptions(provider.token_url, *BRIDGE_CLIENT, audience=UPSTREAM_AUDIENCE),
            )
            runtime = build_runtime(catalogue, options, environ={}, transport=httpx.ASGITransport(app=upstream))
            registry = build_registry(catalogue, runtime, None)
            server = build_bridge_server(catalogue, registry)
            app = build_http_app(server, registry, options)
            token = await provider.client_credentials("alice", resource=RESOURCE, scope="pets:read")
            async with server.session_manager.run(), runtime:
                transport = httpx.ASGITransport(app=app)
                async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
                    bridge = Bridge(client, None, None)  # type: ignore[arg-type]
                    headers = await bridge.session(token)
                    started = time.perf_counter()
                    for _ in range(CACHE_CALLS):
                        answer = await bridge.rpc(headers, "tools/call", {"name": "list_pets", "arguments": {}})
                        assert not Bridge.result(answer).get("isError"), answer.text
                    seconds = time.perf_counter() - started
            stats = await provider.stats()
    verified = [s for s in upstream.seen if s.claims is not None and s.claims["sub"] == "alice"]
    assert len(verified) == CACHE_CALLS and all(s.token != token for s in verified)
    exchanges = stats["exchanges"]
    return {
        "calls": CACHE_CALLS,
        "exchanges": exchanges,
        "hit_rate": 1 - exchanges / CACHE_CALLS,
        "ms_per_call": seconds * 1000 / CACHE_CALLS,
    }


def main() -> None:
    runs, first_sight, audit_ms = anyio.run(overhead)
    cache = anyio.run(exchange_cache)
    median = statistics.median(runs)
    body = "\n\n".join(
        [
            f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {machine_info()}.",
            f"### Authentication overhead per call, warm caches (CPU ms, {RUNS} runs of {CALLS:,} calls)\n\n"
            + md_table(
                ["path", "median", "worst run"],
                [["verify x2 + step-up guard + scope check", f"{median:.4f}", f"{max(runs):.4f}"]],
                "lrr",
            )
            + f"\n\nMedian: **{median:.4f} ms** of CPU per call (target: <= 0.3 ms).",
            "Apart (CPU ms each):\n\n"
            + md_table(
                ["what", "ms"],
                [[f"first sight of a token, {alg} signature checked", f"{ms:.4f}"] for alg, ms in first_sight.items()]
                + [["one audit line, formatted by a stream handler", f"{audit_ms:.4f}"]],
                "lr",
            ),
            f"### Exchanged-token cache, one user, {cache['calls']:,} calls, real oidc-provider\n\n"
            + md_table(
                ["calls", "exchanges at the AS", "cache hits", "wall ms per call (whole call, in process)"],
                [
                    [
                        str(cache["calls"]),
                        str(cache["exchanges"]),
                        f"{cache['hit_rate']:.1%}",
                        f"{cache['ms_per_call']:.2f}",
                    ]
                ],
                "rrrr",
            )
            + f"\n\nCache hits: **{cache['hit_rate']:.1%}** (target: >= 99%).",
        ]
    )
    replace_section(REPORT, "auth", body, SKELETON)
    print(body)


if __name__ == "__main__":
    main()
