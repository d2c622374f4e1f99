"""Server CPU per call of two commits' bridges, alternated in one run: a before and after on shared cores.

    .venv/bin/python -m bench.cpu_ab BASE_COMMIT [--calls 2000] [--rounds 5]

The base commit's ``bridge`` and ``generator`` are extracted (``git archive``) into a temporary
folder; each round serves the petstore and GitHub packages bench.run_all generated
(bench/out/pkg/) once with that code and once with this worktree's, in alternating order, over
stdio against the same loopback upstream, and reads each server's CPU time (user and system, all
threads) over ``--calls`` calls of each call case after warm-up. CPU time on two shared cores moves
with the load, so the rounds interleave the two and the medians are compared; bench/instructions.py
gives load-free counts. Nothing is written to the reports.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench.common import GITHUB_SPEC, OUT_DIR, PYTHON, ROOT, StdioPeer

WARMUP = 100


def _cpu(pid: int) -> tuple[float, float]:
    import psutil

    times = psutil.Process(pid).cpu_times()
    return times.user, times.system


async def _measure(code: Path, spec: str, upstream_url: str, calls: int) -> dict[str, tuple[float, float]]:
    """(user, system) CPU ms per call of each call case of ``spec``, served by the bridge in ``code``."""
    from bench import generate_bench
    from bench.run_all import SPECS, _catalogue_env

    folder = generate_bench.served_package(spec)
    env = _catalogue_env(folder, upstream_url + SPECS[spec]["base_path"])
    env["PYTHONPATH"] = str(code)
    # cwd too: ``python -m`` puts the working directory first on sys.path
    cmd = [PYTHON, "-m", "bridge", "serve", str(folder)]
    peer = StdioPeer(cmd, env=env, stderr=OUT_DIR / f"cpu_ab-{spec}.stderr", cwd=code)
    out: dict[str, tuple[float, float]] = {}
    async with peer:
        await peer.initialize(timeout=300)
        tools, _ = await peer.list_tools_raw(timeout=300)
        assert peer.proc is not None
        for case in SPECS[spec]["cases"]:
            params = {"name": case.find(tools), "arguments": case.args}
            for _ in range(WARMUP):
                await peer.request("tools/call", params, timeout=60)
            user, system = _cpu(peer.proc.pid)
            for _ in range(calls):
                await peer.request("tools/call", params, timeout=60)
            user2, system2 = _cpu(peer.proc.pid)
            out[case.key] = (1000 * (user2 - user) / calls, 1000 * (system2 - system) / calls)
    return out


async def compare(base: Path, calls: int, rounds: int) -> dict[str, dict[str, list[tuple[float, float]]]]:
    from bench.github_repo import write_body
    from bench.serve_bench import Upstream

    variants = {"before": base, "after": ROOT}
    runs: dict[str, dict[str, list[tuple[float, float]]]] = {name: {} for name in variants}
    body = write_body(GITHUB_SPEC, OUT_DIR / "upstream" / "repo.json")
    with Upstream(body) as upstream:
        for round_ in range(rounds):
            order = list(variants) if round_ % 2 == 0 else list(variants)[::-1]
            for name in order:
                for spec in ("petstore", "github"):
                    for key, cpu in (await _measure(variants[name], spec, upstream.url, calls)).items():
                        runs[name].setdefault(key, []).append(cpu)
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="the commit to compare this worktree with")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    ns = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cpu_ab-") as tmp:
        archive = subprocess.run(["git", "archive", ns.base, "bridge", "generator"], cwd=ROOT, capture_output=True)
        archive.check_returncode()
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        runs = asyncio.run(compare(Path(tmp), ns.calls, ns.rounds))
    for key in runs["after"]:
        cells = [key]
        for name, by_case in runs.items():
            cpu = by_case[key]
            total = statistics.median(u + s for u, s in cpu)
            spread = ", ".join(f"{u + s:.3f}" for u, s in cpu)
            cells.append(f"{name} {total:.3f} ms (user {statistics.median(u for u, _ in cpu):.3f}; runs {spread})")
        print(" | ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
