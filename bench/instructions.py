"""Instructions a call, counted by valgrind: the per-call cost without the machine's load in it.

    .venv/bin/python -m bench.instructions [--calls 200]

CPU time per call moves with the load of two shared cores (the same server measured 1.9 to 2.7 ms
between three runs); an instruction count does not: each server runs under ``valgrind
--tool=callgrind`` with instrumentation off, and for each call case of bench.run_all the window
of ``--calls`` calls (after warm-up calls) is counted alone (``callgrind_control --instr=on``, zero,
calls, dump). The SDK floor server, one pooled httpx GET (the direct floor) and mcp-bridge serving
the petstore and GitHub packages are counted the same way, in the same run, over stdio against the
same loopback upstream. Two counts of the same window agree within about 1%.

An instruction is not a fixed slice of time (memory-bound code such as JSON work runs fewer a
nanosecond), so the figures decide whether a change made the call cheaper and compare servers, and
the targets stay judged on CPU time. Needs Debian's valgrind; without it nothing is measured.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.common import OUT_DIR, PYTHON, StdioPeer, child_env
from bench.serve_bench import FLOOR_CASE, FLOOR_SERVER, CallCase, Upstream

CG_DIR = OUT_DIR / "callgrind"
DIRECT_KEY = "direct httpx"
FLOOR_KEY = "SDK floor server"

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


def available() -> bool:
    return shutil.which("valgrind") is not None and shutil.which("callgrind_control") is not None


def _valgrind(out: Path) -> list[str]:
    return ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", "--quiet"]


def _control(pid: int, *args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(pid)], capture_output=True, check=False, timeout=120)


def _counted(folder: Path, tag: str) -> int | None:
    """The instruction count of the dump named ``tag`` among ``folder``'s callgrind files."""
    trigger = f"desc: Trigger: dump {tag}\n"
    for path in folder.glob("cg.*"):
        text = path.read_text(encoding="utf-8", errors="replace")
        if trigger in text:
            for line in text.splitlines():
                if line.startswith("summary:"):
                    return int(line.split()[1])
    return None


class _Window:
    """Count the instructions of ``pid`` over one window (instrumentation on, zeroed, then dumped)."""

    def __init__(self, pid: int, folder: Path, tag: str) -> None:
        self.pid, self.folder, self.tag = pid, folder, tag

    def __enter__(self) -> _Window:
        _control(self.pid, "--instr=on")
        _control(self.pid, "-z")
        return self

    def __exit__(self, *exc: object) -> None:
        _control(self.pid, "-d", self.tag)
        _control(self.pid, "--instr=off")

    def count(self) -> int | None:
        for _ in range(100):  # the dump is written by the target; bounded wait for it
            found = _counted(self.folder, self.tag)
            if found is not None:
                return found
            time.sleep(0.05)
        return None


def _tag(*parts: str) -> str:
    return "-".join("".join(c if c.isalnum() else "_" for c in p) for p in parts)


async def count_server(
    label: str, cmd: Sequence[str], env: Mapping[str, str], cases: Sequence[CallCase], calls: int, warmup: int
) -> dict[str, float]:
    """Instructions per call of each case on one server (spawned under callgrind)."""
    folder = CG_DIR / _tag(label)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    out: dict[str, float] = {}
    peer = StdioPeer([*_valgrind(folder / "cg.%p"), *cmd], env=env, stderr=folder / "stderr")
    async with peer:
        await peer.initialize(timeout=900)
        tools, _ = await peer.list_tools_raw(timeout=900)
        assert peer.proc is not None
        for case in cases:
            name = case.find(tools)
            if name is None:
                continue
            params = {"name": name, "arguments": case.args}
            for _ in range(warmup):
                await peer.request("tools/call", params, timeout=600)
            window = _Window(peer.proc.pid, folder, _tag(label, case.key))
            with window:
                for _ in range(calls):
                    await peer.request("tools/call", params, timeout=600)
            count = window.count()
            if count is not None:
                out[case.key] = count / calls
    return out


def count_direct(url: str, calls: int, warmup: int) -> float | None:
    """Instructions per GET of one pooled httpx.AsyncClient (a child process under callgrind)."""
    folder = CG_DIR / _tag(DIRECT_KEY, url.rsplit("/", 1)[-1])
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    cmd = [*_valgrind(folder / "cg.%p"), PYTHON, "-c", DIRECT_LOOP, url, str(warmup)]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=child_env())
    assert proc.stdin is not None and proc.stdout is not None
    try:
        if proc.stdout.readline().strip() != "ready":
            return None
        window = _Window(proc.pid, folder, "direct")
        with window:
            proc.stdin.write(f"{calls}\n")
            proc.stdin.flush()
            if proc.stdout.readline().strip() != "done":
                return None
        count = window.count()
        return None if count is None else count / calls
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def count_all(calls: int, warmup: int = 20) -> dict[str, Any]:
    """``{"servers": {server: {case: instructions}}, ...}`` for the floors and the bridge's packages."""
    from bench import generate_bench
    from bench.common import GITHUB_SPEC
    from bench.github_repo import write_body
    from bench.run_all import SPECS, _catalogue_env

    data: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "load": " / ".join(f"{v:.1f}" for v in os.getloadavg()),
        "calls": calls,
        "servers": {},
    }
    if not available():
        data["error"] = "valgrind is not installed (Debian: apt-get install valgrind)"
        return data
    body = write_body(GITHUB_SPEC, OUT_DIR / "upstream" / "repo.json")
    with Upstream(body) as upstream:
        floor_cmd = [PYTHON, "-c", FLOOR_SERVER]
        data["servers"][FLOOR_KEY] = await count_server(FLOOR_KEY, floor_cmd, child_env(), [FLOOR_CASE], calls, warmup)
        direct: dict[str, float] = {}
        for spec in ("petstore", "github"):
            for case in SPECS[spec]["cases"]:
                count = count_direct(upstream.url + case.direct, calls, warmup)
                if count is not None:
                    direct[case.key] = count
            folder = generate_bench.served_package(spec)
            if not (folder / "catalogue.json").exists():
                continue
            env = _catalogue_env(folder, upstream.url + SPECS[spec]["base_path"])
            label = f"mcp-bridge {spec}"
            cmd = [PYTHON, "-m", "bridge", "serve", str(folder)]
            data["servers"][label] = await count_server(label, cmd, env, SPECS[spec]["cases"], calls, warmup)
        data["servers"][DIRECT_KEY] = direct
    data["load_end"] = " / ".join(f"{v:.1f}" for v in os.getloadavg())
    return data


def added(data: Mapping[str, Any], spec: str, case: str) -> tuple[float, float, float, float]:
    """(bridge, floor, direct, bridge - floor - direct) instructions a call; NaN where not counted."""
    nan = float("nan")
    servers = data.get("servers", {})
    bridge = servers.get(f"mcp-bridge {spec}", {}).get(case, nan)
    floor = servers.get(FLOOR_KEY, {}).get(FLOOR_CASE.key, nan)
    direct = servers.get(DIRECT_KEY, {}).get(case, nan)
    return bridge, floor, direct, bridge - floor - direct


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--output", type=Path, default=OUT_DIR / "instructions.json")
    ns = parser.parse_args(argv)
    data = asyncio.run(count_all(ns.calls))
    ns.output.parent.mkdir(parents=True, exist_ok=True)
    ns.output.write_text(json.dumps(data, indent=1), encoding="utf-8")
    for spec, case in (("petstore", "getPet"), ("github", "meta/get-zen"), ("github", "repos/get")):
        b, fl, d, extra = added(data, spec, case)
        m = [f"{v / 1e6:.3f}" for v in (b, fl, d, extra)]
        print(f"{spec} {case}: bridge {m[0]} M - floor {m[1]} - direct {m[2]} = {m[3]} M instructions a call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
