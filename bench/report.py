"""bench/RESULTS.md's generated section and plots, from the raw data of one run_all invocation.

Pure functions of ``data`` (bench/out/results.json): re-rendering an old run gives the same text.
Verdicts come from bench/targets.py, the headline tables from bench/headline.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench import figures, headline, serve_bench, targets
from bench.common import BENCH_DIR, fmt, md_table
from bench.figures import BRIDGE, BRIDGE_CACHED, BRIDGE_SPEC, DIRECT, FASTMCP, FLOOR, OMG


def render(data: dict[str, Any]) -> str:
    gen = data["generate"]
    serve: dict[str, dict[str, list[dict[str, Any]]]] = data["serve"]
    floor_s, floor_mb = figures.floor(data)
    lines = [
        "## Measurements (generated)",
        "",
        f"`make bench` (`python -m bench.run_all{' --quick' if data['quick'] else ''}`), "
        f"{data['date']}, {data['machine']}. Medians of {data['runs']} run(s) per figure, all made in this one "
        f"invocation ({data['seconds']:.0f} s); load average (1 / 5 / 15 min) {data.get('load', 'n/a')} at the "
        f"start and {data.get('load_end', 'n/a')} at the end, on {data.get('cores', 'n/a')} cores. "
        "The machine is shared and noisy, so compare ratios, not absolutes. "
        f"Versions: mcp-bridge {data['versions']['mcp-bridge']} on mcp {data['versions']['mcp']}; "
        f"{data['peer_notes'].get(FASTMCP, 'n/a')} (own venv, bench/out/.venv-fastmcp); {OMG}.",
        "",
        "Reproduce: `make bench` (about 15-20 min the first time: it installs FastMCP's venv and builds "
        "the Node projects; `--quick` for a smoke run). Peers: "
        + "; ".join(f"{k}: {v}" for k, v in data["peer_notes"].items()),
        "",
        "### Targets",
        "",
        "Every target of the project's issues, judged from this run's figures (bench/targets.py).",
        "",
        md_table(["target", "measured", "limit", "verdict"], [r.cells() for r in targets.rows(data)], "lrll"),
        "",
        "### Headlines",
        "",
        f"Medians of this run. `{BRIDGE}` serves the package `mcp-bridge generate` wrote; `{BRIDGE_SPEC}` "
        "serves the spec file directly (generating in memory at start, with an empty catalogue cache), as "
        f"`FastMCP.from_openapi` does; `{BRIDGE_CACHED}` is a later start of the same spec, from the catalogue cache. "
        "The best value of each row is in bold, whoever holds it (lowest, except calls/s: highest).",
        "",
    ]
    for spec in data["specs"]:
        lines += [headline.table(data, spec), ""]
    lines += ["### 1. Generate (subprocess, wall time and peak RSS)", ""]
    rows = []
    for spec in data["specs"]:
        for tool in dict.fromkeys(g["tool"] for g in gen if g["spec"] == spec):
            mine = [g for g in gen if g["spec"] == spec and g["tool"] == tool]
            rows.append(
                [
                    spec,
                    tool,
                    fmt(figures.generate_median(data, spec, tool, "seconds")),
                    fmt(figures.generate_median(data, spec, tool, "peak_rss_mb"), 0),
                    " / ".join(f"{g['seconds']:.2f}" for g in mine),
                    "ok" if all(g["ok"] for g in mine) else "failed: " + mine[-1]["note"],
                ]
            )
    headers = ["spec", "generator", "median s", "peak RSS MB", "runs (s)", "status"]
    lines += [md_table(headers, rows, "llrrll"), ""]
    lines += [
        "### 2. Serve over stdio: start-up, tools/list, memory",
        "",
        f'SDK import floor (`python -c "{serve_bench.IMPORT_FLOOR}"`): {fmt(floor_s)} s, {fmt(floor_mb, 0)} MB '
        f"(runs: {' / '.join(f'{v:.2f}' for v in data['import_floor_s'])} s).",
        "",
    ]
    rows = []
    for spec in data["specs"]:
        for label, items in serve[spec].items():
            if label == DIRECT:
                continue
            ok = [i for i in items if not i["error"]]
            tokens = figures.tokens(data, spec, label)
            rows.append(
                [
                    spec,
                    label,
                    fmt(figures.serve_median(data, spec, label, "cold_start_s")),
                    fmt(figures.serve_median(data, spec, label, "tools_list_first_s") * 1000, 1),
                    fmt(figures.serve_median(data, spec, label, "tools_list_s") * 1000, 1),
                    fmt(figures.serve_median(data, spec, label, "rss_mb"), 0),
                    ok[0]["tools"] if ok else "n/a",
                    f"{ok[0]['tools_bytes']:,}" if ok else "n/a",
                    fmt(tokens, 0),
                    figures.errors(items),
                ]
            )
    headers = ["spec", "server", "cold start s", "tools/list first ms", "tools/list ms", "peak RSS MB", "tools"]
    headers += ["tools/list B", "model tokens", "errors"]
    lines += [md_table(headers, rows, "llrrrrrrrl"), ""]
    lines += [f"Model tokens: {data['token_method']} (bench/visible.py).", "", *_calls_section(data)]
    lines += ["### Plots", "", "![per-call latency](latency.png)", "", "![tools/list size](tools_list.png)", ""]
    lines += ["### Notes", "", *data["notes"], ""]
    return "\n".join(lines)


def _calls_section(data: dict[str, Any]) -> list[str]:
    cases = "; ".join(
        f"{spec} `{c['key']}` -> `GET {c['direct']}`: {c['result']}"
        for spec in data["specs"]
        for c in _cases(data, spec)
    )
    lines = [
        "### 3. Per call over stdio against a loopback upstream",
        "",
        f"{data['calls']} sequential `tools/call` per call case after 20 warm-up calls, one server process per run "
        "for all its cases; the upstream is `bench.serve_bench:upstream_app` under uvicorn in its own process. "
        f"Cases: {cases}. `output` is the first answer's `structuredContent` checked against the tool's "
        "advertised `outputSchema` (jsonschema, draft 2020-12). `direct httpx` is the same GET from one pooled "
        "`httpx.AsyncClient`, its CPU column the bench process's own CPU per request (what an httpx request costs "
        "whoever sends it); `SDK floor server` is a low-level `Server` answering a constant tool.",
        "",
    ]
    rows = []
    for spec in data["specs"]:
        for case in data["cases"][spec]:
            for label in data["serve"][spec]:
                key = figures.FLOOR_CASE if label == FLOOR else case
                items = figures.call_runs(data, spec, label, key)
                rows.append(
                    [
                        f"{spec} `{case}`",
                        label,
                        *(fmt(figures.call_median(data, spec, label, key, k), 3) for k in ("call_ms", "call_p99_ms")),
                        fmt(figures.call_median(data, spec, label, key, "calls_per_s"), 0),
                        fmt(figures.call_median(data, spec, label, key, "cpu_ms"), 3),
                        " / ".join(fmt(i["calls_per_s"], 0) for i in items),
                        "; ".join(sorted({i["output"] for i in items if i.get("output")})),
                        figures.errors(items + figures.runs(data, spec, label)),
                    ]
                )
    headers = ["case", "server", "ms/call", "p99 ms", "calls/s", "server CPU ms/call", "runs (calls/s)", "output"]
    return [*lines, md_table([*headers, "errors"], rows, "llrrrrlll"), ""]


def _tick(label: str) -> str:
    return label.replace(" ", "\n").replace("openapi-mcp-", "openapi-\nmcp-")


def plot(data: dict[str, Any], folder: Path = BENCH_DIR) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    serve = data["serve"]
    panels = [(spec, case) for spec in data["specs"] for case in data["cases"][spec]]
    order = [DIRECT, FLOOR, BRIDGE, BRIDGE_SPEC, BRIDGE_CACHED, FASTMCP, OMG]
    colours = {DIRECT: "#999999", FLOOR: "#bbbbbb", BRIDGE: "#1f77b4", BRIDGE_SPEC: "#6baed6", BRIDGE_CACHED: "#9ecae1"}
    colours |= {FASTMCP: "#ff7f0e", OMG: "#2ca02c"}
    paths = []
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
    for ax, (spec, case) in zip(axes[0], panels, strict=True):
        labels = [label for label in order if serve[spec].get(label)]
        keys = [figures.FLOOR_CASE if label == FLOOR else case for label in labels]
        values = [figures.call_median(data, spec, lb, key, "call_ms") for lb, key in zip(labels, keys, strict=True)]
        bars = ax.bar(range(len(labels)), values, color=[colours[label] for label in labels])
        ax.bar_label(bars, labels=[fmt(v, 2) for v in values], fontsize=8)
        ax.set_xticks(range(len(labels)), [_tick(label) for label in labels], fontsize=7)
        ax.set_ylabel("ms per call (median of runs)")
        ax.set_title(f"{spec} {case}: sequential tools/call over stdio", fontsize=9)
    fig.tight_layout()
    path = folder / "latency.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    paths.append(path)

    specs = data["specs"]
    fig, axes = plt.subplots(1, len(specs), figsize=(5.5 * len(specs), 4), squeeze=False)
    for ax, spec in zip(axes[0], specs, strict=True):
        labels = [label for label in (BRIDGE, BRIDGE_SPEC, BRIDGE_CACHED, FASTMCP, OMG) if serve[spec].get(label)]
        values = [max((i["tools_bytes"] for i in serve[spec][label]), default=0) / 1024 for label in labels]
        bars = ax.bar(range(len(labels)), values, color=[colours[label] for label in labels])
        ax.bar_label(bars, labels=[f"{v:,.0f} KiB" for v in values], fontsize=8)
        ax.set_xticks(range(len(labels)), [_tick(label) for label in labels], fontsize=7)
        ax.set_ylabel("tools/list result, KiB")
        ax.set_title(f"{spec}: tools/list size")
    fig.tight_layout()
    path = folder / "tools_list.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    paths.append(path)
    return paths


def _cases(data: dict[str, Any], spec: str) -> list[dict[str, Any]]:
    """The call cases of ``spec`` as measured (older data: as run_all describes them now)."""
    if "case_info" in data:
        return list(data["case_info"][spec])
    from bench.run_all import SPECS

    return [{"key": c.key, "direct": c.direct, "result": c.result} for c in SPECS[spec]["cases"]]
