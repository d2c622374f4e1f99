"""The load bench's limit and failure scenarios (bench/SCALE.md): a shared limit, a killed worker, a rolling restart.

- **shared limit**: 3 workers with ``--max-concurrent-calls K`` against an upstream that takes
  ``SLOW`` s a request, with ``--limits-redis`` (Debian's redis-server on a free port) and
  without: the most requests the upstream had in flight at once;
- **kill**: 3 workers under load, one SIGKILLed mid-run (the supervisor starts it again): every
  call that failed, and whether each was in flight on the killed worker at the kill (started
  before it, and for sessions on that worker's route);
- **rolling restart**: SIGHUP to the supervisor under load (each worker drained by SIGTERM, then
  started again): the calls lost (the target is none) and the sessions clients had to start again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from bench.common import PYTHON, ROOT, child_env, md_table
from bench.scale_bench import behind_nginx, bridge, upstream, upstream_stats
from tests.services.redis import running_redis

K = 4
SLOW = 0.05
LIMIT_CLIENTS = 24
FAULT_CLIENTS = 24
KILL_AT = 3.0
FAULT_DURATION = 9.0
ROLL_DURATION = 20.0
ROLL_AT = 2.0


def start_load(url: str, protocol: str, clients: int, duration: float) -> subprocess.Popen[str]:
    cmd = [
        PYTHON, "-m", "bench.mcp_load", "--url", url, "--protocol", protocol,
        "--clients", str(clients), "--duration", str(duration),
    ]  # fmt: skip
    return subprocess.Popen(cmd, cwd=ROOT, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish_load(process: subprocess.Popen[str], timeout: float) -> dict[str, Any]:
    out, err = process.communicate(timeout=timeout)
    if process.returncode != 0:
        raise RuntimeError(f"load generator failed: {err[-2000:]}")
    data: dict[str, Any] = json.loads(out)
    return data


@dataclass
class LimitRow:
    shared: bool
    peak: int
    ok: int
    limited: int
    other: int


def run_limit(protocol: str = "session") -> list[LimitRow]:
    rows = []
    with upstream(delay=SLOW) as upstream_port, running_redis() as redis:
        for shared in (True, False):
            extra = ["--max-concurrent-calls", str(K), "--max-queue-wait", "10"]
            if shared:
                extra += ["--limits-redis", redis.url]
            with bridge(3, upstream_port, extra=extra) as served, behind_nginx(served) as nginx:
                upstream_stats(upstream_port, reset=True)
                process = start_load(f"{nginx.url}/mcp", protocol, LIMIT_CLIENTS, 4.0)
                result = finish_load(process, 120)
                stats = upstream_stats(upstream_port)
            outcomes = result["outcomes"]
            ok, limited = outcomes.get("ok", 0), outcomes.get("limited", 0)
            rows.append(LimitRow(shared, stats["peak"], ok, limited, sum(outcomes.values()) - ok - limited))
    return rows


def limit_table(rows: list[LimitRow]) -> str:
    return md_table(
        [
            "limits",
            "workers",
            "K (--max-concurrent-calls)",
            "clients",
            "upstream peak in flight",
            "ok",
            "limited",
            "other",
        ],
        [
            ["shared (Redis)" if r.shared else "per process", 3, K, LIMIT_CLIENTS, r.peak, r.ok, r.limited, r.other]
            for r in rows
        ],
        "lrrrrrrr",
    )


@dataclass
class FaultRow:
    scenario: str
    protocol: str
    ok: int
    failed: int
    failed_in_flight_on_it: int
    new_sessions: int
    outcomes: dict[str, int]


def _children(pid: int) -> list[int]:
    import psutil

    return sorted((c.pid for c in psutil.Process(pid).children()), key=lambda p: p)


def run_kill(protocol: str) -> FaultRow:
    with upstream(delay=0.01) as upstream_port, bridge(3, upstream_port) as served, behind_nginx(served) as nginx:
        process = start_load(f"{nginx.url}/mcp", protocol, FAULT_CLIENTS, FAULT_DURATION)
        time.sleep(KILL_AT)
        victim = served.pids[1]
        killed_at = time.time()
        os.kill(victim, signal.SIGKILL)
        result = finish_load(process, FAULT_DURATION + 60)
    failures = result["failures"]
    on_it = [f for f in failures if f[0] <= killed_at + 0.01 and (protocol != "session" or f[2] in ("w1", ""))]
    outcomes = result["outcomes"]
    return FaultRow(
        "one worker SIGKILLed", protocol, outcomes.get("ok", 0), len(failures), len(on_it), result["new_sessions"],
        {k: v for k, v in outcomes.items() if k != "ok"},
    )  # fmt: skip


def run_rolling(protocol: str) -> FaultRow:
    with upstream(delay=0.01) as upstream_port, bridge(3, upstream_port) as served, behind_nginx(served) as nginx:
        assert served.supervisor is not None, "a rolling restart needs --workers"
        process = start_load(f"{nginx.url}/mcp", protocol, FAULT_CLIENTS, ROLL_DURATION)
        time.sleep(ROLL_AT)
        served.supervisor.send_signal(signal.SIGHUP)
        result = finish_load(process, ROLL_DURATION + 60)
    outcomes = result["outcomes"]
    failures = result["failures"]
    return FaultRow(
        "rolling restart (SIGHUP)", protocol, outcomes.get("ok", 0), len(failures), 0, result["new_sessions"],
        {k: v for k, v in outcomes.items() if k != "ok"},
    )  # fmt: skip


def fault_table(rows: list[FaultRow]) -> str:
    return md_table(
        [
            "scenario",
            "protocol",
            "ok calls",
            "failed calls",
            "of them in flight on the worker",
            "new sessions",
            "failures",
        ],
        [
            [
                r.scenario,
                r.protocol,
                r.ok,
                r.failed,
                r.failed_in_flight_on_it if r.scenario.startswith("one") else "-",
                r.new_sessions,
                json.dumps(r.outcomes) if r.outcomes else "-",
            ]
            for r in rows
        ],
        "llrrrrl",
    )
