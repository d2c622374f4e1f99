"""Serving over stdio: cold start, tools/list, peak RSS and per-call latency, the same for every server.

Every server is spawned by :class:`bench.common.StdioPeer` (a bare newline-delimited JSON-RPC
client, protocol 2025-11-25) and measured the same way:

- cold start: spawn -> ``initialize`` answered;
- ``tools/list``: the first call (lazy work included) and the median of 3 more, timed until the
  whole answer line has arrived (before the client parses it); its bytes;
- peak RSS: VmHWM of the server process (the largest of it and its children) after the calls;
- per call: for each of the target's call cases, ``warmup`` calls, then ``calls`` sequential
  ``tools/call`` of one read-only tool against a loopback upstream (:func:`upstream_app` under
  uvicorn, in its own process), and the server's CPU time per call (user + system, its child
  processes included): calls/s depends on how the host schedules three processes on two cores,
  CPU time much less. The first answer is checked against the tool's advertised
  ``outputSchema`` (:func:`output_check`), so a fast wrong answer does not pass for a fast one.

Beside them, in the same run: the SDK's import floor (``python -c "import mcp.server.lowlevel,
mcp.server.stdio"``), the SDK floor server (a low-level ``Server`` with one constant tool, over
stdio: the per-call floor the bridge adds to) and the same HTTP calls made directly with httpx.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import PYTHON, ROOT, StdioPeer, child_env, run_measured, started, wait_port
from bridge.cli.demo_upstream import free_port

IMPORT_FLOOR = "import mcp.server.lowlevel, mcp.server.stdio"

FLOOR_SERVER = """
import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOL = types.Tool(name="constant", input_schema={"type": "object", "properties": {}})


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])


server = Server("floor", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""

PET_JSON = b'{"id":1,"name":"Rex","tag":"dog","status":"available"}'
ZEN_TEXT = b"Keep it logically awesome."
REPO_BODY_ENV = "BENCH_REPO_BODY"  # file with the repository JSON (bench/github_repo.py), read once at start-up
_bodies: dict[str, bytes] = {}


def _route(path: str) -> tuple[bytes, bytes]:
    parts = path.strip("/").split("/")
    if path.endswith("/zen"):
        return ZEN_TEXT, b"text/plain; charset=utf-8"
    if "/pets/" in path:
        return PET_JSON, b"application/json"
    if len(parts) == 3 and parts[0] == "repos" and "repo" in _bodies:
        return _bodies["repo"], b"application/json"
    return b"{}", b"application/json"


async def upstream_app(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
    """A minimal fast REST upstream: a pet for ``.../pets/<id>``, text for ``/zen``, the repository
    JSON for ``/repos/<owner>/<repo>`` (when ``$BENCH_REPO_BODY`` names it), ``{}`` otherwise."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if os.environ.get(REPO_BODY_ENV):
                    _bodies["repo"] = Path(os.environ[REPO_BODY_ENV]).read_bytes()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body, media = _route(scope["path"])
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", media), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Upstream:
    """:func:`upstream_app` under uvicorn on a free 127.0.0.1 port, in its own process."""

    def __init__(self, repo_body: Path | None = None) -> None:
        self.port = free_port()
        self.repo_body = repo_body
        self._ctx: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Upstream:
        cmd = [
            PYTHON,
            "-m",
            "uvicorn",
            "bench.serve_bench:upstream_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--log-level",
            "warning",
            "--no-access-log",
        ]
        env = child_env(**({REPO_BODY_ENV: str(self.repo_body)} if self.repo_body else {}))
        self._ctx = started(cmd, cwd=ROOT, env=env)
        proc = self._ctx.__enter__()
        try:
            wait_port(self.port, 20, proc)
        except BaseException:
            self._ctx.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._ctx.__exit__(None, None, None)


Finder = Callable[[Sequence[Mapping[str, Any]]], str | None]


@dataclass(frozen=True)
class CallCase:
    """One tool call measured on every server: the tool (found by name), its arguments, and the
    upstream path the same call reaches (for the direct-httpx floor)."""

    key: str
    find: Finder
    args: dict[str, Any] = field(default_factory=dict)
    direct: str = ""
    result: str = ""  # what the upstream answers, for the report


@dataclass
class Target:
    """One server to measure: how to start it and which calls to make."""

    label: str
    cmd: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    calls: list[CallCase] = field(default_factory=list)


@dataclass
class CallRun:
    """One call case on one server: latency, throughput, CPU, and whether the answer is what the tool promised."""

    tool: str = ""
    call_ms: float = float("nan")
    call_p50_ms: float = float("nan")
    call_p99_ms: float = float("nan")
    calls_per_s: float = float("nan")
    cpu_ms: float = float("nan")  # the server's own CPU time per timed call (all its processes)
    output: str = ""  # output_check of the first answer
    error: str = ""


@dataclass
class ServeRun:
    label: str
    cold_start_s: float = float("nan")
    tools_list_first_s: float = float("nan")
    tools_list_s: float = float("nan")
    tools: int = 0
    tools_bytes: int = 0
    rss_mb: float = float("nan")
    calls: dict[str, CallRun] = field(default_factory=dict)
    error: str = ""  # start-up or tools/list failure (then nothing else was measured)
    tool_list: list[dict[str, Any]] = field(default_factory=list, repr=False)


def tool_named(*names: str) -> Finder:
    """A finder: the first tool whose name, lowercased with punctuation removed, is one of ``names``."""
    wanted = {"".join(ch for ch in n.lower() if ch.isalnum()) for n in names}

    def find(tools: Sequence[Mapping[str, Any]]) -> str | None:
        for tool in tools:
            key = "".join(ch for ch in str(tool.get("name", "")).lower() if ch.isalnum())
            if key in wanted:
                return str(tool["name"])
        return None

    return find


VALID = "valid"
NO_SCHEMA = "no outputSchema"


def output_check(tool: Mapping[str, Any] | None, result: Mapping[str, Any]) -> str:
    """``valid`` when the answer's structuredContent validates against the tool's advertised
    outputSchema; otherwise what is wrong (the MCP spec requires structuredContent that conforms
    when a tool has an outputSchema)."""
    from jsonschema import Draft202012Validator

    if result.get("isError"):
        return "isError"
    schema = (tool or {}).get("outputSchema")
    if not schema:
        return NO_SCHEMA
    content = result.get("structuredContent")
    if content is None:
        return "no structuredContent"
    error = next(iter(Draft202012Validator(schema).iter_errors(content)), None)
    if error is None:
        return VALID
    return "invalid at /" + "/".join(str(p) for p in error.absolute_path) + ": " + str(error.message)[:100]


async def _timed_request(peer: StdioPeer, method: str, params: dict[str, Any], timeout: float) -> tuple[Any, float]:
    start = time.perf_counter()
    result = await peer.request(method, params, timeout=timeout)
    return result, peer.answered_at - start


async def _measure_call(
    peer: StdioPeer, tools: Sequence[Mapping[str, Any]], case: CallCase, *, calls: int, warmup: int
) -> CallRun:
    run = CallRun()
    name = case.find(tools)
    if name is None:
        run.error = "the tool to call was not found"
        return run
    run.tool = name
    params = {"name": name, "arguments": case.args}
    try:
        first = await peer.request("tools/call", params, timeout=60)
        run.output = output_check(next((t for t in tools if t.get("name") == name), None), first)
        if first.get("isError"):
            run.error = "isError: " + json.dumps(first.get("content"))[:300]
        for _ in range(warmup):
            await peer.request("tools/call", params, timeout=60)
        times = []
        cpu_before = peer.cpu_seconds()
        begin = time.perf_counter()
        for _ in range(calls):
            _, seconds = await _timed_request(peer, "tools/call", params, 60)
            times.append(seconds)
        total = time.perf_counter() - begin
        cpu_after = peer.cpu_seconds()
    except Exception as exc:
        run.error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        return run
    if cpu_before is not None and cpu_after is not None:
        run.cpu_ms = 1000 * (cpu_after - cpu_before) / calls
    run.calls_per_s = calls / total
    run.call_ms = 1000 * total / calls
    times.sort()
    run.call_p50_ms = 1000 * statistics.median(times)
    run.call_p99_ms = 1000 * times[min(len(times) - 1, int(0.99 * len(times)))]
    return run


async def measure(
    target: Target,
    *,
    calls: int,
    warmup: int = 20,
    keep_tools: bool = False,
    stderr: Path | None = None,
    timeout: float = 180,
) -> ServeRun:
    run = ServeRun(target.label)
    peer = StdioPeer(target.cmd, cwd=target.cwd, env=target.env, stderr=stderr)
    try:
        async with peer:
            run.cold_start_s = await peer.initialize(timeout=timeout)
            start = time.perf_counter()
            tools, run.tools_bytes = await peer.list_tools_raw(timeout=timeout)
            run.tools_list_first_s = peer.answered_at - start
            again = []
            for _ in range(3):
                start = time.perf_counter()
                await peer.list_tools_raw(timeout=timeout)
                again.append(peer.answered_at - start)
            run.tools_list_s = statistics.median(again)
            run.tools = len(tools)
            if keep_tools:
                run.tool_list = tools
            if calls:
                for case in target.calls:
                    run.calls[case.key] = await _measure_call(peer, tools, case, calls=calls, warmup=warmup)
            run.rss_mb = peer.peak_rss_mb() or float("nan")
    except Exception as exc:
        run.error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    return run


async def measure_direct(
    url: str, *, calls: int, warmup: int = 20, headers: Mapping[str, str] | None = None
) -> tuple[float, float]:
    """ms per sequential GET of ``url`` with one pooled httpx.AsyncClient (the upstream's own floor),
    and this process's CPU ms per GET: what one httpx request costs whoever sends it."""
    import httpx

    async with httpx.AsyncClient(headers=dict(headers or {}), trust_env=False) as client:
        for _ in range(warmup):
            (await client.get(url)).raise_for_status()
        cpu = time.process_time()
        start = time.perf_counter()
        for _ in range(calls):
            response = await client.get(url)
            response.raise_for_status()
        wall = time.perf_counter() - start
        return 1000 * wall / calls, 1000 * (time.process_time() - cpu) / calls


def import_floor() -> tuple[float, float]:
    """Seconds and peak RSS (MB) of ``python -c "import mcp.server.lowlevel, mcp.server.stdio"``."""
    result = run_measured([PYTHON, "-c", IMPORT_FLOOR], env=child_env(), timeout=120)
    return result.seconds, result.peak_rss_mb


FLOOR_CASE = CallCase("constant", tool_named("constant"))


def floor_target() -> Target:
    return Target("SDK floor server", [PYTHON, "-c", FLOOR_SERVER], env=child_env(), calls=[FLOOR_CASE])


def run(coro: Any) -> Any:
    return asyncio.run(coro)


if __name__ == "__main__":  # a smoke run: the floor server
    print(run(measure(floor_target(), calls=200)), file=sys.stderr)
