"""The headline table: one row per figure, one column per server, the best cell of each row in bold.

The bold goes to whoever holds the best value (lowest for times, bytes, RSS, tokens and CPU;
highest for calls/s), compared as shown (so equal-looking cells are all bold), and only when at
least two servers have the figure. A row the bridge loses carries the peer's bold, not the
bridge's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench import figures as f
from bench.common import fmt, md_table

COLUMNS = (f.BRIDGE, f.BRIDGE_SPEC, f.BRIDGE_CACHED, f.FASTMCP, f.OMG)


@dataclass(frozen=True)
class Metric:
    label: str
    values: tuple[float, ...]  # one per column, NaN when that server has no such figure
    digits: int
    higher_better: bool = False


def mark_best(values: Sequence[float], digits: int, *, higher_better: bool = False) -> list[str]:
    """Formatted cells with the best one(s) in bold; ``n/a`` for a missing value."""
    cells = [fmt(v, digits) if f.finite(v) else "n/a" for v in values]
    present = [(v, c) for v, c in zip(values, cells, strict=True) if f.finite(v)]
    if len(present) < 2:
        return cells
    best = (max if higher_better else min)(present, key=lambda pair: pair[0])[1]
    return [f"**{c}**" if c == best else c for c in cells]


def metrics(data: dict[str, Any], spec: str) -> list[Metric]:
    nan = f.NAN

    def serve(key: str, scale: float = 1.0) -> tuple[float, ...]:
        return tuple(f.serve_median(data, spec, label, key) * scale for label in COLUMNS)

    def generate(key: str) -> tuple[float, ...]:
        # only the package has a generate step (serve spec.json and FastMCP generate at start-up)
        return (
            f.generate_median(data, spec, f.GENERATE, key),
            nan,
            nan,
            nan,
            f.generate_median(data, spec, f.OMG, key),
        )

    def call(case: str, key: str) -> tuple[float, ...]:
        return tuple(f.call_median(data, spec, label, case, key) for label in COLUMNS)

    out = [
        Metric("generate s (openapi-mcp-generator: before its npm install and tsc)", generate("seconds"), 2),
        Metric("generate peak RSS MB", generate("peak_rss_mb"), 0),
        Metric("cold start s (spawn -> initialize)", serve("cold_start_s"), 2),
        Metric("first tools/list ms", serve("tools_list_first_s", 1000), 1),
        Metric("repeat tools/list ms", serve("tools_list_s", 1000), 1),
        Metric("peak RSS MB", serve("rss_mb"), 0),
        Metric("tools/list bytes", serve("tools_bytes"), 0),
        Metric("model-visible tokens", tuple(f.tokens(data, spec, label) for label in COLUMNS), 0),
    ]
    for case in data.get("cases", {}).get(spec, []):
        out.append(Metric(f"`{case}` calls/s", call(case, "calls_per_s"), 0, higher_better=True))
        out.append(Metric(f"`{case}` server CPU ms/call", call(case, "cpu_ms"), 3))
    return out


def answers(data: dict[str, Any], spec: str, case: str) -> list[str]:
    """What each server's first answer of ``case`` was, checked against its outputSchema (not ranked)."""
    return [
        "; ".join(sorted({c["output"] for c in f.call_runs(data, spec, label, case) if c.get("output")})) or "n/a"
        for label in COLUMNS
    ]


def table(data: dict[str, Any], spec: str) -> str:
    rows = [[m.label, *mark_best(m.values, m.digits, higher_better=m.higher_better)] for m in metrics(data, spec)]
    rows += [
        [f"`{case}` answer vs outputSchema", *answers(data, spec, case)] for case in data.get("cases", {}).get(spec, [])
    ]
    return md_table([spec, *COLUMNS], rows, "l" + "r" * len(COLUMNS))
