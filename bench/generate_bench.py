"""Generation time and peak RSS: ``mcp-bridge generate`` and the Node peer.

Each run is a fresh subprocess writing into an empty folder; wall time is spawn to exit, peak
RSS is the child's own ``ru_maxrss`` (``os.wait4``).
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.common import OUT_DIR, RunResult, child_env, run_measured

MCP_BRIDGE = Path(sys.executable).with_name("mcp-bridge")
GENERATE_TIMEOUT = 600


@dataclass
class GenerateRun:
    tool: str
    spec: str
    seconds: float
    peak_rss_mb: float
    ok: bool
    note: str = ""


def _fresh(folder: Path) -> Path:
    if folder.exists():
        shutil.rmtree(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    return folder


def bridge_generate(spec: Path, out: Path) -> RunResult:
    cmd = [str(MCP_BRIDGE), "generate", str(spec), "-o", str(_fresh(out))]
    return run_measured(cmd, env=child_env(), timeout=GENERATE_TIMEOUT)


def omg_generate(spec: Path, out: Path) -> RunResult:
    from bench.peers import omg_generate_cmd

    return run_measured(omg_generate_cmd(spec, _fresh(out)), timeout=GENERATE_TIMEOUT)


def measure(spec_label: str, spec: Path, json_spec: Path, runs: int, *, peers: bool) -> list[GenerateRun]:
    """``runs`` runs of each generator on one spec; the last bridge package stays in bench/out/pkg/."""
    out: list[GenerateRun] = []
    for i in range(runs):
        label = "mcp-bridge generate"
        result = bridge_generate(spec, OUT_DIR / "pkg" / spec_label)
        note = "" if result.returncode == 0 else result.stderr.decode(errors="replace")[-300:]
        out.append(GenerateRun(label, spec_label, result.seconds, result.peak_rss_mb, result.returncode == 0, note))
        print(
            f"  generate {spec_label} {label} run {i + 1}: {result.seconds:.2f} s {result.peak_rss_mb:.0f} MB",
            file=sys.stderr,
            flush=True,
        )
        if peers:
            result = omg_generate(json_spec, OUT_DIR / "omg-gen" / spec_label)
            note = "" if result.returncode == 0 else result.stderr.decode(errors="replace")[-300:]
            out.append(
                GenerateRun(
                    "openapi-mcp-generator 4.0.1",
                    spec_label,
                    result.seconds,
                    result.peak_rss_mb,
                    result.returncode == 0,
                    note,
                )
            )
    return out


def served_package(spec_label: str) -> Path:
    return OUT_DIR / "pkg" / spec_label
