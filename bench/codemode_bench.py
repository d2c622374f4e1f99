"""Code mode bench: a program's own overhead on GitHub's stubs (1,223 operations).

    .venv/bin/python -m bench.codemode_bench [--spec PATH]     # writes bench/CODEMODE.md

GitHub's spec (tests/node, ``@octokit/openapi``) is generated into bench/out/codemode/github
(with its api.pyi). A one-call ``run_query`` program then runs through ``CodeMode.run`` (the
tool's whole path: names scanned, stub subset, sandbox checkout, type check, run, the call core,
the result trimmed), against an upstream that answers in-process at once (httpx.MockTransport);
the upstream's own time is measured in its handler and subtracted. 5 warm-up runs, then 31
timed; medians. Rows: a program that type-checks and runs, one refused by the type checker, and
``serve spec.json`` (no api.pyi) building the stubs of one function the first time and cached.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

import httpx

from bench.common import BENCH_DIR, machine_info, md_table, replace_section

REPORT = BENCH_DIR / "CODEMODE.md"
OUT = BENCH_DIR / "out" / "codemode" / "github"
WARMUP = 5
RUNS = 31
PROGRAM = "repo = await repos_get(owner='octocat', repo='hello')\nrepo['full_name']\n"
TYPE_ERROR = "repo = await repos_get(owner='octocat', repo=1)\nrepo['full_name']\n"
SKELETON = "# Code mode bench\n\nWritten by `python -m bench.codemode_bench` (see its docstring).\n"


def _package(spec: Path) -> Path:
    from generator.generate import generate
    from generator.options import GenerateOptions

    if not (OUT / "api.pyi").is_file():
        generate(str(spec), OUT, GenerateOptions())
    return OUT


async def _measure(package: Path | None) -> dict[str, float]:
    from bridge.calls.runtime import HttpRuntime
    from bridge.modes.codemode import CodeMode
    from bridge.modes.sandbox import Sandbox
    from bridge.modes.stubsource import stub_source
    from bridge.serving.assemble import build_registry
    from bridge.serving.package import load_catalogue
    from bridge.tools.errors import ToolError
    from bridge.tools.registry import ToolContext

    catalogue = load_catalogue(OUT)
    upstream: list[float] = []

    body = b'{"id": 1, "full_name": "octocat/hello", "name": "hello"}'

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        started = time.perf_counter()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})
        upstream.append(time.perf_counter() - started)

    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    runtime = HttpRuntime.create(catalogue, base_url="https://api.github.test", transport=transport)
    sandbox = Sandbox()
    mode = CodeMode(catalogue, build_registry(catalogue, runtime, None), runtime, stub_source(package, []), sandbox)
    if package is None:
        mode.stubs = stub_source(None, catalogue.tools)
    results: dict[str, float] = {}
    try:
        ctx = ToolContext(tool_name="run_query")
        if package is None:
            started = time.perf_counter()
            await mode.run(PROGRAM, ctx, read_only=True)
            results["first program (stubs built)"] = time.perf_counter() - started
        for label, program, fails in (("one call", PROGRAM, False), ("type error", TYPE_ERROR, True)):
            times = []
            for i in range(WARMUP + RUNS):
                upstream.clear()
                started = time.perf_counter()
                try:
                    result = await mode.run(program, ctx, read_only=True)
                    assert not fails and not result.is_error, result
                except ToolError as exc:
                    assert fails, exc
                if i >= WARMUP:
                    times.append(time.perf_counter() - started - sum(upstream))
            results[label] = statistics.median(times)
    finally:
        await sandbox.aclose()
        await runtime.aclose()
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--spec", type=Path, default=None)
    args = parser.parse_args()
    if args.spec is None:
        from tests.node_tools import github_spec

        args.spec = github_spec()
    package = _package(args.spec)
    size = (package / "api.pyi").stat().st_size
    with_package = asyncio.run(_measure(package))
    built = asyncio.run(_measure(None))
    rows = [[f"package api.pyi ({size // 1024} KB): {k}", f"{v * 1000:.1f}"] for k, v in with_package.items()]
    rows += [[f"serve spec (stubs built per function set): {k}", f"{v * 1000:.1f}"] for k, v in built.items()]
    body = (
        f"{machine_info()}\n\nMedian of {RUNS} runs after {WARMUP} warm-ups, upstream time excluded "
        "(target: 50 ms or less).\n\n" + md_table(["program", "ms"], rows)
    )
    replace_section(REPORT, "codemode", body, SKELETON)
    print(body)


if __name__ == "__main__":
    main()
