"""The project's targets, each judged from the figures of the same run_all invocation.

Every target is listed every time, met, missed or not measured: a row is never left out because
it would read badly, and a verdict is never typed by hand. The limits come from the project's
issues; each row shows the figure, the limit it was compared with, and the verdict.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bench import figures as f
from bench.common import fmt

MET, MISSED, NOT_MEASURED = "**met**", "**missed**", "not measured"

GENERATE_S, GENERATE_MB = 10.0, 500.0
# issue 22
GENERATE_FAST_S, GENERATE_FAST_MB = 3.0, 300.0
CPU_OVER_FLOORS_MS = 0.3
CACHED_OVER_PACKAGE_S = 0.2
COLD_START_OVER_FLOOR_S = 0.4
RSS_OVER_FLOOR_MB = 35.0
TOOLS_LIST_MS = 50.0
ADDED_MS = 1.0
CALLS_RATIO = 1.3
GITHUB_TOKENS = 180_000
GITHUB_LIST_BYTES = 1_200_000
# the call cases of run_all.SPECS: named here too, so a run that lost one still lists its targets
CASES = {"petstore": ("getPet",), "github": ("meta/get-zen", "repos/get")}


@dataclass(frozen=True)
class Row:
    target: str
    measured: str
    limit: str
    verdict: str

    def cells(self) -> list[str]:
        return [self.target, self.measured, self.limit, self.verdict]


def _u(value: float, unit: str, digits: int = 2) -> str:
    """A figure with its unit, or ``n/a`` alone."""
    return f"{fmt(value, digits)}{unit}" if f.finite(value) else "n/a"


def judge(value: float, limit: float, *, at_least: bool = False) -> str:
    """``value <= limit`` (or ``>=`` with ``at_least``) from the measured figure; NaN is not measured."""
    if not (f.finite(value) and f.finite(limit)):
        return NOT_MEASURED
    return MET if (value >= limit if at_least else value <= limit) else MISSED


def _both(*verdicts: str) -> str:
    if NOT_MEASURED in verdicts:
        return NOT_MEASURED
    return MISSED if MISSED in verdicts else MET


def _generate(data: dict[str, Any]) -> Iterator[Row]:
    for tool in (f.GENERATE,):
        s = f.generate_median(data, "github", tool, "seconds")
        mb = f.generate_median(data, "github", tool, "peak_rss_mb")
        yield Row(
            f"`{tool}` on GitHub: time / peak RSS",
            f"{_u(s, ' s')} / {_u(mb, ' MB', 0)}",
            f"<= {GENERATE_S:g} s / {GENERATE_MB:g} MB",
            _both(judge(s, GENERATE_S), judge(mb, GENERATE_MB)),
        )
        yield Row(
            f"`{tool}` on GitHub (issue 22): time / peak RSS",
            f"{_u(s, ' s')} / {_u(mb, ' MB', 0)}",
            f"<= {GENERATE_FAST_S:g} s / {GENERATE_FAST_MB:g} MB",
            _both(judge(s, GENERATE_FAST_S), judge(mb, GENERATE_FAST_MB)),
        )


def _startup(data: dict[str, Any], spec: str) -> Iterator[Row]:
    floor_s, floor_mb = f.floor(data)
    cold = f.serve_median(data, spec, f.BRIDGE, "cold_start_s")
    yield Row(
        f"{spec}: cold start of the package (spawn -> initialize)",
        _u(cold, " s"),
        f"<= import floor {fmt(floor_s)} + {COLD_START_OVER_FLOOR_S} s",
        judge(cold, floor_s + COLD_START_OVER_FLOOR_S),
    )
    rss = f.serve_median(data, spec, f.BRIDGE, "rss_mb")
    yield Row(
        f"{spec}: peak RSS of the package",
        _u(rss, " MB", 0),
        f"<= import floor {fmt(floor_mb, 0)} + {RSS_OVER_FLOOR_MB:g} MB",
        judge(rss, floor_mb + RSS_OVER_FLOOR_MB),
    )


def _spec_start(data: dict[str, Any], spec: str) -> Iterator[Row]:
    first = f.serve_median(data, spec, f.BRIDGE_SPEC, "cold_start_s")
    peer = f.serve_median(data, spec, f.FASTMCP, "cold_start_s")
    yield Row(
        f"{spec}: first start of `serve spec.json` (empty cache) against `FastMCP.from_openapi`",
        f"{_u(first, ' s')} vs {_u(peer, ' s')}",
        "<= FastMCP's",
        judge(first, peer),
    )
    cached = f.serve_median(data, spec, f.BRIDGE_CACHED, "cold_start_s")
    package = f.serve_median(data, spec, f.BRIDGE, "cold_start_s")
    yield Row(
        f"{spec}: later start of `serve spec.json` (from the catalogue cache)",
        _u(cached, " s"),
        f"<= package {fmt(package)} + {CACHED_OVER_PACKAGE_S:g} s",
        judge(cached, package + CACHED_OVER_PACKAGE_S),
    )


def _cpu_call(data: dict[str, Any], spec: str, case: str) -> Iterator[Row]:
    cpu = f.call_median(data, spec, f.BRIDGE, case, "cpu_ms")
    floor = f.call_median(data, spec, f.FLOOR, f.FLOOR_CASE, "cpu_ms")
    direct = f.call_median(data, spec, f.DIRECT, case, "cpu_ms")
    added = cpu - floor - direct
    yield Row(
        f"{spec} `{case}`: server CPU ms a call over SDK floor server + direct httpx (issue 22)",
        f"{fmt(cpu, 3)} - {fmt(floor, 3)} - {fmt(direct, 3)} = {_u(added, ' ms', 3)}",
        f"<= {CPU_OVER_FLOORS_MS:g} ms",
        judge(added, CPU_OVER_FLOORS_MS),
    )


def _tools_list(data: dict[str, Any]) -> Iterator[Row]:
    for key, what in (("tools_list_first_s", "first call"), ("tools_list_s", "repeat calls")):
        ms = f.serve_median(data, "github", f.BRIDGE, key) * 1000
        limit = f"<= {TOOLS_LIST_MS:g} ms"
        yield Row(f"github: tools/list, {what}", _u(ms, " ms", 1), limit, judge(ms, TOOLS_LIST_MS))
    tokens = f.tokens(data, "github", f.BRIDGE)
    yield Row(
        "github: model-visible tokens of tools/list",
        _u(tokens, "", 0),
        f"<= {GITHUB_TOKENS:,}",
        judge(tokens, GITHUB_TOKENS),
    )
    size = f.serve_median(data, "github", f.BRIDGE, "tools_bytes")
    yield Row(
        "github: tools/list bytes", _u(size, " B", 0), f"<= {GITHUB_LIST_BYTES:,} B", judge(size, GITHUB_LIST_BYTES)
    )


def _per_call(data: dict[str, Any], spec: str, case: str) -> Iterator[Row]:
    b_ms = f.call_median(data, spec, f.BRIDGE, case, "call_ms")
    floor_ms = f.call_median(data, spec, f.FLOOR, f.FLOOR_CASE, "call_ms")
    direct_ms = f.call_median(data, spec, f.DIRECT, case, "call_ms")
    added = b_ms - floor_ms - direct_ms
    yield Row(
        f"{spec} `{case}`: ms a call the bridge adds over SDK floor + direct HTTP",
        f"{fmt(b_ms, 3)} - {fmt(floor_ms, 3)} - {fmt(direct_ms, 3)} = {_u(added, ' ms', 3)}",
        f"<= {ADDED_MS:g} ms",
        judge(added, ADDED_MS),
    )
    b_cps = f.call_median(data, spec, f.BRIDGE, case, "calls_per_s")
    p_cps = f.call_median(data, spec, f.FASTMCP, case, "calls_per_s")
    ratio = b_cps / p_cps if f.finite(p_cps) and p_cps else f.NAN
    yield Row(
        f"{spec} `{case}`: calls/s against FastMCP",
        f"{fmt(b_cps, 0)} vs {fmt(p_cps, 0)} = {_u(ratio, 'x')}",
        f">= {CALLS_RATIO}x",
        judge(ratio, CALLS_RATIO, at_least=True),
    )


def rows(data: dict[str, Any]) -> list[Row]:
    """Every target, in a fixed order, whatever the data holds (missing figures: not measured)."""
    out = list(_generate(data))
    for spec in ("petstore", "github"):
        out += _startup(data, spec)
        out += _spec_start(data, spec)
    out += _tools_list(data)
    for spec in ("petstore", "github"):
        for case in dict.fromkeys([*CASES[spec], *data.get("cases", {}).get(spec, [])]):
            out += _per_call(data, spec, case)
            out += _cpu_call(data, spec, case)
    return out
