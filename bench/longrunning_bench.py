"""What long-running operations, confirmations and resources cost: ``python -m bench.longrunning_bench``.

Everything against the loopback jobs API (``tests/bridge/calls/longrunning/jobs_upstream.py``, uvicorn on
127.0.0.1, ``Retry-After: 0``), medians of repeated runs, the load average beside the figures:

- **a status check**: the bridge following a job that needs 41 checks, minus one that needs 1,
  per check, against the floor of a bare httpx GET of the same status URL;
- **resources/read against tools/call** of the same GET (``getReport``), in process;
- **a confirmed call against an unconfirmed one** (the elicitation round trip, in process);
- **FastMCP 4.2.3's resource template read** of the same GET over stdio, beside the bridge's over
  stdio, through the same bare client (``bench/common.py``'s ``StdioPeer``).

Writes ``bench/LONGRUNNING.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types

from bench.common import StdioPeer, child_env, fmt, md_table, median
from bridge.calls.longrunning.follow import FollowSettings
from bridge.confirm.policy import ConfirmSettings
from bridge.serving.assemble import ServeOptions
from tests.bridge.calls.longrunning.harness import jobs_client
from tests.bridge.calls.longrunning.jobs_upstream import API_KEY, serve_jobs

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "bench" / "LONGRUNNING.md"
NO_WAIT = FollowSettings(wait=60.0, deadline=120.0, first_interval=0.0, min_interval=0.0, max_interval=0.0)
FASTMCP_RESOURCES = """
import json, os, sys, warnings
warnings.simplefilter("ignore")
try:
    import httpx2 as httpx
except ImportError:
    import httpx
from fastmcp import FastMCP
from fastmcp.server.providers.openapi import MCPType, RouteMap

spec = json.loads(open(sys.argv[1], encoding="utf-8").read())
client = httpx.AsyncClient(base_url=os.environ["BENCH_BASE_URL"], headers={"X-API-Key": os.environ["BENCH_KEY"]})
maps = [RouteMap(methods=["GET"], pattern=r".*\\{.*\\}.*", mcp_type=MCPType.RESOURCE_TEMPLATE),
        RouteMap(methods=["GET"], pattern=r".*", mcp_type=MCPType.RESOURCE)]
FastMCP.from_openapi(openapi_spec=spec, client=client, name="bench", route_maps=maps).run(
    transport="stdio", show_banner=False)
"""


def load() -> str:
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


async def timed(calls: int, make: Any) -> list[float]:
    out = []
    for _ in range(calls):
        started = time.perf_counter()
        await make()
        out.append((time.perf_counter() - started) * 1000)
    return out


async def in_process(repeats: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    async with serve_jobs() as store:
        async with jobs_client(store, follow=NO_WAIT, options=ServeOptions(resources=True)) as client:
            for steps in (1, 41):  # warm-up
                await client.call_tool("startJob", {"kind": "inline", "steps": steps})
            short, long = [], []
            for _ in range(repeats):
                short.extend(await timed(1, lambda: client.call_tool("startJob", {"kind": "inline", "steps": 1})))
                long.extend(await timed(1, lambda: client.call_tool("startJob", {"kind": "inline", "steps": 41})))
            figures["per check (bridge)"] = (median(long) - median(short)) / 40
            tool = await timed(repeats * 10, lambda: client.call_tool("getReport", {"reportId": 2}))
            resource = await timed(repeats * 10, lambda: client.read_resource("jobs:///reports/2"))
            figures["tools/call getReport"] = median(tool)
            figures["resources/read getReport"] = median(resource)
        url = f"http://127.0.0.1:{store.port}/v1/jobs/job-1/status"
        async with httpx.AsyncClient(headers={"X-API-Key": API_KEY}) as bare:
            await bare.get(url)
            figures["per check (bare httpx GET)"] = median(await timed(repeats * 10, lambda: bare.get(url)))

        async def yes(ctx: Any, params: Any) -> mcp_types.ElicitResult:
            return mcp_types.ElicitResult(action="accept", content={"confirm": True})

        confirm = ServeOptions(confirm=ConfirmSettings(level="writes"))
        for label, options in (("unconfirmed startJob", ServeOptions()), ("confirmed startJob", confirm)):
            async with jobs_client(
                store, follow=NO_WAIT, mode="legacy", options=options, elicitation_callback=yes
            ) as client:
                await client.call_tool("startJob", {"kind": "inline", "steps": 1})
                figures[label] = median(
                    await timed(repeats * 5, lambda: client.call_tool("startJob", {"kind": "inline", "steps": 1}))
                )
    return figures


async def over_stdio(repeats: int) -> dict[str, float | str]:
    """The bridge's and FastMCP's resource template read of getReport, over stdio, same bare client."""
    from bench.peers import fastmcp_python, fastmcp_versions, spec_as_json

    figures: dict[str, float | str] = {}
    python = fastmcp_python()
    spec = spec_as_json(ROOT / "specs" / "jobs.yaml")
    async with serve_jobs() as store:
        base = f"http://127.0.0.1:{store.port}/v1"
        bridge_cmd = [sys.executable, "-m", "bridge", "serve", str(ROOT / "generated" / "jobs"), "--resources"]
        servers: list[tuple[str, list[str], dict[str, str], str]] = [
            ("mcp-bridge", bridge_cmd, child_env(JOBS_BASE_URL=base, JOBS_API_KEY=API_KEY), "jobs:///reports/2")
        ]
        if python is not None:
            script = ROOT / "bench" / "out" / "fastmcp_resources.py"
            script.parent.mkdir(parents=True, exist_ok=True)
            script.write_text(FASTMCP_RESOURCES.lstrip(), encoding="utf-8")
            env = child_env(BENCH_BASE_URL=base, BENCH_KEY=API_KEY)
            servers.append(("FastMCP", [str(python), str(script), str(spec)], env, ""))
            figures["FastMCP version"] = fastmcp_versions(python)
        for name, command, env, uri in servers:
            async with StdioPeer(command, env=env) as peer:
                await peer.initialize()
                if not uri:
                    listed = await peer.request("resources/templates/list", {})
                    template = next(
                        t["uriTemplate"] for t in listed["resourceTemplates"] if "reportId" in t["uriTemplate"]
                    )
                    uri = template.replace("{reportId}", "2")
                    figures["FastMCP template"] = template
                first = await peer.request("resources/read", {"uri": uri})
                assert "job-2" in json.dumps(first), first
                params = {"uri": uri}
                reads = await timed(repeats * 10, lambda: peer.request("resources/read", params))  # noqa: B023
                figures[f"{name} resources/read over stdio"] = median(reads)
    return figures


def report(local: dict[str, float], stdio: dict[str, float | str], repeats: int, load_before: str) -> str:
    floor = local["per check (bare httpx GET)"]
    check = local["per check (bridge)"]
    rows = [
        ["one status check, bridge (41-check job minus 1-check job, /40)", fmt(check), f"{check / floor:.2f}x"],
        ["one status check, bare httpx GET of the same URL (floor)", fmt(floor), "1.00x"],
        ["tools/call getReport (in process)", fmt(local["tools/call getReport"]), ""],
        [
            "resources/read of the same GET (in process)",
            fmt(local["resources/read getReport"]),
            f"{local['resources/read getReport'] / local['tools/call getReport']:.2f}x of tools/call",
        ],
        ["startJob, no --confirm (2025-11-25, in process)", fmt(local["unconfirmed startJob"]), ""],
        [
            "startJob with --confirm writes, accepted",
            fmt(local["confirmed startJob"]),
            f"+{local['confirmed startJob'] - local['unconfirmed startJob']:.2f} ms",
        ],
    ]
    ours = stdio.get("mcp-bridge resources/read over stdio")
    theirs = stdio.get("FastMCP resources/read over stdio")
    peer_rows = [["mcp-bridge", fmt(ours) if isinstance(ours, float) else "n/a", ""]]
    if isinstance(theirs, float) and isinstance(ours, float):
        best = "mcp-bridge" if ours <= theirs else "FastMCP"
        peer_rows.append(["FastMCP", fmt(theirs), f"{theirs / ours:.2f}x of mcp-bridge"])
        peer_rows[0 if best == "mcp-bridge" else 1][0] += " (best)"
    lines = [
        "# Long-running operations, confirmations, resources: what they cost",
        "",
        f"`python -m bench.longrunning_bench` (medians; {repeats} repetitions of the job pair, 10x that of the "
        f"calls); load average {load_before} before, {load()} after (2 noisy cores, shared).",
        "",
        md_table(["what", "median ms", "ratio"], rows),
        "",
        "A status check is one `GET` through the call core (credentials, limits, the response cap, the audit",
        "line) plus reading the status; the jobs API answers `Retry-After: 0` and the bench sets the minimum",
        "interval to 0 (the default is 0.5 s), so nothing waits between checks.",
        "",
        f"## resources/read of `getReport` over stdio, same bare client ({stdio.get('FastMCP version', 'no FastMCP')})",
        "",
        md_table(["server", "median ms", "ratio"], peer_rows),
        "",
        f"FastMCP's template: `{stdio.get('FastMCP template', 'n/a')}` (route maps: GET with a path slot -> "
        "resource template). Neither peer follows 202s or asks before writes, so those rows have no peer.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    before = load()
    local = anyio.run(in_process, args.repeats)
    stdio = anyio.run(over_stdio, args.repeats)
    text = report(local, stdio, args.repeats, before)
    REPORT.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
