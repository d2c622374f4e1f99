"""Scale-out load bench (``make load``): MCP clients through nginx to 1, 2 and 3 bridge workers.

Everything runs on 127.0.0.1 and stops by itself: the upstream (:mod:`bench.scale_upstream`, a
lean keep-alive server in its own process), Debian's nginx (installed by
``tests/services/install.py`` when missing, started with docs/deployment.md's configuration by
:mod:`tests.services.nginx`), ``mcp-bridge serve --transport http --workers N`` behind it, and
the load generator (:mod:`bench.mcp_load`, bare MCP clients in their own process). FastMCP
4.2.3's HTTP transport serves the same spec against the same upstream, through the same nginx,
in the same run (its own virtualenv, :mod:`bench.peers`).

Sections of bench/SCALE.md:

- **throughput**: per protocol (2025-11-25 with sessions, 2025-11-25 stateless, 2026-07-28) and
  server, ``ROUNDS`` interleaved rounds of ``DURATION`` s with ``CLIENTS`` clients; medians of
  calls/s, p50 and p99 of the ok calls, errors, RSS per worker after the run;
- **shared limit**: 3 workers with ``--limits-redis`` and ``--max-concurrent-calls K`` against a
  slow upstream: the most requests the upstream saw at once (and the same without Redis);
- **failure**: one worker killed (SIGKILL) mid-run: the calls lost, all of them in flight on it
  at the kill; a rolling restart (SIGHUP: each worker drained with SIGTERM, then started again):
  calls lost (the target is none).

``python -m bench.scale_bench [--quick]``: ``--quick`` is one short round (a smoke run).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import PYTHON, ROOT, child_env, machine_info, md_table, started, wait_port
from tests.services.nginx import Nginx, bridge_http_block, running_nginx
from tests.services.processes import free_port

REPORT = ROOT / "bench" / "SCALE.md"
PACKAGE = ROOT / "generated" / "petstore"
SPEC = ROOT / "specs" / "petstore.yaml"
CLIENTS = 32
DURATION = 6.0
WARMUP = 1.0
ROUNDS = 3
PROTOCOLS = ("session", "stateless", "modern")
PROTOCOL_NAMES = {
    "session": "2025-11-25, sessions",
    "stateless": "2025-11-25, stateless",
    "modern": "2026-07-28",
}
START_TIMEOUT = 60.0
LOAD_TIMEOUT = 120.0

FASTMCP_HTTP_SERVER = """
import json, os, sys, warnings
warnings.simplefilter("ignore")
try:
    import httpx2 as httpx
except ImportError:
    import httpx
from fastmcp import FastMCP

spec = json.loads(open(sys.argv[1], encoding="utf-8").read())
client = httpx.AsyncClient(base_url=os.environ["BENCH_BASE_URL"], trust_env=False)
server = FastMCP.from_openapi(openapi_spec=spec, client=client, name="bench")
server.run(
    transport="http", host="127.0.0.1", port=int(sys.argv[2]), path="/mcp",
    stateless_http=sys.argv[3] == "stateless", show_banner=False, log_level="warning",
)
"""


def load_average() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


@dataclass
class Served:
    """A server under test: its worker processes and their ports (nginx points at the ports)."""

    name: str
    ports: list[int]
    pids: list[int]
    supervisor: subprocess.Popen[bytes] | None = None

    def cpu_seconds(self) -> float:
        """User + system CPU of the server's processes so far (workers, not the supervisor)."""
        import psutil

        total = 0.0
        for pid in self.pids:
            with contextlib.suppress(psutil.Error):
                times = psutil.Process(pid).cpu_times()
                total += times.user + times.system
        return total

    def rss_mb(self) -> list[float]:
        import psutil

        out = []
        for pid in self.pids:
            with contextlib.suppress(psutil.Error):
                out.append(psutil.Process(pid).memory_info().rss / 2**20)
        return out


# ----------------------------------------------------------------------------------- processes


@contextlib.contextmanager
def upstream(delay: float = 0.0) -> Iterator[int]:
    port = free_port()
    cmd = [PYTHON, "-m", "bench.scale_upstream", "--port", str(port), "--delay", str(delay), "--lifetime", "1800"]
    with started(cmd, cwd=ROOT, env=child_env()) as proc:
        wait_port(port, START_TIMEOUT, proc)
        yield port


def upstream_stats(port: int, reset: bool = False) -> dict[str, int]:
    import urllib.request

    path = "/__reset" if reset else "/__stats"
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method="POST" if reset else "GET")
    with urllib.request.urlopen(request, timeout=5) as response:
        data: dict[str, int] = json.loads(response.read())
        return data


def bridge_env(upstream_port: int) -> dict[str, str]:
    return child_env(PETSTORE_BASE_URL=f"http://127.0.0.1:{upstream_port}/v1", PETSTORE_API_KEY="bench-key")


@functools.cache
def _supports_workers() -> bool:
    out = subprocess.run(
        [PYTHON, "-m", "bridge", "serve", "--help"], capture_output=True, text=True, cwd=ROOT, timeout=60, check=False
    )
    return "--workers" in out.stdout


def _consecutive_ports(count: int) -> int:
    """A first port such that it and the next ``count - 1`` were free a moment ago."""
    import socket

    for _ in range(50):
        base = free_port()
        if base + count > 65535:
            continue
        socks = []
        try:
            for offset in range(count):
                sock = socket.socket()
                socks.append(sock)
                sock.bind(("127.0.0.1", base + offset))
            return base
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()
    raise RuntimeError("no run of free ports")


@contextlib.contextmanager
def bridge(
    workers: int, upstream_port: int, *, stateless: bool = False, extra: Sequence[str] = (), log: Path | None = None
) -> Iterator[Served]:
    """``mcp-bridge serve PACKAGE --transport http --workers N`` (or N single processes before
    ``--workers`` existed), worker i on port base + i."""
    base = _consecutive_ports(workers)
    args = [
        "--transport",
        "http",
        "--forwarded-allow-ips",
        "127.0.0.1",
        *(["--stateless"] if stateless else []),
        *extra,
    ]
    env = bridge_env(upstream_port)
    name = f"mcp-bridge, {workers} worker{'s' if workers > 1 else ''}"
    if _supports_workers():
        cmd = [PYTHON, "-m", "bridge", "serve", str(PACKAGE), *args, "--port", str(base), "--workers", str(workers)]
        with started(cmd, cwd=ROOT, env=env, log=log) as proc:
            for offset in range(workers):
                wait_port(base + offset, START_TIMEOUT, proc)
            import psutil

            pids = [child.pid for child in psutil.Process(proc.pid).children()] if workers > 1 else [proc.pid]
            yield Served(name, [base + i for i in range(workers)], pids, supervisor=proc if workers > 1 else None)
        return
    with contextlib.ExitStack() as stack:
        pids = []
        for offset in range(workers):
            cmd = [PYTHON, "-m", "bridge", "serve", str(PACKAGE), *args, "--port", str(base + offset)]
            proc = stack.enter_context(started(cmd, cwd=ROOT, env=env, log=log))
            wait_port(base + offset, START_TIMEOUT, proc)
            pids.append(proc.pid)
        yield Served(name, [base + i for i in range(workers)], pids)


@contextlib.contextmanager
def fastmcp(upstream_port: int, *, stateless: bool = False) -> Iterator[Served]:
    from bench.peers import fastmcp_python, spec_as_json

    python = fastmcp_python()
    assert python is not None
    script = Path(tempfile.gettempdir()) / "mcp-bridge-bench-fastmcp-http.py"
    script.write_text(FASTMCP_HTTP_SERVER.lstrip(), encoding="utf-8")
    port = free_port()
    env = {**child_env(), "BENCH_BASE_URL": f"http://127.0.0.1:{upstream_port}/v1"}
    env.pop("PYTHONPATH", None)
    cmd = [str(python), str(script), str(spec_as_json(SPEC)), str(port), "stateless" if stateless else "stateful"]
    with started(cmd, env=env) as proc:
        wait_port(port, START_TIMEOUT, proc)
        yield Served("FastMCP 4.2.3", [port], [proc.pid])


@contextlib.contextmanager
def behind_nginx(served: Served) -> Iterator[Nginx]:
    with running_nginx(bridge_http_block(served.ports)) as nginx:
        yield nginx


def load(url: str, protocol: str, *, clients: int = CLIENTS, duration: float = DURATION) -> dict[str, Any]:
    cmd = [
        PYTHON, "-m", "bench.mcp_load", "--url", url, "--protocol", protocol,
        "--clients", str(clients), "--duration", str(duration),
    ]  # fmt: skip
    out = subprocess.run(
        cmd, cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=LOAD_TIMEOUT, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(f"load generator failed: {out.stderr[-2000:]}")
    data: dict[str, Any] = json.loads(out.stdout)
    return data


# ----------------------------------------------------------------------------------- throughput


@dataclass
class Row:
    runs: list[dict[str, Any]] = field(default_factory=list)
    rss: list[list[float]] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)  # server CPU per ok call: like for like when the load is capped

    def calls_per_second(self) -> float:
        return statistics.median(len(r["latencies_ms"]) / r["seconds"] for r in self.runs)

    def percentile(self, q: float) -> float:
        values = []
        for run in self.runs:
            lat = sorted(run["latencies_ms"])
            if lat:
                values.append(lat[min(len(lat) - 1, int(len(lat) * q))])
        return statistics.median(values) if values else float("nan")

    def errors(self) -> int:
        return sum(n for r in self.runs for k, n in r["outcomes"].items() if k != "ok")

    def calls(self) -> int:
        return sum(r["outcomes"].get("ok", 0) for r in self.runs)


def servers_for(protocol: str) -> list[tuple[str, int]]:
    if protocol == "session" and not _supports_workers():  # separate processes cannot pin sessions
        return [("bridge", 1), ("fastmcp", 1)]
    return [("bridge", 1), ("bridge", 2), ("bridge", 3), ("fastmcp", 1)]


def run_throughput(rounds: int, duration: float) -> tuple[dict[tuple[str, str], Row], list[str]]:
    rows: dict[tuple[str, str], Row] = {}
    notes: list[str] = []
    with upstream() as upstream_port:
        for _round in range(rounds):
            for protocol in PROTOCOLS:
                stateless = protocol == "stateless"
                for kind, workers in servers_for(protocol):
                    server = (
                        bridge(workers, upstream_port, stateless=stateless)
                        if kind == "bridge"
                        else fastmcp(upstream_port, stateless=stateless)
                    )
                    with server as served, behind_nginx(served) as nginx:
                        url = f"{nginx.url}/mcp"
                        load(url, protocol, duration=WARMUP)
                        cpu_before = served.cpu_seconds()
                        result = load(url, protocol, duration=duration)
                        cpu = served.cpu_seconds() - cpu_before
                        row = rows.setdefault((protocol, served.name), Row())
                        row.runs.append(result)
                        row.cpu_ms.append(1000 * cpu / max(result["outcomes"].get("ok", 0), 1))
                        row.rss.append(served.rss_mb())
                    rate = len(result["latencies_ms"]) / result["seconds"]
                    print(f"  {PROTOCOL_NAMES[protocol]:24} {served.name:24} {rate:8.0f} calls/s  {result['outcomes']}")
    return rows, notes


def throughput_table(rows: dict[tuple[str, str], Row]) -> str:
    table = []
    for protocol in PROTOCOLS:
        group = {name: row for (p, name), row in rows.items() if p == protocol}
        if not group:
            continue
        best = max(row.calls_per_second() for row in group.values())
        one = group.get("mcp-bridge, 1 worker")
        for name, row in group.items():
            cps = row.calls_per_second()
            ratio = f"{cps / one.calls_per_second():.2f}x" if one is not None else "n/a"
            rss = statistics.median(statistics.median(r) for r in row.rss if r) if any(row.rss) else float("nan")
            table.append([
                PROTOCOL_NAMES[protocol], name, f"{cps:,.0f}" + (" **best**" if cps == best else ""), ratio,
                f"{row.percentile(0.50):.1f}", f"{row.percentile(0.99):.1f}", row.errors(), row.calls(), f"{rss:.0f}",
                f"{statistics.median(row.cpu_ms):.2f}" if row.cpu_ms else "n/a",
            ])  # fmt: skip
    return md_table(
        [
            "protocol",
            "server",
            "calls/s (median)",
            "vs 1 worker",
            "p50 ms",
            "p99 ms",
            "errors",
            "ok calls",
            "RSS/worker MiB",
            "server CPU ms/call",
        ],
        table,
        "llrrrrrrrr",
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one short round")
    parser.add_argument("--only", choices=["throughput"], default=None)
    args = parser.parse_args(argv)
    rounds, duration = (1, 2.0) if args.quick else (ROUNDS, DURATION)
    from tests.services.install import ensure_services

    ensure_services()
    before = load_average()
    started_at = time.strftime("%Y-%m-%d %H:%M")
    rows, _notes = run_throughput(rounds, duration)
    body = [
        f"Run {started_at} on {machine_info()}; load average {before} before, {load_average()} after "
        f"(2 shared cores: the load generator, nginx, the upstream and every worker share them).",
        "",
        f"{CLIENTS} clients, {rounds} interleaved round(s) of {duration:g} s each after a {WARMUP:g} s warm-up; "
        "medians over rounds.",
        "",
        throughput_table(rows),
    ]
    if args.only is None:
        from bench.scale_faults import fault_table, limit_table, run_kill, run_limit, run_rolling

        body += ["", "## A shared limit across three workers", "", limit_table(run_limit())]
        faults = [run(protocol) for run in (run_kill, run_rolling) for protocol in ("session", "modern")]
        body += ["", "## A killed worker, a rolling restart", "", fault_table(faults)]
        body += ["", f"Load average after the fault scenarios: {load_average()}."]
    print("\n".join(body))
    REPORT.write_text(
        "# Scale-out load bench\n\n" + (__doc__ or "").split("\n\n", 1)[0] + "\n\n" + "\n".join(body) + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
