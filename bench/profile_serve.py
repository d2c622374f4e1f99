"""Where each call case's server CPU goes, over stdio, beside the two floors measured in the same run.

    .venv/bin/python -m bench.profile_serve [--calls 2000] [--tag after] [--write]

For each server (the SDK floor server, and mcp-bridge serving the petstore and GitHub packages
bench.run_all generated) and each call case of bench.run_all: warm-up calls, then a window of
``--calls`` calls with no profiler (the server's CPU per call, all its threads), then a second
window of as many calls sampled by py-spy (``--gil``: a sample counts only the thread holding the
GIL, so a thread blocked in a read or the event loop waiting in its selector is not counted as
busy; a C function's time stays with the Python frame that called it; the process is paused for
each sample, as ``--nonblocking`` reads half-written coroutine stacks and loses their callers).
The samples only give the shares: each share is multiplied by the unprofiled CPU, so a table's
milliseconds add up to the measured figure. Unlike an instrumenting profiler, sampling does not
inflate code that makes many small calls; but it counts a thread the kernel preempted while it held
the GIL, so on two shared cores the code that runs right after the upstream answers (h11's parsing)
draws more than its share. The shares are a map; bench/instructions.py gives load-free totals.

Two views per case:

- **by package** (the sample's innermost Python frame): the SDK, pydantic, httpx, the event loop,
  each step of the bridge by module, the stdio transport's file workers (its other threads);
- **by step** (a sample counts for every named function on its stack): the bridge's argument
  validation, request building, credentials, send, result mapping, the SDK's result
  serialisation and response writing.

The direct-httpx floor (one pooled ``httpx.AsyncClient`` GETting the same URL) runs in a child
process sampled the same way. ``--write`` puts the tables into bench/RESULTS.md (section
``profile``) beside the committed ``before`` run (bench/profile_before.json, ``--save-before``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.common import BENCH_DIR, OUT_DIR, PYTHON, StdioPeer, child_env, fmt, md_table, replace_section
from bench.serve_bench import FLOOR_CASE, FLOOR_SERVER, CallCase, Upstream

PROFILE_DIR = OUT_DIR / "profile"
BEFORE_JSON = BENCH_DIR / "profile_before.json"
RESULTS_MD = BENCH_DIR / "RESULTS.md"

# bridge modules by the step of a call they serve (by module name, so a move into a subpackage keeps them)
BRIDGE_STEPS: dict[str, tuple[str, ...]] = {
    "bridge: argument validation": (
        "validation",
        "schema_validators",
        "schema_messages",
        "schema_defaults",
        "argument_size",
        "patterns",
        "formats",
        "ecma_regex",
    ),
    "bridge: request building": (
        "request",
        "build",
        "bodies",
        "files",
        "sendable",
        "wire_names",
        "path_template",
        "styles",
        "forms",
        "header_values",
        "bound",
        "wire_rules",
        "base_url",
        "multipart",
        "body_encoding",
    ),
    "bridge: credentials": ("credentials", "oauth_tokens", "token_exchange", "tls", "scopes", "client_auth"),
    "bridge: upstream send": (
        "upstream",
        "client",
        "limits",
        "retries",
        "retry",
        "redirects",
        "http_settings",
        "response_cap",
        "response_body",
        "bounded_decoder",
    ),
    "bridge: result (parse, redact, trim, output check)": (
        "results",
        "tool_result",
        "response_check",
        "trim_notes",
        "trim_fields",
        "trim",
        "trim_quick",
        "trim_walk",
        "trim_budget",
        "trim_schema",
        "redact",
        "redact_json",
        "redact_encodings",
        "json_text",
        "media_types",
        "schema_fast",
        "content",
        "status_errors",
        "scrub",
    ),
}
_BRIDGE_MODULE_STEP = {module: step for step, modules in BRIDGE_STEPS.items() for module in modules}
BRIDGE_GLUE = "bridge: dispatch (server, invoke, call core)"

PACKAGES: tuple[tuple[str, str], ...] = (
    ("/mcp_types/", "MCP SDK"),
    ("/mcp/", "MCP SDK"),
    ("/pydantic_core/", "pydantic"),
    ("/pydantic/", "pydantic"),
    ("/httpx/", "httpx + httpcore"),
    ("/httpcore/", "httpx + httpcore"),
    ("/h11/", "httpx + httpcore"),
    ("/anyio/", "event loop (asyncio, anyio)"),
    ("/sniffio/", "event loop (asyncio, anyio)"),
    ("/asyncio/", "event loop (asyncio, anyio)"),
    ("/opentelemetry/", "opentelemetry (SDK middleware)"),
    ("/logging/", "logging"),
    ("/json/", "json (stdlib)"),
    ("/jsonschema/", "jsonschema"),
    ("/referencing/", "jsonschema"),
    ("/ahocorasick", "bridge: result (parse, redact, trim, output check)"),
)

# Inclusive steps: (label, module name, function name); the first match of a function wins.
STEPS: tuple[tuple[str, str, str], ...] = (
    ("bridge tools/call handler (all below)", "handlers", "call_tool"),
    ("  argument validation", "validation", "validate"),
    ("  request building", "operation", "prepare"),
    ("  credentials", "operation", "authorize"),
    ("  send (bridge upstream + httpx)", "operation", "send"),
    ("  result: parse, redact, trim, output check", "operation", "to_result"),
    ("  result mapping (to_call_result)", "content", "to_call_result"),
    ("SDK: result serialisation (dump + per-version check)", "runner", "_serialize"),
    ("SDK: JSON-RPC response dump (stdout writer)", "stdio", "stdout_writer"),
    ("SDK: request parse (stdin reader)", "stdio", "stdin_reader"),
)


def package_of(filename: str) -> str:
    path = filename.replace("\\", "/")
    if "/bridge/" in path:
        return _BRIDGE_MODULE_STEP.get(_module(path), BRIDGE_GLUE)
    if "/bench/" in path:
        return "bench harness"
    for needle, label in PACKAGES:
        if needle in path:
            return label
    return "other (stdlib)"


def _module(filename: str) -> str:
    return Path(filename.replace("\\", "/")).stem


OTHER_THREADS = "other threads (stdio file workers)"
_THREAD_ROOTS = ("Thread._bootstrap", "_bootstrap (threading")


def parse_frame(frame: str) -> tuple[str, str]:
    """``("Class.func", "/path/file.py")`` of a py-spy frame ``Class.func (/path/file.py)`` (or ``...:line)``)."""
    name, _, rest = frame.partition(" (")
    filename = rest.rstrip(")").rsplit(":", 1)[0] if rest else ""
    return name, filename


def parse_raw(text: str) -> list[tuple[list[tuple[str, str]], int]]:
    """py-spy's raw (collapsed) output: each stack, outermost frame first, and its sample count."""
    out = []
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        out.append(([parse_frame(f) for f in stack.split(";")], int(count)))
    return out


def by_package(samples: Sequence[tuple[list[tuple[str, str]], int]]) -> dict[str, float]:
    """Samples by the package of the innermost frame; a worker thread's all count as the other threads."""
    out: dict[str, float] = defaultdict(float)
    for stack, count in samples:
        if stack and stack[0][0].startswith(_THREAD_ROOTS):
            out[OTHER_THREADS] += count
        elif stack:
            out[package_of(stack[-1][1])] += count
    return dict(out)


def by_step(samples: Sequence[tuple[list[tuple[str, str]], int]]) -> dict[str, float]:
    """Samples with each of :data:`STEPS` on their stack (0 when the function never ran)."""
    out = {label: 0.0 for label, _, _ in STEPS}
    for stack, count in samples:
        seen = {(_module(filename), name.rsplit(".", 1)[-1]) for name, filename in stack}
        for label, module, function in STEPS:
            if (module, function) in seen:
                out[label] += count
    return out


@dataclass
class CaseProfile:
    server: str
    case: str
    calls: int
    cpu_ms: float = float("nan")  # the whole process (all threads), unprofiled window
    samples: int = 0
    packages_ms: dict[str, float] = field(default_factory=dict)  # shares of cpu_ms
    steps_ms: dict[str, float] = field(default_factory=dict)
    error: str = ""


def _scaled(counts: Mapping[str, float], total: float, cpu_ms: float) -> dict[str, float]:
    return {k: cpu_ms * v / total for k, v in counts.items()} if total > 0 else {}


class Spy:
    """py-spy sampling one process (GIL holder only, full file names, by function) until stopped."""

    def __init__(self, pid: int, out: Path, rate: int) -> None:
        self.out = out
        out.unlink(missing_ok=True)
        self.proc = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("py-spy")),
                "record",
                "--pid",
                str(pid),
                "--rate",
                str(rate),
                "--format",
                "raw",
                "--full-filenames",
                "--function",
                "--gil",
                "-o",
                str(out),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    async def started(self) -> None:
        await asyncio.sleep(0.5)  # py-spy attaches within a few milliseconds; this keeps its start out of the window
        if self.proc.poll() is not None:
            raise RuntimeError(f"py-spy exited: {self.proc.stderr.read().decode(errors='replace')[-300:]}")  # type: ignore[union-attr]

    def stop(self) -> list[tuple[list[tuple[str, str]], int]]:

        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
        return parse_raw(self.out.read_text(encoding="utf-8")) if self.out.exists() else []


def _cpu(pid: int) -> float:
    import psutil

    root = psutil.Process(pid)
    return sum(t.user + t.system for t in (p.cpu_times() for p in [root, *root.children(recursive=True)]))


def _fill(run: CaseProfile, samples: Sequence[tuple[list[tuple[str, str]], int]]) -> None:
    total = sum(count for _, count in samples)
    run.samples = total
    run.packages_ms = _scaled(by_package(samples), total, run.cpu_ms)
    run.steps_ms = _scaled(by_step(samples), total, run.cpu_ms)


async def _profile_server(
    label: str,
    cmd: Sequence[str],
    env: Mapping[str, str],
    cases: Sequence[CallCase],
    calls: int,
    warmup: int,
    rate: int,
) -> list[CaseProfile]:
    PROFILE_DIR.mkdir(parents=True, exist_ok=True)
    stem = label.replace(" ", "_").replace("/", "_")
    out: list[CaseProfile] = []
    peer = StdioPeer(cmd, env=env, stderr=PROFILE_DIR / f"{stem}.stderr")
    async with peer:
        await peer.initialize(timeout=300)
        tools, _ = await peer.list_tools_raw(timeout=300)
        assert peer.proc is not None
        pid = peer.proc.pid
        for case in cases:
            run = CaseProfile(label, case.key, calls)
            out.append(run)
            name = case.find(tools)
            if name is None:
                run.error = "tool not found"
                continue
            params = {"name": name, "arguments": case.args}
            first = await peer.request("tools/call", params, timeout=60)
            if first.get("isError"):
                run.error = "isError: " + json.dumps(first.get("content"))[:200]
            for _ in range(warmup):
                await peer.request("tools/call", params, timeout=60)
            before = _cpu(pid)
            for _ in range(calls):
                await peer.request("tools/call", params, timeout=60)
            run.cpu_ms = 1000 * (_cpu(pid) - before) / calls
            spy = Spy(pid, PROFILE_DIR / f"{stem}-{case.key.replace('/', '_')}.txt", rate)
            await spy.started()
            for _ in range(calls):
                await peer.request("tools/call", params, timeout=60)
            _fill(run, spy.stop())
    return out


DIRECT_LOOP = """
import asyncio, sys, httpx
async def main(url, warmup):
    async with httpx.AsyncClient(trust_env=False) as client:
        for _ in range(warmup):
            (await client.get(url)).raise_for_status()
        print("ready", flush=True)
        for line in sys.stdin:
            for _ in range(int(line)):
                (await client.get(url)).raise_for_status()
            print("done", flush=True)
asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


async def _profile_direct(url: str, calls: int, warmup: int, rate: int) -> CaseProfile:
    """One pooled httpx.AsyncClient GETting ``url`` in a child process: the HTTP request's own floor."""
    run = CaseProfile("direct httpx", url, calls)
    proc = subprocess.Popen(
        [PYTHON, "-c", DIRECT_LOOP, url, str(warmup)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "ready"

        def window() -> None:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(f"{calls}\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == "done"

        before = _cpu(proc.pid)
        window()
        run.cpu_ms = 1000 * (_cpu(proc.pid) - before) / calls
        spy = Spy(proc.pid, PROFILE_DIR / "direct.txt", rate)
        await spy.started()
        window()
        _fill(run, spy.stop())
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    return run


def _targets(upstream_url: str) -> list[tuple[str, list[str], dict[str, str], list[CallCase]]]:
    from bench import generate_bench
    from bench.run_all import SPECS, _catalogue_env

    out: list[tuple[str, list[str], dict[str, str], list[CallCase]]] = [
        ("SDK floor server", [PYTHON, "-c", FLOOR_SERVER], child_env(), [FLOOR_CASE])
    ]
    for label in ("petstore", "github"):
        folder = generate_bench.served_package(label)
        if not (folder / "catalogue.json").exists():
            raise SystemExit(f"{folder}: no package; run `python -m bench.run_all` (or generate it) first")
        env = _catalogue_env(folder, upstream_url + SPECS[label]["base_path"])
        out.append(
            (f"mcp-bridge {label}", [str(generate_bench.MCP_BRIDGE), "serve", str(folder)], env, SPECS[label]["cases"])
        )
    return out


async def profile_all(calls: int, warmup: int, rate: int) -> dict[str, Any]:
    from bench.common import GITHUB_SPEC
    from bench.github_repo import write_body
    from bench.run_all import SPECS

    body = write_body(GITHUB_SPEC, OUT_DIR / "upstream" / "repo.json")
    data: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "load": " / ".join(f"{v:.1f}" for v in os.getloadavg()),
        "calls": calls,
        "commit": _commit(),
        "runs": [],
    }
    with Upstream(body) as upstream:
        for label, cmd, env, cases in _targets(upstream.url):
            print(f"profiling {label}", file=sys.stderr, flush=True)
            for run in await _profile_server(label, cmd, env, cases, calls, warmup, rate):
                data["runs"].append(asdict(run))
        for spec in ("petstore", "github"):
            for case in SPECS[spec]["cases"]:
                run = await _profile_direct(upstream.url + case.direct, calls, warmup, rate)
                run.case = case.key
                data["runs"].append(asdict(run))
    data["load_end"] = " / ".join(f"{v:.1f}" for v in os.getloadavg())
    return data


def _commit() -> str:
    import subprocess

    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    return out.stdout.strip()


# ------------------------------------------------------------------------------------ the table


def _find(data: Mapping[str, Any], server: str, case: str) -> Mapping[str, Any] | None:
    return next((r for r in data["runs"] if r["server"] == server and r["case"] == case), None)


CASES = (("petstore", "getPet"), ("github", "meta/get-zen"), ("github", "repos/get"))


def _order(rows: Iterable[str], first: Sequence[str]) -> list[str]:
    rows = list(rows)
    return [r for r in first if r in rows] + sorted(r for r in rows if r not in first)


PACKAGE_ORDER = (
    "MCP SDK",
    "pydantic",
    "event loop (asyncio, anyio)",
    "opentelemetry (SDK middleware)",
    "httpx + httpcore",
    BRIDGE_GLUE,
    *BRIDGE_STEPS,
    "jsonschema",
    "json (stdlib)",
    "logging",
    "other (stdlib)",
    OTHER_THREADS,
)


def _header(after: Mapping[str, Any], before: Mapping[str, Any] | None) -> str:
    def one(name: str, d: Mapping[str, Any]) -> str:
        return f"{name}: {d['date']} at {d['commit']}, load {d['load']} -> {d['load_end']}"

    runs = [one("before", before)] if before else []
    return "; ".join([*runs, one("after", after)])


def render(after: Mapping[str, Any], before: Mapping[str, Any] | None) -> str:
    """The per-call profile tables: for each case, before and after, by package and by step."""
    lines = [
        "## Per-call profile: where each call case's server CPU goes",
        "",
        f"`python -m bench.profile_serve` (bench/profile_serve.py), {after['calls']} calls a window; "
        f"{_header(after, before)}. Server CPU ms per call (all threads, a window without the profiler), "
        "split by the shares of py-spy samples taken over a second window of as many calls (a C "
        "function's time stays with the Python code that called it). The SDK floor server and direct "
        "httpx are measured and sampled the same way in the same run.",
        "",
    ]
    for spec, case in CASES:
        server = f"mcp-bridge {spec}"
        columns = [("before", before), ("after", after)] if before else [("after", after)]
        runs = [
            (name, _find(d, server, case), _find(d, "SDK floor server", FLOOR_CASE.key), _find(d, "direct httpx", case))
            for name, d in columns
            if d
        ]
        lines += [f"### {spec} `{case}`", ""]
        headers = ["where (by package)"]
        for name, *_ in runs:
            headers += [f"bridge {name}", f"floor server {name}", f"direct httpx {name}"]
        names: set[str] = set()
        for _, *measured in runs:
            for r in measured:
                names |= set((r or {}).get("packages_ms", {}))
        rows: list[list[str]] = []
        for package in _order(names, PACKAGE_ORDER):
            row = [package]
            for _, *measured in runs:
                row += [fmt((r or {}).get("packages_ms", {}).get(package, 0.0), 3) for r in measured]
            rows.append(row)
        total = ["**total CPU ms/call**"]
        added = ["**bridge - floor - direct**"]
        for _, *measured in runs:
            total += [f"**{fmt((r or {}).get('cpu_ms', float('nan')), 3)}**" for r in measured]
            b, fl, d = ((r or {}).get("cpu_ms", float("nan")) for r in measured)
            added += [f"**{fmt(b - fl - d, 3)}**", "", ""]
        samples = ["samples"]
        for _, *measured in runs:
            samples += [str((r or {}).get("samples", 0)) for r in measured]
        lines += [md_table(headers, [*rows, total, added, samples]), ""]
        step_rows = [
            [label.strip(), *[fmt((b or {}).get("steps_ms", {}).get(label, float("nan")), 3) for _, b, _, _ in runs]]
            for label, _, _ in STEPS
        ]
        lines += [md_table(["bridge, by step (inclusive)", *[name for name, *_ in runs]], step_rows), ""]
    lines += _instructions_table(after, before)
    return "\n".join(lines)


def _instructions_table(after: Mapping[str, Any], before: Mapping[str, Any] | None) -> list[str]:
    """Instructions a call (bench/instructions.py): the same comparison with the load taken out."""
    from bench.instructions import added

    pairs = (("before", before), ("after", after))
    runs = [(name, d["instructions"]) for name, d in pairs if d and d.get("instructions")]
    if not runs:
        return []
    out = [
        "### Instructions a call (valgrind), all three cases",
        "",
        "Counted by bench/instructions.py: each server under callgrind, a window of "
        + " / ".join(f"{name} {d['calls']}" for name, d in runs)
        + " calls after warm-up, the floors counted the same way in the same run. Millions of instructions; "
        "the count of a window repeats within about 1% whatever the load, so this is where a change shows.",
        "",
    ]
    headers = ["case", *[f"{what} {name}" for name, _ in runs for what in ("bridge", "floor + direct", "added")]]
    rows = []
    for spec, case in CASES:
        row = [f"{spec} `{case}`"]
        for _, d in runs:
            bridge, floor, direct, extra = added(d, spec, case)
            row += [fmt(bridge / 1e6, 3), fmt((floor + direct) / 1e6, 3), f"**{fmt(extra / 1e6, 3)}**"]
        rows.append(row)
    return [*out, md_table(headers, rows), ""]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rate", type=int, default=1000, help="py-spy samples a second")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--tag", default="after")
    parser.add_argument("--save-before", action="store_true", help="keep this run as bench/profile_before.json")
    parser.add_argument("--write", action="store_true", help="write the tables into bench/RESULTS.md")
    parser.add_argument("--from-json", type=Path, default=None, help="render a saved run instead of measuring")
    parser.add_argument("--no-instructions", action="store_true", help="no valgrind counts")
    ns = parser.parse_args(argv)
    if ns.from_json:
        data = json.loads(ns.from_json.read_text(encoding="utf-8"))
    else:
        data = asyncio.run(profile_all(ns.calls, ns.warmup, ns.rate))
        if not ns.no_instructions:
            from bench.instructions import count_all

            data["instructions"] = asyncio.run(count_all(200))
        PROFILE_DIR.mkdir(parents=True, exist_ok=True)
        (PROFILE_DIR / f"{ns.tag}.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    if ns.save_before:
        BEFORE_JSON.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    before = (
        json.loads(BEFORE_JSON.read_text(encoding="utf-8")) if BEFORE_JSON.exists() and not ns.save_before else None
    )
    text = render(data, before)
    if ns.write:
        replace_section(RESULTS_MD, "profile", text, "")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
