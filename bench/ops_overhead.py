"""What operations cost a call (bench/OPS_OVERHEAD.md): telemetry off must be free, and on must be cheap.

The same petstore package and loopback upstream, one ``serve`` per variant, interleaved over
``ROUNDS`` rounds, medians:

- **before issue 23**: the source of the commit the branch started from (``BASE``), run from a
  ``git archive`` copy put first on ``PYTHONPATH`` (same virtualenv, same dependencies);
- **off** (the default), **--otel traces** (OTLP/HTTP to a loopback receiver),
  **--metrics-path** (Prometheus), **--limits-redis** (Debian's redis-server on a free port).

Per variant: cold start over stdio (spawn -> ``initialize`` answered), and per-call over stdio
(``serve_bench.measure``: ms and the server's CPU ms per sequential ``getPet``); over HTTP, the
server's CPU ms per call for one sequential client (:mod:`bench.mcp_load`, 2025-11-25 sessions).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import PYTHON, ROOT, child_env, machine_info, md_table, started, wait_port
from bench.mcp_load import run_load
from bench.scale_bench import load_average, upstream
from bench.serve_bench import CallCase, Target, measure, tool_named
from tests.services.otlp_sink import running_sink
from tests.services.processes import free_port
from tests.services.redis import running_redis

REPORT = ROOT / "bench" / "OPS_OVERHEAD.md"
PACKAGE = ROOT / "generated" / "petstore"
BASE = "e5c41da"  # issue 21's tip: the layout this branch builds on, without issue 23's runtime
ROUNDS = 5
CALLS = 400
HTTP_SECONDS = 4.0
GET_PET = CallCase("getPet", tool_named("getPet"), args={"petId": 1})


@dataclass
class Variant:
    label: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    pythonpath: str | None = None
    http_only: bool = False  # the option needs --transport http (no stdio figures)


@dataclass
class Figures:
    cold: list[float] = field(default_factory=list)
    call_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    http_cpu_ms: list[float] = field(default_factory=list)
    http_calls_s: list[float] = field(default_factory=list)


@contextlib.contextmanager
def base_source() -> Iterator[Path]:
    """The runtime as it was at ``BASE`` (bridge/ and generator/ only), in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="mcp-bridge-base-") as folder:
        archive = subprocess.run(
            ["git", "archive", BASE, "bridge", "generator"], cwd=ROOT, capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
        yield Path(folder)


def _env(variant: Variant, upstream_port: int) -> dict[str, str]:
    env = child_env(PETSTORE_BASE_URL=f"http://127.0.0.1:{upstream_port}/v1", PETSTORE_API_KEY="bench-key")
    env.update(variant.env)
    if variant.pythonpath:
        env["PYTHONPATH"] = f"{variant.pythonpath}:{env.get('PYTHONPATH', '')}"
    return env


def stdio_run(variant: Variant, upstream_port: int, figures: Figures, calls: int) -> None:
    if variant.http_only:
        return
    cmd = [PYTHON, "-m", "bridge", "serve", str(PACKAGE), *variant.args]
    target = Target(variant.label, cmd, env=_env(variant, upstream_port), cwd=ROOT, calls=[GET_PET])
    run = asyncio.run(measure(target, calls=calls, warmup=30))
    if run.error:
        raise RuntimeError(f"{variant.label}: {run.error}")
    call = run.calls["getPet"]
    if call.error:
        raise RuntimeError(f"{variant.label}: {call.error}")
    figures.cold.append(run.cold_start_s)
    figures.call_ms.append(call.call_ms)
    figures.cpu_ms.append(call.cpu_ms)


def http_run(variant: Variant, upstream_port: int, figures: Figures, seconds: float) -> None:
    import psutil

    port = free_port()
    cmd = [PYTHON, "-m", "bridge", "serve", str(PACKAGE), "--transport", "http", "--port", str(port), *variant.args]
    with started(cmd, cwd=ROOT, env=_env(variant, upstream_port)) as proc:
        wait_port(port, 60, proc)
        url = f"http://127.0.0.1:{port}/mcp"
        asyncio.run(run_load(url, "session", 1, 1.0, 10_000))  # warm-up
        server = psutil.Process(proc.pid)
        before = server.cpu_times()
        result = asyncio.run(run_load(url, "session", 1, seconds, 100_000))
        after = server.cpu_times()
    ok = result["outcomes"].get("ok", 0)
    if ok == 0 or len(result["outcomes"]) != 1:
        raise RuntimeError(f"{variant.label} over HTTP: {result['outcomes']}")
    cpu = (after.user - before.user) + (after.system - before.system)
    figures.http_cpu_ms.append(1000 * cpu / ok)
    figures.http_calls_s.append(ok / result["seconds"])


def table(results: dict[str, Figures]) -> str:
    def med(values: list[float]) -> float:
        return statistics.median(values) if values else float("nan")

    base = results.get("before issue 23")
    rows = []
    for label, fig in results.items():
        ratio = f"{med(fig.cpu_ms) / med(base.cpu_ms):.2f}x" if base is not None and base.cpu_ms else "n/a"
        http_ratio = (
            f"{med(fig.http_cpu_ms) / med(base.http_cpu_ms):.2f}x" if base is not None and base.http_cpu_ms else "n/a"
        )
        rows.append([
            label, f"{med(fig.cold):.3f}", f"{med(fig.call_ms):.3f}", f"{med(fig.cpu_ms):.3f}", ratio,
            f"{med(fig.http_cpu_ms):.3f}", http_ratio, f"{med(fig.http_calls_s):,.0f}",
        ])  # fmt: skip
    return md_table(
        ["variant", "cold start s", "stdio ms/call", "stdio CPU ms/call", "vs before", "HTTP CPU ms/call",
         "vs before", "HTTP calls/s (1 client)"],
        rows,
        "lrrrrrrr",
    )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    rounds, calls, seconds = (1, 100, 1.5) if args.quick else (ROUNDS, CALLS, HTTP_SECONDS)
    before = load_average()
    when = time.strftime("%Y-%m-%d %H:%M")
    results: dict[str, Figures] = {}
    with (
        base_source() as base,
        upstream() as upstream_port,
        running_sink() as (_sink, endpoint),
        running_redis() as redis,
    ):
        variants = [
            Variant("before issue 23", pythonpath=str(base)),
            Variant("off (default)"),
            Variant("--otel traces", ["--otel", "traces"], {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}),
            Variant("--metrics-port", ["--metrics-port", str(free_port())], http_only=True),
            Variant("--limits-redis", ["--limits-redis", redis.url]),
        ]
        for number in range(rounds):
            shift = number % len(variants)  # each round starts with another variant: no place is favoured
            for variant in variants[shift:] + variants[:shift]:
                figures = results.setdefault(variant.label, Figures())
                stdio_run(variant, upstream_port, figures, calls)
                http_run(variant, upstream_port, figures, seconds)
                print(f"  {variant.label:26} HTTP CPU {figures.http_cpu_ms[-1]:.3f} ms", flush=True)
    body = "\n".join([
        "# Operations overhead: what telemetry, metrics and shared limits cost a call",
        "",
        (__doc__ or "").split("\n\n", 1)[1].strip(),
        "",
        f"Run {when} on {machine_info()}; load average {before} before, {load_average()} after (2 shared cores). "
        f"{rounds} interleaved round(s); {calls} stdio calls and {seconds:g} s of HTTP calls per variant and round; "
        "medians.",
        "",
        table(results),
        "",
    ])  # fmt: skip
    REPORT.write_text(body, encoding="utf-8")
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
