"""Synthetic run_all data in the shape run_all writes (ServeRun/CallRun dicts), for the report tests."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from bench import figures as f
from bench.serve_bench import CallRun, ServeRun
from bench.targets import CASES

SERVERS = (f.BRIDGE, f.BRIDGE_SPEC, f.BRIDGE_CACHED, f.FASTMCP, f.OMG)


def serve_run(label: str, cases: tuple[str, ...], **figures: float) -> dict[str, Any]:
    """One run of ``label``; ``figures`` sets ServeRun fields, and ``call_ms``/``calls_per_s``/``cpu_ms`` every case."""
    per_call = {k: figures.pop(k) for k in ("call_ms", "calls_per_s", "cpu_ms") if k in figures}
    run = ServeRun(label, **figures)  # type: ignore[arg-type]
    run.calls = {case: CallRun(tool=case, output="valid", **per_call) for case in cases}
    return asdict(run)


def run_data(per_server: dict[str, dict[str, float]], *, runs: int = 3, **extra: Any) -> dict[str, Any]:
    """Data where every server (and the floors) has the same figures in each of ``runs`` runs."""
    data: dict[str, Any] = {
        "quick": False,
        "runs": runs,
        "calls": 1000,
        "specs": ["petstore", "github"],
        "cases": {spec: list(cases) for spec, cases in CASES.items()},
        "machine": "test machine",
        "date": "2026-12-01 00:00",
        "seconds": 1.0,
        "versions": {"mcp-bridge": "0", "mcp": "0"},
        "peer_notes": {},
        "generate": [],
        "import_floor_s": [0.8] * runs,
        "import_floor_mb": [60.0] * runs,
        "serve": {},
        "tokens": {},
        "token_method": "test counter",
        "notes": [],
    }
    for spec, cases in CASES.items():
        serve: dict[str, list[dict[str, Any]]] = {}
        serve[f.FLOOR] = [serve_run(f.FLOOR, (f.FLOOR_CASE,), call_ms=0.7, calls_per_s=1400)] * runs
        serve[f.DIRECT] = [serve_run(f.DIRECT, cases, call_ms=0.8, calls_per_s=1250)] * runs
        for label, values in per_server.items():
            values = dict(values)
            tokens = values.pop("tokens", None)
            serve[label] = [serve_run(label, cases, **values) for _ in range(runs)]
            if tokens is not None:
                data["tokens"].setdefault(spec, {})[label] = tokens
        data["serve"][spec] = serve
    data.update(extra)
    return data
