"""How long a hostile workflow criterion stalls another session (issue 30, item 7).

Session A calls a workflow whose success criterion is ``$..*..*..*`` over a ~420 KB upstream
answer; session B, on the same server, calls a quick tool (``getItem``) back to back until A's
call ends. The figure is B's worst-case call latency during A's call (and its median), next to
B's latency with A idle. Run it on two checkouts for a before/after (``PYTHONPATH=<checkout>``):

    PYTHONPATH=. .venv/bin/python bench/criteria_stall.py [rounds]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from tests.workflows.harness import arazzo
from tests.workflows.test_criteria_off_loop import hostile_flow, two_sessions


async def rounds(count: int) -> None:
    cheap = {**hostile_flow("$[?@.id == 3999]"), "workflowId": "cheap"}  # the same answer, a cheap criterion
    with tempfile.TemporaryDirectory() as folder:
        async with two_sessions(Path(folder), arazzo(hostile_flow(), cheap), anyio.Event()) as (first, second):
            idle: list[float] = []
            for _ in range(20):
                started = time.perf_counter()
                await second.call_tool("getItem", {"id": 7})
                idle.append(time.perf_counter() - started)
            print(f"rounds {count}; session B idle latency median {statistics.median(idle) * 1000:.1f} ms")
            for workflow in ("cheap", "grind"):
                await measure(first, second, workflow, count)


async def measure(first: Any, second: Any, workflow: str, count: int) -> None:
    worst: list[float] = []
    medians: list[float] = []
    hostile_seconds: list[float] = []
    outcome = ""
    for _ in range(count):
        latencies: list[float] = []
        done = anyio.Event()

        async def hostile(done: anyio.Event = done) -> None:
            nonlocal outcome
            started = time.perf_counter()
            result = await first.call_tool(workflow, {})
            hostile_seconds.append(time.perf_counter() - started)
            outcome = "".join(getattr(b, "text", "") for b in result.content)[:160]
            done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(hostile)
            while not done.is_set():
                started = time.perf_counter()
                await second.call_tool("getItem", {"id": 7})
                latencies.append(time.perf_counter() - started)
        worst.append(max(latencies))
        medians.append(statistics.median(latencies))
    ms = 1000.0
    print(
        f"during A's {workflow!r} workflow: B worst-case median over rounds {statistics.median(worst) * ms:.0f} ms "
        f"(max {max(worst) * ms:.0f} ms), B median {statistics.median(medians) * ms:.1f} ms; "
        f"A's call {statistics.median(hostile_seconds):.2f} s"
    )
    print("A's answer:", outcome)


if __name__ == "__main__":
    anyio.run(rounds, int(sys.argv[1]) if len(sys.argv) > 1 else 5)
