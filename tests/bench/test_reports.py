"""bench/RESULTS.md tells the truth: best cells bolded whoever holds them, every target listed and judged."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import figures as f
from bench import headline, report, run_all, targets
from bench.common import fmt
from tests.bench.data import SERVERS, run_data

FIGURE = st.one_of(st.just(math.nan), st.floats(min_value=0.01, max_value=1e6, allow_nan=False))


@settings(max_examples=200, deadline=None)
@given(values=st.lists(FIGURE, min_size=1, max_size=5), digits=st.integers(0, 3), higher=st.booleans())
def test_the_best_cell_is_bold_whoever_holds_it(values: list[float], digits: int, higher: bool) -> None:
    cells = headline.mark_best(values, digits, higher_better=higher)
    present = [v for v in values if f.finite(v)]
    bold = {i for i, c in enumerate(cells) if c.startswith("**")}
    if len(present) < 2:
        assert not bold
        return
    best = fmt(max(present) if higher else min(present), digits)
    assert bold == {i for i, v in enumerate(values) if f.finite(v) and fmt(v, digits) == best}
    assert all(cells[i] == "n/a" for i, v in enumerate(values) if not f.finite(v))


def _bold_cells_by_column(text: str) -> list[tuple[str, str]]:
    """(column header, cell) of every bold cell in the markdown tables of ``text``."""
    found = []
    header: list[str] = []
    for line in text.splitlines():
        if not line.startswith("|"):
            header = []
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if not header:
            header = cells
            continue
        found += [(header[i], c) for i, c in enumerate(cells) if c.startswith("**") and i < len(header)]
    return found


def test_no_bold_on_a_row_the_bridge_loses() -> None:
    """Peers better on every figure: nothing of the bridge's is bold anywhere in the report."""
    loses = {"cold_start_s": 2.0, "tools_list_first_s": 0.2, "tools_list_s": 0.1, "rss_mb": 300.0}
    loses |= {"tools_bytes": 9e6, "call_ms": 5.0, "calls_per_s": 200.0, "cpu_ms": 4.0, "tokens": 400_000}
    wins = {"cold_start_s": 0.3, "tools_list_first_s": 0.01, "tools_list_s": 0.005, "rss_mb": 80.0}
    wins |= {"tools_bytes": 1e6, "call_ms": 1.0, "calls_per_s": 900.0, "cpu_ms": 1.0, "tokens": 100_000}
    data = run_data({f.BRIDGE: loses, f.BRIDGE_SPEC: loses, f.FASTMCP: wins, f.OMG: wins})
    text = report.render(data)
    bold = _bold_cells_by_column(text)
    assert bold, "the peers' best cells are bold"
    assert all(column not in (f.BRIDGE, f.BRIDGE_SPEC) for column, _ in bold)
    outside_tables = re.findall(r"\*\*[^*]+\*\*", "\n".join(x for x in text.splitlines() if not x.startswith("|")))
    assert outside_tables == []
    assert not any(r.verdict == targets.MET for r in targets.rows(data) if "FastMCP" in r.target)


TARGET_KINDS = {
    "generate": "`mcp-bridge generate` on GitHub",
    "cold start": "cold start",
    "peak RSS": "peak RSS",
    "tools/list time": "github: tools/list, first call",
    "ms a call added": "the bridge adds over SDK floor",
    "calls/s ratio": "calls/s against FastMCP",
    "tokens": "github: model-visible tokens",
    "bytes": "github: tools/list bytes",
}


def test_every_target_is_listed_even_when_nothing_was_measured() -> None:
    rows = targets.rows(run_data({}))
    for kind, words in TARGET_KINDS.items():
        mine = [r for r in rows if words in r.target]
        assert mine, kind
        assert all(r.verdict == targets.NOT_MEASURED and r.limit for r in mine), kind
    per_call = [r for r in rows if "calls/s against FastMCP" in r.target]
    assert {r.target.split(":")[0] for r in per_call} == {
        f"{spec} `{case}`" for spec, cases in targets.CASES.items() for case in cases
    }


@settings(max_examples=60, deadline=None)
@given(
    cold=st.floats(0.1, 3.0),
    rss=st.floats(40, 200),
    first_ms=st.floats(1, 200),
    tokens=st.integers(100_000, 300_000),
    size=st.integers(500_000, 3_000_000),
    bridge_cps=st.floats(100, 2000),
    fastmcp_cps=st.floats(100, 2000),
    call_ms=st.floats(0.5, 5.0),
)
def test_verdicts_follow_the_measured_figures(
    cold: float,
    rss: float,
    first_ms: float,
    tokens: int,
    size: int,
    bridge_cps: float,
    fastmcp_cps: float,
    call_ms: float,
) -> None:
    bridge = {"cold_start_s": cold, "rss_mb": rss, "tools_list_first_s": first_ms / 1000, "tools_list_s": 0.001}
    bridge |= {"tokens": tokens, "tools_bytes": size, "calls_per_s": bridge_cps, "call_ms": call_ms}
    data = run_data({f.BRIDGE: bridge, f.FASTMCP: {"calls_per_s": fastmcp_cps, "call_ms": 1.0}})
    floor_s, floor_mb = f.floor(data)

    def verdict(ok: bool) -> str:
        return targets.MET if ok else targets.MISSED

    by_name = {r.target: r.verdict for r in targets.rows(data)}
    expected = {
        "petstore: cold start of the package (spawn -> initialize)": verdict(cold <= floor_s + 0.4),
        "github: peak RSS of the package": verdict(rss <= floor_mb + 35),
        "github: tools/list, first call": verdict(first_ms <= 50),
        "github: model-visible tokens of tools/list": verdict(tokens <= 180_000),
        "github: tools/list bytes": verdict(size <= 1_200_000),
        "github `repos/get`: calls/s against FastMCP": verdict(bridge_cps / fastmcp_cps >= 1.3),
        "petstore `getPet`: ms a call the bridge adds over SDK floor + direct HTTP": verdict(call_ms - 0.7 - 0.8 <= 1),
    }
    for name, want in expected.items():
        assert by_name[name] == want, name


def test_the_run_measures_the_serve_spec_row_and_a_json_github_call() -> None:
    from bench.peers import spec_as_json

    servers = run_all.targets_for("petstore", "http://127.0.0.1:9", peers=False, package=False)
    (spec_row,) = [t for t in servers if t.label == f.BRIDGE_SPEC]
    assert spec_row.cmd[1:3] == ["serve", str(spec_as_json(run_all.SPECS["petstore"]["path"]))]
    cases = {c.key: c for c in run_all.SPECS["github"]["cases"]}
    assert cases["repos/get"].args == {"owner": "octocat", "repo": "Hello-World"}
    assert cases["repos/get"].direct == "/repos/octocat/Hello-World"
    assert {spec: tuple(c.key for c in s["cases"]) for spec, s in run_all.SPECS.items()} == targets.CASES
    assert set(SERVERS) == set(headline.COLUMNS)


def test_a_first_start_finds_no_cache_and_a_later_start_a_validated_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_all, "OUT_DIR", tmp_path)
    servers = {t.label: t for t in run_all.targets_for("petstore", "http://127.0.0.1:9", peers=False, package=False)}
    first = Path(servers[f.BRIDGE_SPEC].env["XDG_CACHE_HOME"])
    later = Path(servers[f.BRIDGE_CACHED].env["XDG_CACHE_HOME"])
    assert first != later and servers[f.BRIDGE_SPEC].cmd == servers[f.BRIDGE_CACHED].cmd
    (first / "stale").mkdir(parents=True)
    run_all.prepare_cache("petstore", servers[f.BRIDGE_SPEC])
    assert not first.exists()
    run_all.prepare_cache("petstore", servers[f.BRIDGE_CACHED], wait=60)  # a real first start fills it
    assert run_all._validated_entry(later)
