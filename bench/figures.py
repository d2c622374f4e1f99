"""Reading figures out of one run_all invocation's raw data (bench/out/results.json's shape).

``data["serve"][spec][label]`` is the list of that server's runs, each a ``ServeRun`` as a dict
(``calls`` maps a call case's key to a ``CallRun`` dict). A run that failed to start counts for
nothing; a call case that failed counts for nothing in its own figures. Every figure is the
median over the runs that produced it, NaN when none did, so a missing figure can never read as
a good one.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

NAN = float("nan")

BRIDGE = "mcp-bridge"
BRIDGE_SPEC = "mcp-bridge serve spec.json"
BRIDGE_CACHED = "mcp-bridge serve spec.json, cached"
FASTMCP = "FastMCP 4.2.3"
OMG = "openapi-mcp-generator 4.0.1"
FLOOR = "SDK floor server"
DIRECT = "direct httpx"
FLOOR_CASE = "constant"
GENERATE = "mcp-bridge generate"


def finite(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def median(values: Sequence[float | None]) -> float:
    good = [v for v in values if v is not None and not math.isnan(v)]
    return statistics.median(good) if good else NAN


def runs(data: dict[str, Any], spec: str, label: str) -> list[dict[str, Any]]:
    return list(data["serve"].get(spec, {}).get(label, []))


def serve_median(data: dict[str, Any], spec: str, label: str, key: str) -> float:
    return median([r.get(key, NAN) for r in runs(data, spec, label) if not r.get("error")])


def call_runs(data: dict[str, Any], spec: str, label: str, case: str) -> list[dict[str, Any]]:
    return [r["calls"][case] for r in runs(data, spec, label) if case in (r.get("calls") or {})]


def call_median(data: dict[str, Any], spec: str, label: str, case: str, key: str) -> float:
    return median([c.get(key, NAN) for c in call_runs(data, spec, label, case) if not c.get("error")])


def generate_median(data: dict[str, Any], spec: str, tool: str, key: str) -> float:
    return median([g[key] for g in data.get("generate", []) if g["spec"] == spec and g["tool"] == tool and g["ok"]])


def tokens(data: dict[str, Any], spec: str, label: str) -> float:
    value = data.get("tokens", {}).get(spec, {}).get(label)
    return float(value) if value else NAN


def floor(data: dict[str, Any]) -> tuple[float, float]:
    """The SDK import floor: seconds and MB."""
    return median(data.get("import_floor_s", [])), median(data.get("import_floor_mb", []))


def errors(items: Sequence[dict[str, Any]]) -> str:
    """The distinct errors of some runs, for a table cell."""
    return "; ".join(sorted({str(i["error"])[:120] for i in items if i.get("error")}))
