"""``make bench``: mcp-bridge beside FastMCP 4.2.3 and openapi-mcp-generator 4.0.1, written to bench/RESULTS.md.

Specs: ``specs/petstore.yaml`` and GitHub's (``@octokit/openapi`` 23.0.2, 1,223 operations).
Every figure is the median of ``--runs`` runs (default 3) made in this one invocation, peers and
floors included, so ratios compare like with like on a noisy 2-core machine.

1. Generate: ``mcp-bridge generate`` and
   ``openapi-mcp-generator``: wall time and peak RSS of the subprocess (bench/generate_bench.py).
2. Serve over stdio (bench/serve_bench.py): cold start (spawn -> initialize answered),
   ``tools/list`` latency and bytes, peak RSS, beside the SDK's import floor and a constant-handler
   SDK server. mcp-bridge twice: serving the pre-generated package, and ``mcp-bridge serve
   spec.json`` (generating in memory at start, the like-for-like counterpart of
   ``FastMCP.from_openapi``). Then per call, for each call case (petstore ``getPet``; GitHub
   ``meta/get-zen``, no arguments and a text answer, and ``repos/get`` with owner and repo and
   the spec's repository example as the answer): latency, calls/s and server CPU of one tool
   against a loopback upstream, the first answer checked against the tool's outputSchema, beside
   the same HTTP calls made directly with httpx.
3. Tokens the model sees, counted one way for every server from its real tools/list
   (bench/visible.py).
4. Targets (bench/targets.py) and the headline tables (bench/headline.py), from this run's figures,
   rendered with the detailed tables and plots by bench/report.py.

``--quick``: one run, 100 calls, peers only if already installed/built. Plots: bench/*.png.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench import generate_bench, report, serve_bench
from bench.common import (
    BENCH_DIR,
    GITHUB_SPEC,
    OUT_DIR,
    ROOT,
    child_env,
    ensure_bench_node_modules,
    ensure_test_node_modules,
    machine_info,
    replace_section,
)
from bench.figures import BRIDGE, BRIDGE_CACHED, BRIDGE_SPEC, DIRECT, FASTMCP, FLOOR, OMG
from bench.github_repo import ARGS as REPO_ARGS
from bench.github_repo import PATH as REPO_PATH
from bench.serve_bench import CallCase, CallRun, ServeRun, Target, tool_named
from bench.visible import how_counted, model_visible_tokens, token_counter

RESULTS_MD = BENCH_DIR / "RESULTS.md"
SKELETON = """<!-- analysis:begin -->
<!-- analysis:end -->
"""
API_KEY = "bench-key-123"

SPECS: dict[str, dict[str, Any]] = {
    "petstore": {
        "path": ROOT / "specs" / "petstore.yaml",
        "base_path": "/v1",
        "cases": [CallCase("getPet", tool_named("getPet"), {"petId": 1}, "/v1/pets/1", "a pet, JSON")],
    },
    "github": {
        "path": GITHUB_SPEC,
        "base_path": "",
        "cases": [
            CallCase(
                "meta/get-zen",
                tool_named("meta/get-zen", "meta_get_zen", "metaget-zen"),
                {},
                "/zen",
                "no arguments, a line of text",
            ),
            CallCase(
                "repos/get",
                tool_named("repos/get"),
                dict(REPO_ARGS),
                REPO_PATH,
                "owner and repo, the spec's repository example (24 KB of JSON, bench/github_repo.py)",
            ),
        ],
    },
}


def _catalogue_env(package: Path, base_url: str) -> dict[str, str]:
    data = json.loads((package / "catalogue.json").read_text(encoding="utf-8"))
    prefix = data["env_prefix"]
    env = child_env(**{f"{prefix}_BASE_URL": base_url})
    for scheme in (data.get("security_schemes") or {}).values():
        for var in scheme.get("env") or []:
            if var["role"] not in ("client_id", "client_secret"):
                env[var["name"]] = API_KEY
    return env


def _spec_env(spec: Path) -> dict[str, str]:
    """Credentials for a spec served without a package: the names its in-memory catalogue reads."""
    from bench.common import fake_environ
    from bridge.serving.assemble import load_target

    catalogue, _ = load_target(str(spec))
    return child_env(**{k: API_KEY for k in fake_environ(catalogue)})


def compile_sources() -> None:
    """Byte-compile bridge/ and generator/ as ``pip install`` does: with PYTHONDONTWRITEBYTECODE set
    (as in some shells and CI), an edited module is compiled again at every start, and ``serve
    spec.json``'s first start paid about 0.13 s for it."""
    import compileall

    for folder in ("bridge", "generator"):
        compileall.compile_dir(str(ROOT / folder), quiet=1)


def cache_home(spec: str, label: str) -> Path:
    """The XDG cache folder a ``serve spec.json`` target runs with."""
    return OUT_DIR / "xdg" / spec / ("cached" if label == BRIDGE_CACHED else "first")


def prepare_cache(spec: str, target: Target, *, wait: float = 180.0) -> None:
    """Before a run: a first start finds no cache; a later start finds the entry of a first start
    that ran until the spec's background validation ended (a server's steady state: an entry
    written before validation ended has the later start validate again, in a child process)."""
    import shutil
    import subprocess

    first, cached = cache_home(spec, BRIDGE_SPEC), cache_home(spec, BRIDGE_CACHED)
    if target.label == BRIDGE_SPEC:
        shutil.rmtree(first, ignore_errors=True)
        return
    if target.label != BRIDGE_CACHED or _validated_entry(cached):
        return
    shutil.rmtree(cached, ignore_errors=True)
    # A first start into the cached target's folder, kept open until its entry says "validated".
    process = subprocess.Popen(
        target.cmd, env=target.env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and process.poll() is None and not _validated_entry(cached):
            time.sleep(0.2)
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _validated_entry(folder: Path) -> bool:
    for path in folder.rglob("*.json"):
        with path.open("rb") as file:
            head = file.readline()
        try:
            if json.loads(head).get("validated") is True:
                return True
        except ValueError:
            continue
    return False


def targets_for(label: str, upstream: str, *, peers: bool, package: bool = True) -> list[Target]:
    """The servers measured on one spec: the package, the spec served directly, and the peers."""
    from bench import peers as peer_setup

    spec = SPECS[label]
    base = upstream + spec["base_path"]
    cases = spec["cases"]
    json_spec = peer_setup.spec_as_json(spec["path"])
    out = []
    if package:
        folder = generate_bench.served_package(label)
        env = _catalogue_env(folder, base)
        out.append(Target(BRIDGE, [str(generate_bench.MCP_BRIDGE), "serve", str(folder)], env, calls=cases))
    else:
        env = _spec_env(json_spec)
    # the same spec document FastMCP gets, generated in memory at start; same environment as the package.
    # A first start has an empty catalogue cache (emptied before each run); a later one a filled cache.
    cmd = [str(generate_bench.MCP_BRIDGE), "serve", str(json_spec), "--base-url", base]
    out.append(Target(BRIDGE_SPEC, cmd, {**env, "XDG_CACHE_HOME": str(cache_home(label, BRIDGE_SPEC))}, calls=cases))
    cached_env = {**env, "XDG_CACHE_HOME": str(cache_home(label, BRIDGE_CACHED))}
    out.append(Target(BRIDGE_CACHED, cmd, cached_env, calls=cases))
    if not peers:
        return out
    python = peer_setup.fastmcp_python(install=False)
    if python is not None:
        script = peer_setup.fastmcp_server_script()
        env = child_env(BENCH_BASE_URL=base, BENCH_HEADERS=json.dumps({"X-API-Key": API_KEY}))
        env.pop("PYTHONPATH", None)
        out.append(Target(FASTMCP, [str(python), str(script), str(json_spec)], env, calls=cases))
    project, _ = peer_setup.omg_project(json_spec, install=False)
    if project is not None:
        env = child_env(API_BASE_URL=base)
        for name in peer_setup.omg_env(project):
            if name.startswith(("API_KEY", "BEARER")) or name.endswith("_TOKEN"):
                env[name] = API_KEY
        out.append(Target(OMG, ["node", str(project / "build" / "index.js")], env, cwd=project, calls=cases))
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


# ----------------------------------------------------------------------------------- main


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {"mcp-bridge": version("mcp-openapi-bridge"), "mcp": version("mcp"), "python": platform.python_version()}


def _row(run: ServeRun) -> dict[str, Any]:
    row = asdict(run)
    row["tool_list"] = []
    return row


def _floor_runs(data: dict[str, Any], upstream: Any, calls: int) -> None:
    """One run of the floors: the SDK's import, its constant-tool server, and direct httpx per call case."""
    seconds, mb = serve_bench.import_floor()
    data["import_floor_s"].append(seconds)
    data["import_floor_mb"].append(mb)
    floor = serve_bench.run(serve_bench.measure(serve_bench.floor_target(), calls=calls))
    for spec in data["specs"]:
        data["serve"][spec].setdefault(FLOOR, []).append(_row(floor))
        direct = ServeRun(DIRECT)
        for case in SPECS[spec]["cases"]:
            ms, cpu = serve_bench.run(serve_bench.measure_direct(upstream.url + case.direct, calls=calls))
            direct.calls[case.key] = CallRun(tool="GET " + case.direct, call_ms=ms, calls_per_s=1000 / ms, cpu_ms=cpu)
        data["serve"][spec].setdefault(DIRECT, []).append(_row(direct))


def _load() -> str:
    import os

    return " / ".join(f"{v:.1f}" for v in os.getloadavg())


def main(argv: Sequence[str] | None = None) -> int:
    import os

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
    compile_sources()
    ensure_test_node_modules()
    if peers:
        ensure_bench_node_modules()
    OUT_DIR.mkdir(parents=True, exist_ok=True)

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - start:6.0f} s] {message}", file=sys.stderr, flush=True)

    data: dict[str, Any] = {
        "quick": args.quick,
        "runs": runs,
        "calls": calls,
        "specs": specs,
        "cases": {s: [c.key for c in SPECS[s]["cases"]] for s in specs},
        "case_info": {
            s: [{"key": c.key, "direct": c.direct, "result": c.result} for c in SPECS[s]["cases"]] for s in specs
        },
        "machine": machine_info(),
        "cores": os.cpu_count(),
        "load": _load(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "versions": versions(),
        "peer_notes": prepare_peers(specs, install=not args.quick) if peers else {},
        "generate": [],
        "import_floor_s": [],
        "import_floor_mb": [],
        "serve": {s: {} for s in specs},
        "tokens": {},
    }
    log(f"peers: {data['peer_notes']}")
    from bench.github_repo import write_body
    from bench.peers import spec_as_json

    for spec in specs:
        path = SPECS[spec]["path"]
        log(f"generate {spec}")
        measured = generate_bench.measure(spec, path, spec_as_json(path), runs, peers=peers)
        data["generate"] += [asdict(r) for r in measured]
    counter = token_counter()
    data["token_method"] = how_counted(counter)
    repo_body = write_body(GITHUB_SPEC, OUT_DIR / "upstream" / "repo.json") if "github" in specs else None
    with serve_bench.Upstream(repo_body) as upstream:
        for i in range(runs):
            _floor_runs(data, upstream, calls)
            for spec in specs:
                for target in targets_for(spec, upstream.url, peers=peers):
                    log(f"run {i + 1}/{runs} {spec} {target.label}")
                    prepare_cache(spec, target)
                    stderr = OUT_DIR / f"serve-{spec}-{target.label.replace(' ', '_')}.stderr"
                    result = serve_bench.run(serve_bench.measure(target, calls=calls, keep_tools=i == 0, stderr=stderr))
                    if i == 0 and result.tool_list:
                        data["tokens"].setdefault(spec, {})[target.label] = model_visible_tokens(
                            result.tool_list, counter
                        )
                    data["serve"][spec].setdefault(target.label, []).append(_row(result))
                    calls_ = result.calls.items()
                    per_call = ", ".join(f"{k} {c.call_ms:.2f} ms {c.output} {c.error[:60]}" for k, c in calls_)
                    log(
                        f"  cold {result.cold_start_s:.2f} s, tools/list {result.tools_list_first_s * 1000:.0f} ms, "
                        f"RSS {result.rss_mb:.0f} MB {result.error[:100]}; {per_call}"
                    )
    data["seconds"] = time.perf_counter() - start
    data["load_end"] = _load()
    data["notes"] = [
        "- Cold start is measured from just before the process is spawned to the `initialize` answer; the "
        "SDK import floor is the same interpreter importing `mcp.server.lowlevel` and `mcp.server.stdio` only.",
        "- Peak RSS is VmHWM of the server process (for Node, of the process tree's largest member) read after "
        "the calls, so it includes tools/list and the per-call phase.",
        "- FastMCP is given an httpx client with the upstream as base URL (no output validation switched off); "
        "openapi-mcp-generator's project gets `API_BASE_URL`; `mcp-bridge serve spec.json` gets `--base-url` "
        "and the package's environment.",
        "- The fake upstream answers `repos/get` with the spec's own example `full-repository-default-response`, "
        "with `language: null` added where the example leaves out that required, nullable property (at the top "
        "level and in `source`): as printed in the spec it fails its own schema.",
    ]
    raw = OUT_DIR / f"{args.output.stem.lower()}.json"
    raw.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    report.plot(data, args.output.parent)
    replace_section(args.output, "results", report.render(data), SKELETON)
    log(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
