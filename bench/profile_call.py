"""Where one tool call's CPU goes, in process: a generated package's tool run against a canned answer.

    .venv/bin/python -m bench.profile_call [--package bench/out/pkg/github] [--tool repos_get] [--calls 300]

The tool runs exactly as ``serve`` runs it (``make_http_tool`` over ``HttpRuntime``: argument
validation, request building, the upstream client, redaction, the output-schema check,
trimming), with an ``httpx.MockTransport`` answering the body run_all's fake upstream serves
(bench/github_repo.py for ``repos_get``). Prints CPU ms a call without and with cProfile, and the
profile's top entries by cumulative time. Nothing is written to the reports: this is for finding
what to optimise in bridge/, not a figure of the bench.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bench.common import GITHUB_SPEC, OUT_DIR, fake_environ


async def _profile(package: Path, tool_name: str, args: dict[str, object], body: bytes, calls: int, top: int) -> None:
    import httpx
    import mcp_types

    from bridge.calls.http_tools import make_http_tool
    from bridge.calls.runtime import HttpRuntime
    from bridge.serving.package import load_catalogue
    from bridge.tools.registry import ToolContext

    catalogue = load_catalogue(package)

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=httpx.ByteStream(body), headers={"content-type": "application/json"})

    transport = httpx.MockTransport(answer)
    environ = fake_environ(catalogue)
    runtime = HttpRuntime.create(catalogue, base_url="http://upstream.test", environ=environ, transport=transport)
    entry = next(e for e in catalogue.tools if e.name == tool_name)
    tool = make_http_tool(entry, runtime)
    context = ToolContext(tool_name=tool_name)
    async with runtime:
        result = await tool.run(args, context)
        assert isinstance(result, mcp_types.CallToolResult)
        text = "".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))
        print(f"{tool_name}: answer {len(body):,} B, result text {len(text):,} B, isError {result.is_error}")
        for _ in range(20):
            await tool.run(args, context)
        started = time.process_time()
        for _ in range(calls):
            await tool.run(args, context)
        print(f"CPU {(time.process_time() - started) * 1000 / calls:.3f} ms a call")
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(calls):
            await tool.run(args, context)
        profile.disable()
    pstats.Stats(profile, stream=sys.stdout).sort_stats("cumulative").print_stats(top)


def main(argv: Sequence[str] | None = None) -> int:
    from bench.github_repo import ARGS, write_body

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", type=Path, default=OUT_DIR / "pkg" / "github", help="made by run_all")
    parser.add_argument("--tool", default="repos_get")
    parser.add_argument("--args", default=json.dumps(ARGS), help="JSON arguments")
    parser.add_argument("--body", type=Path, default=None, help="the upstream's answer [default: the repository]")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--top", type=int, default=25)
    ns = parser.parse_args(argv)
    body = ns.body or write_body(GITHUB_SPEC, OUT_DIR / "upstream" / "repo.json")
    asyncio.run(_profile(ns.package, ns.tool, json.loads(ns.args), body.read_bytes(), ns.calls, ns.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
