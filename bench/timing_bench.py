"""Timing bench: how close to its bounds the bridge ends what the tests only check the cause of.
Writes bench/TIMING.md.

    python -m bench.timing_bench [--runs N]

The security tests assert *why* a call ended (the deadline, a refused connection, a Retry-After
wait, a program's wall limit) without reading a clock, so a loaded machine cannot break them;
the wall-clock figures live here, medians of ``--runs`` runs on real loopback sockets (the fault
server of tests/security) with the load average beside them.

Rows: a slow drip (one byte every 0.25 s, each within the 1 s read timeout) cut by a 1.5 s
deadline; the same deadline with retries on and every attempt timing out at 0.4 s; a 503 with
``Retry-After: 1`` then a 200 (the gap between the attempts); a refused connection; a program
looping forever under a 2 s wall limit.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "bench" / "TIMING.md"


async def _timed(action: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    try:
        await action()
    except Exception:  # the bound being measured ends the action with an error
        pass
    return time.perf_counter() - started


async def _drip() -> float:
    from tests.security.fault_server import Fault, FaultServer
    from tests.security.test_outbound_bounds import send_once

    async with FaultServer(Fault.drip(interval=0.25)) as server:
        return await _timed(lambda: send_once(server, deadline=1.5, read_timeout=1.0))


async def _deadline_with_retries() -> float:
    from tests.security.fault_server import Fault, FaultServer
    from tests.security.test_retries import send

    async with FaultServer(Fault.delay_then(5.0)) as server:
        return await _timed(lambda: send(server, deadline=1.5, read_timeout=0.4, retries=10, retry_backoff=0.01))


async def _retry_after() -> float:
    from tests.security.fault_server import Fault, FaultServer
    from tests.security.test_retries import RETRYING, send

    async with FaultServer(Fault.error(503, retry_after="1"), Fault.echo()) as server:
        await send(server, **RETRYING)
        return server.attempts[1].started - server.attempts[0].started


async def _refused() -> float:
    from tests.security.fault_server import closed_port
    from tests.security.test_outbound_bounds import get_items, upstream_for

    base = f"http://127.0.0.1:{closed_port()}/v1"
    async with upstream_for(base) as upstream:
        return await _timed(lambda: upstream.send(get_items(base)))


async def _endless_program(package: Path) -> float:
    from bridge.modes.sandbox import SandboxLimits
    from tests.bridge.modes.codemode.harness import code_client

    async with code_client(package, limits=SandboxLimits(wall_seconds=2.0)) as (client, _):
        await client.call_tool("run_code", {"code": "1"})  # the worker pool started
        return await _timed(lambda: client.call_tool("run_code", {"code": "while True:\n    pass\n"}))


ROWS: list[tuple[str, str, float]] = [
    ("slow drip, 1.5 s deadline", "drip", 1.5),
    ("every attempt slow, 10 retries, 1.5 s deadline", "retries", 1.5),
    ("503 with Retry-After: 1, then 200 (gap between attempts)", "retry_after", 1.0),
    ("refused connection", "refused", 0.0),
    ("endless program, 2 s wall limit", "program", 2.0),
]


async def _measure(runs: int, package: Path) -> dict[str, list[float]]:
    actions: dict[str, Callable[[], Awaitable[float]]] = {
        "drip": _drip,
        "retries": _deadline_with_retries,
        "retry_after": _retry_after,
        "refused": _refused,
        "program": lambda: _endless_program(package),
    }
    return {key: [await action() for _ in range(runs)] for key, action in actions.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from tests.bridge.modes.codemode.harness import petstore_package

    with tempfile.TemporaryDirectory() as folder:
        figures = anyio.run(_measure, args.runs, petstore_package(Path(folder)))
    load = " / ".join(f"{v:.1f}" for v in os.getloadavg())
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        "# Timing bench",
        "",
        f"`python -m bench.timing_bench` ({stamp}, {args.runs} runs a row, medians and the worst run). "
        f"Load average when written: {load} (1 / 5 / 15 min) on {os.cpu_count()} cores, other sessions running.",
        "",
        "What the security tests check the cause of (tests/security/test_outbound_bounds.py,",
        "test_retries.py, tests/bridge/modes/codemode/test_sandbox_security.py), measured on the wall clock here.",
        "",
        "| case | bound | median | worst | median over the bound |",
        "|---|---|---|---|---|",
    ]
    for label, key, bound in ROWS:
        values = figures[key]
        median, worst = statistics.median(values), max(values)
        over = f"{(median - bound) * 1000:+.0f} ms" if bound else "-"
        lines.append(f"| {label} | {bound:g} s | {median * 1000:.0f} ms | {worst * 1000:.0f} ms | {over} |")
    lines.append("")
    REPORT.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {REPORT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
