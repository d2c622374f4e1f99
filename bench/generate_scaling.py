"""Generation time against spec size: synthetic specs from 50 to 1,500 operations, and the corpus.

``python -m bench.generate_scaling [--runs 3] [--baseline DIR] [--no-corpus] [--rerender]``

Each figure is the median of ``--runs`` runs of ``generator.generate.generate`` in a fresh child
process (imports excluded, so the per-operation figure is not a startup cost spread thin). The
synthetic specs (bench/synthetic_spec.py) share one pool of 1,500 schemas with refs between them,
cycles, allOf/oneOf and heavy reuse. ``--baseline DIR`` also times the code in DIR
(a checkout of an older commit) on the same specs. Writes bench/GENERATE_SCALING.md and
bench/generate_scaling.png (when matplotlib is installed).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.common import BENCH_DIR, OUT_DIR, PYTHON, ROOT, github_spec, oas_example_specs
from bench.synthetic_spec import synthetic_spec

OPERATIONS = (0, 50, 100, 200, 500, 1000, 1500)  # 0: the pool alone, the fixed cost
POOL = 1500
TARGET_SECONDS = 10.0
CHILD_TIMEOUT = 1800
REPORT = BENCH_DIR / "GENERATE_SCALING.md"
PLOT = BENCH_DIR / "generate_scaling.png"
RAW = OUT_DIR / "generate_scaling.json"

# Runs in the child: time generate() on each spec, print one JSON line per run.
_CHILD = """
import json, sys, tempfile, time
from pathlib import Path
from generator.generate import generate
from generator.options import GenerateOptions
# An older checkout (the "before" column) still writes models/ unless told not to.
legacy = "models" in GenerateOptions.__dataclass_fields__
options = GenerateOptions(models=False) if legacy else GenerateOptions()
for spec in sys.argv[1:]:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        try:
            result = generate(spec, Path(out) / "pkg", options)
            ok, tools = True, len(result.api.operations)
        except Exception as exc:  # reported, not raised: one failing spec must not hide the others
            ok, tools = False, f"{type(exc).__name__}: {str(exc)[:200]}"
        print(json.dumps({"spec": spec, "seconds": time.perf_counter() - start, "ok": ok, "tools": tools}), flush=True)
"""


@dataclass
class Timing:
    label: str
    operations: int | None
    seconds: float  # median
    ok: bool
    note: str = ""

    @property
    def per_operation_ms(self) -> float | None:
        return 1000 * self.seconds / self.operations if self.operations else None

    def marginal_ms(self, fixed: Timing | None) -> float | None:
        """Milliseconds per operation above the spec with the same schemas and no operations."""
        if not self.operations or fixed is None or not fixed.ok or not self.ok:
            return None
        return 1000 * (self.seconds - fixed.seconds) / self.operations


def _time_specs(specs: list[Path], *, runs: int, code: Path) -> dict[str, list[dict[str, object]]]:
    """``runs`` timings of each spec, each run in a fresh child importing the generator from ``code``."""
    found: dict[str, list[dict[str, object]]] = {str(spec): [] for spec in specs}
    env = {**os.environ, "PYTHONPATH": str(code)}
    for _ in range(runs):
        child = subprocess.run(
            [PYTHON, "-c", _CHILD, *map(str, specs)],
            env=env,
            cwd=code,
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT,
            check=False,
        )
        for line in child.stdout.splitlines():
            row = json.loads(line)
            found[row["spec"]].append(row)
        if child.returncode != 0:
            print(child.stderr[-2000:], file=sys.stderr)
    return found


def _median(label: str, operations: int | None, rows: list[dict[str, object]]) -> Timing:
    if not rows:
        return Timing(label, operations, float("nan"), False, "no result")
    seconds = statistics.median(float(str(row["seconds"])) for row in rows)
    failed = [row for row in rows if not row["ok"]]
    note = str(failed[0]["tools"]) if failed else ""
    if operations is None and not failed:
        operations = int(str(rows[0]["tools"]))
    return Timing(label, operations, seconds, not failed, note)


def synthetic_specs() -> dict[int, Path]:
    folder = OUT_DIR / "scaling"
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for count in OPERATIONS:
        path = folder / f"synthetic-{count}ops-{POOL}schemas.json"
        path.write_text(json.dumps(synthetic_spec(count, POOL)), encoding="utf-8")
        paths[count] = path
    return paths


def measure_synthetic(runs: int, code: Path) -> list[Timing]:
    paths = synthetic_specs()
    found = _time_specs(list(paths.values()), runs=runs, code=code)
    return [_median(f"synthetic {count}", count, found[str(path)]) for count, path in paths.items()]


def measure_corpus(runs: int) -> list[Timing]:
    specs = [*oas_example_specs(), github_spec()]
    found = _time_specs([spec.path for spec in specs], runs=runs, code=ROOT)
    return [_median(spec.id, None, found[str(spec.path)]) for spec in specs]


def _cell(timing: Timing | None) -> str:
    if timing is None:
        return "-"
    if not timing.ok:
        return f"failed ({timing.note[:60]})"
    return f"{timing.seconds:.2f}"


def report(synthetic: list[Timing], baseline: list[Timing], corpus: list[Timing], runs: int, baseline_runs: int) -> str:
    before = {t.operations: t for t in baseline}
    fixed, old_fixed = next(iter(synthetic), None), next(iter(baseline), None)
    lines = [
        "# Generation time against spec size",
        "",
        f"`python -m bench.generate_scaling` (median of {runs} runs of `generate()` in a fresh process, imports",
        f"excluded). Synthetic specs: N operations over one pool of {POOL} schemas (bench/synthetic_spec.py: refs",
        "between schemas, cycles, allOf/oneOf with discriminator mappings, every operation using a few pool",
        "schemas). Machine: 2 shared cores, busy with other work while measured.",
        "",
        f'"Before" is the code before the one-pass compaction (median of {baseline_runs} run(s)).',
        "",
        '0 operations is the pool alone (loading, validating, writing: the fixed cost); "ms per operation" is',
        "the time above it divided by the operations, what each operation costs. Before, that cost also grew",
        "with the square of the definitions one tool schema carries (one pass over the whole schema per",
        "inlined definition; 445 s of 448 on a real spec), and exponentially with chains of reused schemas",
        "(tests/generator/shape/test_compact_scaling.py measures both).",
        "",
        "| operations | seconds | ms per operation | before: seconds | before: ms per operation |",
        "|---:|---:|---:|---:|---:|",
    ]
    for timing in synthetic:
        old = before.get(timing.operations)
        per, old_per = timing.marginal_ms(fixed), old.marginal_ms(old_fixed) if old else None
        per_cell = f"{per:.1f}" if per is not None else "-"
        old_cell = f"{old_per:.1f}" if old_per is not None else "-"
        lines.append(f"| {timing.operations} | {_cell(timing)} | {per_cell} | {_cell(old)} | {old_cell} |")
    if corpus:
        slow = sorted(corpus, key=lambda t: -t.seconds if t.ok else float("-inf"))
        over = [t for t in corpus if not t.ok or t.seconds > TARGET_SECONDS]
        lines += [
            "",
            f"## Corpus ({len(corpus)} specs, as `mcp-bridge generate` runs)",
            "",
            f"Over {TARGET_SECONDS:.0f} s or failed: {len(over)}. The slowest:",
            "",
            "| spec | tools | seconds |",
            "|---|---:|---:|",
        ]
        lines += [f"| {t.label} | {t.operations or '-'} | {_cell(t)} |" for t in slow[:8]]
        lines += [f"| {t.label} | - | {_cell(t)} |" for t in over if t not in slow[:8]]
    return "\n".join(lines) + "\n"


def plot(synthetic: list[Timing], baseline: list[Timing]) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for timings, name, style in ((synthetic, "now", "o-"), (baseline, "before", "s--")):
        fixed = next(iter(timings), None)
        good = [t for t in timings if t.ok and t.operations]
        if not good:
            continue
        left.plot([t.operations for t in good], [t.seconds for t in good], style, label=name)
        right.plot([t.operations for t in good], [t.marginal_ms(fixed) or 0.0 for t in good], style, label=name)
    left.set(xlabel="operations", ylabel="seconds", title=f"generate, {POOL} shared schemas")
    right.set(xlabel="operations", ylabel="ms per operation", title="time per operation, fixed cost taken off")
    right.set_ylim(bottom=0)
    for axes in (left, right):
        axes.grid(True, alpha=0.3)
        axes.legend()
    figure.tight_layout()
    figure.savefig(PLOT, dpi=100)
    plt.close(figure)
    return True


def rerender() -> None:
    """The report again from the raw figures of the last run (bench/out/generate_scaling.json)."""
    raw = json.loads(RAW.read_text(encoding="utf-8"))
    rows = {name: [Timing(**row) for row in raw[name]] for name in ("synthetic", "baseline", "corpus")}
    runs = raw.get("runs", 3), raw.get("baseline_runs", 1)
    REPORT.write_text(report(rows["synthetic"], rows["baseline"], rows["corpus"], *runs), encoding="utf-8")
    plot(rows["synthetic"], rows["baseline"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="a checkout of older code to time on the same specs")
    parser.add_argument("--baseline-runs", type=int, default=1, help="the old code can take minutes a run")
    parser.add_argument("--no-corpus", action="store_true")
    parser.add_argument("--rerender", action="store_true", help="rewrite the report from the last raw figures")
    args = parser.parse_args(argv)
    if args.rerender:
        rerender()
        return
    synthetic = measure_synthetic(args.runs, ROOT)
    baseline = measure_synthetic(args.baseline_runs, args.baseline) if args.baseline else []
    corpus = [] if args.no_corpus else measure_corpus(args.runs)
    RAW.parent.mkdir(parents=True, exist_ok=True)
    RAW.write_text(
        json.dumps(
            {
                name: [t.__dict__ for t in rows]
                for name, rows in (("synthetic", synthetic), ("baseline", baseline), ("corpus", corpus))
            },
            indent=1,
        ),
        encoding="utf-8",
    )
    REPORT.write_text(report(synthetic, baseline, corpus, args.runs, args.baseline_runs), encoding="utf-8")
    drawn = plot(synthetic, baseline)
    print(REPORT.read_text(encoding="utf-8"))
    print(f"wrote {REPORT}" + (f" and {PLOT}" if drawn else " (no plot: matplotlib is not installed)"))


if __name__ == "__main__":
    main()
