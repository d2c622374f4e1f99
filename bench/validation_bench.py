"""Validation bench: catastrophic patterns on 64 KB values, and the memory of a 20 MB argument.

    .venv/bin/python -m bench.validation_bench            # writes bench/VALIDATION.md
    .venv/bin/python -m bench.validation_bench --before /tmp/base-tree   # also measures an older tree

1. Every catastrophic pattern of ``tests/bridge/contract/test_patterns.py`` (the table the tests use) on
   a 64 KiB adversarial value, through ``ArgumentValidator.validate`` (the path a tool call takes):
   median and worst of 21 runs. Python's ``re`` on the first pattern at 16-24 characters is shown
   for scale (it grows four times for every two characters).
2. Peak RSS (VmHWM) of a ``mcp-bridge serve`` subprocess over stdio after one ``tools/call`` of
   ``generated/parameter_styles``'s ``upload`` tool with a 20 MB base64 ``file`` argument, and
   with a 20 MB plain ``caption`` string instead; a fresh server for each run (peak RSS only
   grows), three runs each, medians. The upstream is a closed loopback port, so each call ends
   in a connection error after the request was built: validation, decoding and multipart
   encoding are all measured. ``--max-argument-bytes 0`` lifts the cap for the run.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import BENCH_DIR, ROOT, kill_tree, machine_info, md_table, replace_section, vm_hwm_mb

REPORT = BENCH_DIR / "VALIDATION.md"
VALUE_BYTES = 64 * 1024
ARGUMENT_CHARS = 20_000_000
RUNS = 21
MEMORY_RUNS = 3
SKELETON = "# Validation bench\n\nWritten by `python -m bench.validation_bench` (see its docstring).\n"


def pattern_rows() -> list[list[str]]:
    from bridge.tools.errors import InvalidArgumentsError
    from bridge.tools.validation import ArgumentValidator
    from tests.bridge.contract.test_patterns import CATASTROPHIC

    rows = []
    for pattern, adversarial in CATASTROPHIC:
        value = adversarial(VALUE_BYTES)
        value = value[-VALUE_BYTES:] if len(value) > VALUE_BYTES else value
        schema = {"type": "object", "properties": {"v": {"type": "string", "pattern": pattern}}}
        validator = ArgumentValidator({"t": schema})
        try:  # the first call compiles the pattern (once per pattern per process): not timed
            validator.validate("t", {"v": "x"})
        except InvalidArgumentsError:
            pass
        times = []
        for _ in range(RUNS):
            start = time.perf_counter()
            try:
                validator.validate("t", {"v": value})
            except InvalidArgumentsError:
                pass
            times.append((time.perf_counter() - start) * 1000)
        shown = pattern if len(pattern) <= 48 else pattern[:45] + "..."
        rows.append([f"`{shown}`", f"{len(value):,}", f"{statistics.median(times):.3f}", f"{max(times):.3f}"])
    return rows


def python_re_rows() -> list[list[str]]:
    from tests.bridge.contract.test_patterns import CATASTROPHIC

    pattern, adversarial = CATASTROPHIC[0]
    rows = []
    for n in (16, 20, 24):
        start = time.perf_counter()
        re.search(pattern, adversarial(n))
        rows.append([str(n + 1), f"{(time.perf_counter() - start) * 1000:.1f}"])
    return rows


# ------------------------------------------------------------------------------------ memory


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def _answer(proc: subprocess.Popen[bytes], request_id: int) -> dict[str, Any]:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the server closed stdout")
        message = json.loads(line)
        if message.get("id") == request_id:
            return dict(message)


def peak_rss(tree: Path, arguments: dict[str, Any]) -> tuple[float, float, bool]:
    """(MB after initialize, peak MB after the call, whether the call was refused by validation)."""
    env = {k: v for k, v in os.environ.items() if not k.upper().endswith("_PROXY")}
    env["PYTHONPATH"] = str(tree)
    cmd = [sys.executable, "-m", "bridge", "serve", str(tree / "generated" / "parameter_styles")]
    cmd += ["--base-url", f"http://127.0.0.1:{_free_port()}"]
    if "--max-argument-bytes" in (tree / "bridge" / "cli.py").read_text(encoding="utf-8"):
        cmd += ["--max-argument-bytes", "0"]  # an older tree has no cap to lift
    proc = subprocess.Popen(
        cmd,
        cwd=tree,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _send(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "1"},
                },
            },
        )
        _answer(proc, 1)
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        idle = vm_hwm_mb(proc.pid) or float("nan")
        _send(
            proc,
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "upload", "arguments": arguments}},
        )
        result = _answer(proc, 2).get("result", {})
        peak = vm_hwm_mb(proc.pid) or float("nan")
        text = " ".join(c.get("text", "") for c in result.get("content", []))
        return idle, peak, "Invalid arguments" in text
    finally:
        kill_tree(proc)


def memory_rows(tree: Path, label: str) -> tuple[list[list[str]], float]:
    rng = random.Random(20261201)
    raw = rng.randbytes(ARGUMENT_CHARS * 3 // 4)
    cases = {
        "20 MB base64 `file`": {"file": base64.b64encode(raw).decode()},
        "20 MB plain `caption`": {"file": "QUFB", "caption": "c" * ARGUMENT_CHARS},
    }
    rows, peaks = [], []
    for name, arguments in cases.items():
        runs = [peak_rss(tree, arguments) for _ in range(MEMORY_RUNS)]
        idle = statistics.median(r[0] for r in runs)
        peak = statistics.median(r[1] for r in runs)
        peaks.append(peak)
        refused = "refused" if any(r[2] for r in runs) else "sent"
        rows.append([label, name, f"{idle:.0f}", f"{peak:.0f}", f"{peak - idle:.0f}", refused])
    return rows, peaks[0] / peaks[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="an older checkout to measure the same way (a git worktree)")
    options = parser.parse_args()

    patterns = pattern_rows()
    worst = max(float(r[2]) for r in patterns)
    memory, ratio = memory_rows(ROOT, "this tree")
    before_ratio = None
    if options.before is not None:
        rows, before_ratio = memory_rows(options.before.resolve(), "before")
        memory = rows + memory
    headers = ["tree", "argument", "RSS idle (MB)", "peak RSS (MB)", "growth (MB)", "call"]
    body = "\n\n".join(
        [
            f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {machine_info()}.",
            f"### Catastrophic patterns, 64 KiB adversarial values ({RUNS} runs, ms)\n\n"
            + md_table(["pattern", "value chars", "median", "worst"], patterns)
            + f"\n\nWorst median: **{worst:.3f} ms** (target: <= 10 ms).",
            "Python's `re` on the first pattern, for scale (one run, ms):\n\n"
            + md_table(["value chars", "ms"], python_re_rows()),
            f"### Peak RSS of one 20 MB argument over stdio (median of {MEMORY_RUNS} fresh servers)\n\n"
            + md_table(headers, memory, "llrrrl")
            + f"\n\nfile / plain peak: **{ratio:.2f}x** (target: <= 1.5x)"
            + (f"; before: {before_ratio:.2f}x." if before_ratio is not None else "."),
        ]
    )
    replace_section(REPORT, "validation", body, SKELETON)
    print(body)


if __name__ == "__main__":
    main()
