"""``make bench``: mcp-bridge beside FastMCP 4.2.3 and openapi-mcp-generator 4.0.1, written to bench/RESULTS.md.

Specs: ``specs/petstore.yaml`` and GitHub's (``@octokit/openapi`` 23.0.2, 1,223 operations).
Every figure is the median of ``--runs`` runs (default 3) made in this one invocation, peers and
floors included, so ratios compare like with like on a noisy 2-core machine.

1. Generate: ``mcp-bridge generate`` (default, with models.py; and ``--no-models``) and
   ``openapi-mcp-generator``: wall time and peak RSS of the subprocess (bench/generate_bench.py).
2. Serve over stdio (bench/serve_bench.py): cold start (spawn -> initialize answered),
   ``tools/list`` latency and bytes, peak RSS, beside the SDK's import floor and a constant-handler
   SDK server; then per-call latency and calls/s of one read-only tool against a loopback
   upstream, beside the same HTTP calls made directly with httpx.
3. Tokens the model sees: name + description + inputSchema of every tool, o200k_base, counted
   with ``bridge.tokens.load_counter`` (exact when tiktoken's ranks are found offline: bench/node
   pins npm ``tiktoken``; otherwise the documented chars/4 estimate, and the report says so).

``--quick``: one run, 100 calls, peers only if already installed/built. Plots: bench/*.png.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench import generate_bench, serve_bench
from bench.common import (
    BENCH_DIR,
    BENCH_NODE_DIR,
    GITHUB_SPEC,
    OUT_DIR,
    ROOT,
    child_env,
    ensure_bench_node_modules,
    ensure_test_node_modules,
    fmt,
    machine_info,
    md_table,
    replace_section,
)
from bench.serve_bench import ServeRun, Target, tool_named

RESULTS_MD = BENCH_DIR / "RESULTS.md"
SKELETON = """<!-- analysis:begin -->
<!-- analysis:end -->
"""
BRIDGE = "mcp-bridge"
FASTMCP = "FastMCP 4.2.3"
OMG = "openapi-mcp-generator 4.0.1"
FLOOR = "SDK floor server"
DIRECT = "direct httpx"
API_KEY = "bench-key-123"

SPECS: dict[str, dict[str, Any]] = {
    "petstore": {
        "path": ROOT / "specs" / "petstore.yaml",
        "base_path": "/v1",
        "tool": ("getPet",),
        "args": {"petId": 1},
        "direct": "/v1/pets/1",
    },
    "github": {
        "path": GITHUB_SPEC,
        "base_path": "",
        "tool": ("meta/get-zen", "meta_get_zen", "meta-get-zen", "metaget-zen"),
        "args": {},
        "direct": "/zen",
    },
}


def _median(values: Sequence[float]) -> float:
    good = [v for v in values if v == v]
    return statistics.median(good) if good else float("nan")


def _catalogue_env(package: Path, base_url: str) -> dict[str, str]:
    data = json.loads((package / "catalogue.json").read_text(encoding="utf-8"))
    prefix = data["env_prefix"]
    env = child_env(**{f"{prefix}_BASE_URL": base_url})
    for scheme in (data.get("security_schemes") or {}).values():
        for var in scheme.get("env") or []:
            if var["role"] not in ("client_id", "client_secret"):
                env[var["name"]] = API_KEY
    return env


def targets(label: str, upstream: str, *, peers: bool) -> list[Target]:
    spec = SPECS[label]
    base = upstream + spec["base_path"]
    find = tool_named(*spec["tool"])
    package = generate_bench.served_package(label)
    out = [
        Target(
            BRIDGE,
            [str(generate_bench.MCP_BRIDGE), "serve", str(package)],
            _catalogue_env(package, base),
            tool=find,
            args=spec["args"],
        ),
    ]
    if not peers:
        return out
    from bench import peers as peer_setup

    python = peer_setup.fastmcp_python(install=False)
    if python is not None:
        script = peer_setup.fastmcp_server_script()
        env = child_env(BENCH_BASE_URL=base, BENCH_HEADERS=json.dumps({"X-API-Key": API_KEY}))
        env.pop("PYTHONPATH", None)
        out.append(
            Target(
                FASTMCP,
                [str(python), str(script), str(peer_setup.spec_as_json(spec["path"]))],
                env,
                tool=find,
                args=spec["args"],
            )
        )
    project, _ = peer_setup.omg_project(peer_setup.spec_as_json(spec["path"]), install=False)
    if project is not None:
        env = child_env(API_BASE_URL=base)
        for name in peer_setup.omg_env(project):
            if name.startswith(("API_KEY", "BEARER")) or name.endswith("_TOKEN"):
                env[name] = API_KEY
        out.append(
            Target(OMG, ["node", str(project / "build" / "index.js")], env, cwd=project, tool=find, args=spec["args"])
        )
    return out


def prepare_peers(labels: Sequence[str], install: bool) -> dict[str, str]:
    """Install FastMCP's venv and build the Node projects (once; cached in bench/out/)."""
    from bench import peers as peer_setup

    notes: dict[str, str] = {}
    try:
        python = peer_setup.fastmcp_python(install=install)
        notes[FASTMCP] = peer_setup.fastmcp_versions(python) if python else "not installed"
    except Exception as exc:
        notes[FASTMCP] = f"could not install: {exc}"
    for label in labels:
        try:
            _, note = peer_setup.omg_project(peer_setup.spec_as_json(SPECS[label]["path"]), install=install)
        except Exception as exc:
            note = f"could not build: {' '.join(str(exc).split())[:200]}"
        notes[f"{OMG} {label}"] = note
    return notes


# ----------------------------------------------------------------------------------- tokens


def model_visible_tokens(tools: Sequence[dict[str, Any]], counter: Any) -> int:
    total = 0
    for tool in tools:
        visible = {
            "name": tool.get("name"),
            "description": tool.get("description", ""),
            "inputSchema": tool.get("inputSchema"),
        }
        total += counter.count(json.dumps(visible, separators=(",", ":"), ensure_ascii=False))
    return total


def token_counter() -> Any:
    from bridge.tokens import load_counter

    return load_counter(npm_dirs=[BENCH_NODE_DIR])


# ----------------------------------------------------------------------------------- report


def render(data: dict[str, Any]) -> str:
    runs = data["runs"]
    gen = data["generate"]
    serve: dict[str, dict[str, list[dict[str, Any]]]] = data["serve"]
    floor_s, floor_mb = _median(data["import_floor_s"]), _median(data["import_floor_mb"])
    lines = [
        "## Measurements (generated)",
        "",
        f"`make bench` (`python -m bench.run_all{' --quick' if data['quick'] else ''}`), "
        f"{data['date']}, {data['machine']}. Medians of {runs} run(s) per figure, all made in this one "
        f"invocation ({data['seconds']:.0f} s); the machine is noisy (2 cores), so compare ratios, not absolutes. "
        f"Versions: mcp-bridge {data['versions']['mcp-bridge']} on mcp {data['versions']['mcp']}; "
        f"{data['peer_notes'].get(FASTMCP, 'n/a')} (own venv, bench/out/.venv-fastmcp); {OMG}.",
        "",
        "Reproduce: `make bench` (about 10-15 min the first time: it installs FastMCP's venv and builds "
        "the Node projects; `--quick` for a smoke run). Peers: "
        + "; ".join(f"{k}: {v}" for k, v in data["peer_notes"].items()),
        "",
        "### Targets",
        "",
        md_table(["target", "measured", "verdict"], data["targets"], "lrl"),
        "",
        "### 1. Generate (subprocess, wall time and peak RSS)",
        "",
    ]
    rows = []
    for spec in data["specs"]:
        for tool in dict.fromkeys(g["tool"] for g in gen if g["spec"] == spec):
            mine = [g for g in gen if g["spec"] == spec and g["tool"] == tool]
            ok = all(g["ok"] for g in mine)
            rows.append(
                [
                    spec,
                    tool,
                    fmt(_median([g["seconds"] for g in mine])),
                    fmt(_median([g["peak_rss_mb"] for g in mine]), 0),
                    " / ".join(f"{g['seconds']:.2f}" for g in mine),
                    "ok" if ok else "failed: " + mine[-1]["note"],
                ]
            )
    lines += [md_table(["spec", "generator", "median s", "peak RSS MB", "runs (s)", "status"], rows, "llrrll"), ""]
    lines += [
        "### 2. Serve over stdio: start-up, tools/list, memory",
        "",
        f'SDK import floor (`python -c "{serve_bench.IMPORT_FLOOR}"`): **{fmt(floor_s)} s, {fmt(floor_mb, 0)} MB** '
        f"(runs: {' / '.join(f'{v:.2f}' for v in data['import_floor_s'])} s).",
        "",
    ]
    rows = []
    for spec in data["specs"]:
        for label, items in serve[spec].items():
            if label == DIRECT:
                continue
            ok = [i for i in items if not i["error"] or i["error"].startswith("isError")]
            tokens = data["tokens"].get(spec, {}).get(label)
            rows.append(
                [
                    spec,
                    label,
                    fmt(_median([i["cold_start_s"] for i in ok])),
                    fmt(_median([i["tools_list_first_s"] * 1000 for i in ok]), 1),
                    fmt(_median([i["tools_list_s"] * 1000 for i in ok]), 1),
                    fmt(_median([i["rss_mb"] for i in ok]), 0),
                    ok[0]["tools"] if ok else "n/a",
                    f"{ok[0]['tools_bytes']:,}" if ok else "n/a",
                    f"{tokens:,}" if tokens else "n/a",
                    _errors(items),
                ]
            )
    lines += [
        md_table(
            [
                "spec",
                "server",
                "cold start s",
                "tools/list first ms",
                "tools/list ms",
                "peak RSS MB",
                "tools",
                "tools/list B",
                "model tokens",
                "errors",
            ],
            rows,
            "llrrrrrrrl",
        ),
        "",
    ]
    lines += [
        f"Model tokens: name + description + inputSchema of every tool, compact JSON, {data['token_method']}.",
        "",
        "### 3. Per call over stdio against a loopback upstream",
        "",
        f"{data['calls']} sequential `tools/call` after 20 warm-up calls, one server process per run; the upstream "
        "is `bench.serve_bench:upstream_app` under uvicorn in its own process (petstore `getPet` -> "
        "`GET /v1/pets/1`, JSON with output-schema check; GitHub `meta/get-zen` -> `GET /zen`, text). "
        "`direct httpx` is the same GET from one pooled `httpx.AsyncClient`; `SDK floor server` is a "
        "low-level `Server` answering a constant tool.",
        "",
    ]
    rows = []
    for spec in data["specs"]:
        for label, items in serve[spec].items():
            rows.append(
                [
                    spec,
                    label,
                    *(fmt(_serve_median(items, key), 3) for key in ("call_ms", "call_p50_ms", "call_p99_ms")),
                    fmt(_serve_median(items, "calls_per_s"), 0),
                    fmt(_serve_median(items, "cpu_ms"), 3),
                    " / ".join(fmt(i["calls_per_s"], 0) for i in items),
                    _errors(items),
                ]
            )
    lines += [
        md_table(
            [
                "spec",
                "server",
                "ms/call",
                "p50 ms",
                "p99 ms",
                "calls/s",
                "server CPU ms/call",
                "runs (calls/s)",
                "errors",
            ],
            rows,
            "llrrrrrll",
        ),
        "",
    ]
    lines += [
        "### Ratios",
        "",
        *data["ratios"],
        "",
        "### Plots",
        "",
        "![per-call latency](latency.png)",
        "",
        "![tools/list size](tools_list.png)",
        "",
    ]
    lines += ["### Notes", "", *data["notes"], ""]
    return "\n".join(lines)


def _errors(items: list[dict[str, Any]]) -> str:
    """The distinct errors of a server's runs, for a table cell."""
    return "; ".join(sorted({i["error"][:120] for i in items if i["error"]}))


def _serve_median(items: list[dict[str, Any]], key: str) -> float:
    return _median([i.get(key, float("nan")) for i in items if not i["error"]])


def analyse(data: dict[str, Any]) -> None:
    """Targets, ratios and notes from the raw runs."""
    serve = data["serve"]
    floor_s, floor_mb = _median(data["import_floor_s"]), _median(data["import_floor_mb"])
    targets: list[list[str]] = []
    ratios: list[str] = []

    def verdict(ok: bool | None) -> str:
        return "n/a" if ok is None else ("**met**" if ok else "**missed**")

    gh_gen = [g for g in data["generate"] if g["spec"] == "github" and g["tool"].startswith("mcp-bridge")]
    for tool in dict.fromkeys(g["tool"] for g in gh_gen):
        mine = [g for g in gh_gen if g["tool"] == tool]
        s, mb = _median([g["seconds"] for g in mine]), _median([g["peak_rss_mb"] for g in mine])
        targets.append(
            [f"`{tool}` on GitHub <= 10 s / 500 MB", f"{fmt(s)} s / {fmt(mb, 0)} MB", verdict(s <= 10 and mb <= 500)]
        )
    for spec in data["specs"]:
        bridge = serve[spec].get(BRIDGE, [])
        cold, rss = _serve_median(bridge, "cold_start_s"), _serve_median(bridge, "rss_mb")
        targets.append(
            [
                f"{spec}: cold start <= import floor + 0.4 s",
                f"{fmt(cold)} s vs {fmt(floor_s)} + 0.4 s",
                verdict(cold <= floor_s + 0.4 if cold == cold else None),
            ]
        )
        targets.append(
            [
                f"{spec}: peak RSS <= import floor + 35 MB",
                f"{fmt(rss, 0)} MB vs {fmt(floor_mb, 0)} + 35 MB",
                verdict(rss <= floor_mb + 35 if rss == rss else None),
            ]
        )
        if spec == "github":
            tl = _serve_median(bridge, "tools_list_s") * 1000
            targets.append(
                [
                    "github: tools/list <= 50 ms (repeat calls; first call in the table)",
                    f"{fmt(tl, 1)} ms",
                    verdict(tl <= 50 if tl == tl else None),
                ]
            )
        b_ms = _serve_median(bridge, "call_ms")
        f_ms = _serve_median(serve[spec].get(FLOOR, []), "call_ms")
        d_ms = _serve_median(serve[spec].get(DIRECT, []), "call_ms")
        added = b_ms - f_ms - d_ms
        targets.append(
            [
                f"{spec}: bridge adds <= 1 ms/call over SDK floor + direct HTTP",
                f"{fmt(b_ms, 3)} - {fmt(f_ms, 3)} - {fmt(d_ms, 3)} = {fmt(added, 3)} ms",
                verdict(added <= 1.0 if added == added else None),
            ]
        )
        fast = serve[spec].get(FASTMCP, [])
        b_cps, f_cps = _serve_median(bridge, "calls_per_s"), _serve_median(fast, "calls_per_s")
        ratio = b_cps / f_cps if f_cps == f_cps and f_cps else float("nan")
        targets.append(
            [
                f"{spec}: calls/s >= 1.3x FastMCP",
                f"{fmt(b_cps, 0)} vs {fmt(f_cps, 0)} = {fmt(ratio)}x",
                verdict(ratio >= 1.3 if ratio == ratio else None),
            ]
        )
        for peer in (FASTMCP, OMG):
            items = serve[spec].get(peer, [])
            if not items:
                continue
            pc, pr, pl = (_serve_median(items, k) for k in ("cold_start_s", "rss_mb", "tools_list_first_s"))
            pcps = _serve_median(items, "calls_per_s")
            bl = _serve_median(bridge, "tools_list_first_s")
            ratios.append(
                f"- {spec}, {BRIDGE} vs {peer}: cold start {fmt(cold)} vs {fmt(pc)} s (**{fmt(pc / cold)}x** faster); "
                f"first tools/list {fmt(bl * 1000, 1)} vs {fmt(pl * 1000, 1)} ms (**{fmt(pl / bl)}x**); "
                f"peak RSS {fmt(rss, 0)} vs {fmt(pr, 0)} MB; calls/s {fmt(b_cps, 0)} vs {fmt(pcps, 0)} "
                f"(**{fmt(b_cps / pcps if pcps else float('nan'))}x**); server CPU per call "
                f"{fmt(_serve_median(bridge, 'cpu_ms'), 3)} vs {fmt(_serve_median(items, 'cpu_ms'), 3)} ms "
                f"(**{fmt(_serve_median(items, 'cpu_ms') / _serve_median(bridge, 'cpu_ms'))}x** less)"
            )
        tb = {k: v for k, v in data["tokens"].get(spec, {}).items()}
        if tb.get(BRIDGE):
            for peer in (FASTMCP, OMG):
                if tb.get(peer):
                    ratios.append(
                        f"- {spec}, model tokens {BRIDGE} vs {peer}: {tb[BRIDGE]:,} vs {tb[peer]:,} "
                        f"({fmt(tb[BRIDGE] / tb[peer])}x)"
                    )
    data["targets"] = targets
    data["ratios"] = ratios


def plot(data: dict[str, Any], folder: Path = BENCH_DIR) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    serve = data["serve"]
    specs = data["specs"]
    order = [DIRECT, FLOOR, BRIDGE, FASTMCP, OMG]
    colours = {DIRECT: "#999999", FLOOR: "#bbbbbb", BRIDGE: "#1f77b4", FASTMCP: "#ff7f0e", OMG: "#2ca02c"}
    paths = []
    fig, axes = plt.subplots(1, len(specs), figsize=(5.5 * len(specs), 4), squeeze=False)
    for ax, spec in zip(axes[0], specs, strict=True):
        labels = [label for label in order if serve[spec].get(label)]
        values = [_serve_median(serve[spec][label], "call_ms") for label in labels]
        bars = ax.bar(range(len(labels)), values, color=[colours[label] for label in labels])
        ax.bar_label(bars, labels=[fmt(v, 2) for v in values], fontsize=8)
        ax.set_xticks(range(len(labels)), [label.replace(" ", "\n") for label in labels], fontsize=7)
        ax.set_ylabel("ms per call (median of runs)")
        ax.set_title(f"{spec}: sequential tools/call over stdio")
    fig.tight_layout()
    path = folder / "latency.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    paths.append(path)

    fig, axes = plt.subplots(1, len(specs), figsize=(5.5 * len(specs), 4), squeeze=False)
    for ax, spec in zip(axes[0], specs, strict=True):
        labels = [label for label in (BRIDGE, FASTMCP, OMG) if serve[spec].get(label)]
        values = [max((i["tools_bytes"] for i in serve[spec][label]), default=0) / 1024 for label in labels]
        bars = ax.bar(range(len(labels)), values, color=[colours[label] for label in labels])
        ax.bar_label(bars, labels=[f"{v:,.0f} KiB" for v in values], fontsize=8)
        ax.set_xticks(range(len(labels)), [label.replace(" ", "\n") for label in labels], fontsize=7)
        ax.set_ylabel("tools/list result, KiB")
        ax.set_title(f"{spec}: tools/list size")
    fig.tight_layout()
    path = folder / "tools_list.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    paths.append(path)
    return paths


# ----------------------------------------------------------------------------------- main


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {"mcp-bridge": version("mcp-bridge"), "mcp": version("mcp"), "python": platform.python_version()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write bench/RESULTS.md (+ bench/*.png)")
    parser.add_argument("--quick", action="store_true", help="1 run, 100 calls, peers only if already set up")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--calls", type=int, default=None)
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--specs", default="petstore,github")
    parser.add_argument("--output", type=Path, default=RESULTS_MD)
    args = parser.parse_args(argv)
    runs = args.runs or (1 if args.quick else 3)
    calls = args.calls or (100 if args.quick else 1000)
    specs = [s for s in args.specs.split(",") if s]
    peers = not args.no_peers
    start = time.perf_counter()
    ensure_test_node_modules()
    if peers:
        ensure_bench_node_modules()
    OUT_DIR.mkdir(parents=True, exist_ok=True)

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - start:6.0f} s] {message}", file=sys.stderr, flush=True)

    peer_notes = prepare_peers(specs, install=not args.quick) if peers else {}
    log(f"peers: {peer_notes}")
    data: dict[str, Any] = {
        "quick": args.quick,
        "runs": runs,
        "calls": calls,
        "specs": specs,
        "machine": machine_info(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "versions": versions(),
        "peer_notes": peer_notes,
        "generate": [],
        "import_floor_s": [],
        "import_floor_mb": [],
        "serve": {s: {} for s in specs},
        "tokens": {},
        "notes": [],
    }
    from bench.peers import spec_as_json

    for spec in specs:
        path = SPECS[spec]["path"]
        log(f"generate {spec}")
        runs_ = generate_bench.measure(spec, path, spec_as_json(path), runs, peers=peers)
        data["generate"] += [asdict(r) for r in runs_]
    counter = token_counter()
    data["token_method"] = (
        f"o200k_base, exact ({counter.source})" if counter.exact else f"ESTIMATE ceil(chars/4): {counter.source}"
    )
    with serve_bench.Upstream() as upstream:
        for i in range(runs):
            seconds, mb = serve_bench.import_floor()
            data["import_floor_s"].append(seconds)
            data["import_floor_mb"].append(mb)
            floor = serve_bench.run(serve_bench.measure(serve_bench.floor_target(), calls=calls))
            for spec in specs:
                data["serve"][spec].setdefault(FLOOR, []).append(asdict(floor) | {"tool_list": []})
                direct_ms = serve_bench.run(
                    serve_bench.measure_direct(upstream.url + SPECS[spec]["direct"], calls=calls)
                )
                data["serve"][spec].setdefault(DIRECT, []).append(
                    asdict(ServeRun(DIRECT, call_ms=direct_ms, calls_per_s=1000 / direct_ms)) | {"tool_list": []}
                )
                for target in targets(spec, upstream.url, peers=peers):
                    log(f"run {i + 1}/{runs} {spec} {target.label}")
                    stderr = OUT_DIR / f"serve-{spec}-{target.label.split()[0]}.stderr"
                    result = serve_bench.run(serve_bench.measure(target, calls=calls, keep_tools=i == 0, stderr=stderr))
                    if i == 0 and result.tool_list:
                        data["tokens"].setdefault(spec, {})[target.label] = model_visible_tokens(
                            result.tool_list, counter
                        )
                    row = asdict(result)
                    row["tool_list"] = []
                    data["serve"][spec].setdefault(target.label, []).append(row)
                    log(
                        f"  cold {result.cold_start_s:.2f} s, tools/list {result.tools_list_first_s * 1000:.0f} ms, "
                        f"{result.call_ms:.2f} ms/call, RSS {result.rss_mb:.0f} MB {result.error[:100]}"
                    )
    data["seconds"] = time.perf_counter() - start
    data["notes"] = [
        "- Cold start is measured from just before the process is spawned to the `initialize` answer; the "
        "SDK import floor is the same interpreter importing `mcp.server.lowlevel` and `mcp.server.stdio` only.",
        "- Peak RSS is VmHWM of the server process (for Node, of the process tree's largest member) read after "
        "the calls, so it includes tools/list and the per-call phase.",
        "- FastMCP is given an httpx client with the upstream as base URL (no output validation switched off); "
        "openapi-mcp-generator's project gets `API_BASE_URL`.",
    ]
    analyse(data)
    raw = OUT_DIR / f"{args.output.stem.lower()}.json"
    raw.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    plot(data, args.output.parent)
    replace_section(args.output, "results", render(data), SKELETON)
    log(f"wrote {args.output}")
    return 0


def _git_rev() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False)
    return out.stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
